// The floor: what `auto` runs when nothing better is known (no selector, or the selector has no
// opinion), and what the tuner must beat. One rule for the Context and the tuner alike.
#pragma once

#include <string>
#include <vector>

#include "fp8gemm/backend.h"

namespace fp8gemm {

// The first available backend, in `backends` order (cuBLASLt leads), whose own default_tactic()
// runs `p` (cuBLASLt: its heuristic's first algorithm). Never a backend's tactics()[0]. Throws
// Error(kUnsupported) with each backend's reason when none can.
Tactic floor_choice(const std::vector<Backend*>& backends, const Problem& p);

// The backend named `name` (canonical), or nullptr.
Backend* find_backend(const std::vector<Backend*>& backends, const std::string& name);

}  // namespace fp8gemm
