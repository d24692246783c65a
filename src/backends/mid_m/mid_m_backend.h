// mid_m: hand-written Hopper (sm_90a) GEMM kernels for 33 <= M <= 256 in the swapped orientation
// (weights on the wgmma's M side, the activation rows on its N side), with a TMA ring, warp
// specialization, split-K through DSMEM and activation multicast; see docs/mid_m.md.
#pragma once

#include <memory>

#include "fp8gemm/backend.h"

namespace fp8gemm {

std::unique_ptr<Backend> make_mid_m_backend(const DeviceInfo& device, const BackendOptions& options);

}  // namespace fp8gemm
