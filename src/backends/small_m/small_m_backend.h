// small_m: a hand-written decode GEMM for M <= 32 (no CUTLASS). The weights stream once from
// HBM in the swapped orientation (weights on the MMA's M side, the few activation rows on its N
// side): v2 through 16-byte loads into fp16 mma.sync (any GPU with FP8 conversion), v3 through a
// TMA ring into native FP8 wgmma (sm_90a only); see docs/small_m.md.
#pragma once

#include <memory>

#include "fp8gemm/backend.h"

namespace fp8gemm {

std::unique_ptr<Backend> make_small_m_backend(const DeviceInfo& device, const BackendOptions& options);

}  // namespace fp8gemm
