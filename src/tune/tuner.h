// The pieces of `auto` that do not depend on the cache: the floor and the default.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "fp8gemm/backend.h"
#include "measure/timer.h"
#include "runtime/floor.h"
#include "tune/default_table.h"

namespace fp8gemm::tuning {

using TimerFactory = std::function<std::unique_ptr<Timer>()>;

// The floor, the Context's own fallback (runtime/floor.h): what the tuner's choice must beat.
using fp8gemm::floor_choice;
using fp8gemm::find_backend;

// The adaptive form of floor_choice(p) (Backend::adaptive_default of the backend whose default
// is the floor, e.g. "cublaslt:heuristic"): at every M it runs that M's floor. nullopt when that
// backend has none or it cannot run `p`; never throws.
std::optional<Tactic> adaptive_floor(const std::vector<Backend*>& backends, const Problem& p);

// The default table's tactic when it covers `p` and its backend can run it, else the floor.
Tactic default_choice(const std::vector<Backend*>& backends, const std::vector<DefaultRule>& rules,
                      const Problem& p);

// The table's tactic only (nullopt when not covered or its backend cannot run it).
std::optional<Tactic> checked_table_choice(const std::vector<Backend*>& backends,
                                           const std::vector<DefaultRule>& rules, const Problem& p);

// Whether one of `backends` is available and can run `t` on `p` (false also when asking throws).
bool can_run(const std::vector<Backend*>& backends, const Problem& p, const Tactic& t);

}  // namespace fp8gemm::tuning
