// small_m: a hand-written decode GEMM for M <= 32 (no CUTLASS). The weights stream once from
// HBM through 16-byte loads into FP8 mma.sync in the swapped orientation (weights on the MMA's
// M side, the few activation rows on its N side); see docs/perf/small_m.md.
#pragma once

#include <memory>

#include "fp8gemm/backend.h"
#include "fp8gemm/context.h"

namespace fp8gemm {

std::unique_ptr<Backend> make_small_m_backend(const DeviceInfo& device, const ContextOptions& options);

}  // namespace fp8gemm
