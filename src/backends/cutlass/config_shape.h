// A CUTLASS config's geometry in the problem's terms (Backend::tactic_shape). Apart from config.h,
// which the kernels include, so that the backend interface stays out of their compiles.
#pragma once

#include "backends/cutlass/config.h"
#include "fp8gemm/backend.h"

namespace fp8gemm::cutlass_backend {

// Swapped, the kernel's M side runs along our N.
TacticShape shape_of(const KernelConfig& c);

}  // namespace fp8gemm::cutlass_backend
