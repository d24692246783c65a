// small_m: hand-written decode GEMM kernels for M <= 32 on sm_90a (no CUTLASS). The weights stream
// once from HBM in the swapped orientation (weights on the MMA's M side, the few activation rows on
// its N side) through a shared-memory ring into native FP8 wgmma; the kernel families and their
// options are in small_m_config.h; see docs/small_m.md.
#pragma once

#include <memory>

#include "fp8gemm/backend.h"

namespace fp8gemm {

std::unique_ptr<Backend> make_small_m_backend(const DeviceInfo& device, const BackendOptions& options);

}  // namespace fp8gemm
