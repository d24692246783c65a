#pragma once

#include <memory>

#include "fp8gemm/backend.h"

namespace fp8gemm {

// CUTLASS 3.x SM90 FP8 kernels (backends/cutlass/configs.def): every compiled config that can
// run a problem is a tactic named "cutlass:sm90_<schedule>_<tile>_c<cluster>[_swap][_streamk][_acc32]".
// Available on compute capability 9.0 (the kernels are sm_90a only).
std::unique_ptr<Backend> make_cutlass_backend(const DeviceInfo& device, const BackendOptions& options);

}  // namespace fp8gemm
