// Argument validation (docs/design.md "Semantics"). The pointer inspector is injectable so that
// the table-driven test of every rule runs on machines without a GPU.
#pragma once

#include <functional>

#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/linear.h"

namespace fp8gemm {

struct PointerInfo {
  enum class Kind { kDevice, kManaged, kHost, kUnregistered } kind = Kind::kUnregistered;
  int device = -1;
};
using PointerInspector = std::function<PointerInfo(const void*)>;

// cudaPointerGetAttributes; never leaves a CUDA error pending.
PointerInfo inspect_cuda_pointer(const void* ptr);

// What validate(args, device, placement) asks: the driver (inspect_cuda_pointer), or for
// kOnDevice nothing, every pointer taken as device memory of `device`.
PointerInspector pointer_inspector(PointerPlacement placement, const DeviceInfo& device);

// max_call_rows, require_one_call and validate_problem are public (fp8gemm/fp8gemm.h); a larger m
// runs as several calls on whole rows (fp8gemm/row_chunks.h).

// Everything: validate_problem, then (for a non-empty problem) every pointer rule.
Problem validate(const BmmFp8Args& args, const DeviceInfo& device, const PointerInspector& inspect);

// The linear layer's rules (include/fp8gemm/linear.h): the GEMM on its quantized activations
// (scratch) as validate() checks it, with the bias, then x's dtype and the pointers the GEMM does
// not see. Returns the layer's problem: that GEMM with the quantization as its prologue.
Problem validate(const LinearArgs& args, const DeviceInfo& device, const PointerInspector& inspect);

}  // namespace fp8gemm
