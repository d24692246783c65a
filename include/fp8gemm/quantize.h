// The linear layer's activation quantization on its own (docs/linear.md "Numerics"): bf16/fp16
// x to e4m3 codes with one per-tensor scale, static (the scale read from device memory) or dynamic
// (max(amax(|x|), 1e-12) / 448 computed on the GPU and written to device memory: no host sync).
// The GPU kernels and the host references below compute the same codes bit for bit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "fp8gemm/context.h"
#include "fp8gemm/linear.h"
#include "fp8gemm/types.h"

namespace fp8gemm {

struct QuantizeArgs {
  const void* x = nullptr;  // `count` bf16/fp16 values, 16-byte aligned, device memory
  float* scale = nullptr;   // device scalar: read (kStatic) or written (kDynamic)
  void* out = nullptr;      // `count` e4m3 codes, 8-byte aligned, device memory
  // Device scratch of quantize_scratch_bytes(count, scale_kind, ...) bytes, 16-byte aligned; may be
  // null when that is 0 (always for kStatic).
  void* scratch = nullptr;
  int64_t count = 0;  // a multiple of 8
  DType x_type = DType::kBF16;
  ActivationScale scale_kind = ActivationScale::kStatic;
};

// Bytes of QuantizeArgs::scratch for `count` values on a GPU of `sm_count` SMs.
size_t quantize_scratch_bytes(int64_t count, ActivationScale scale_kind, int sm_count);

// Checks the arguments (Error(kInvalidArgument) naming the argument and the rule, before any GPU
// work), then enqueues the quantization on `stream`, on default_context() when ctx is null.
// Allocates nothing, never synchronizes, legal inside CUDA-graph capture; the pointers are taken as
// device memory of ctx's GPU (not asked of the driver). count == 0 writes nothing but, for
// kDynamic, the scale of an empty x (1e-12 / 448).
void quantize_fp8(const QuantizeArgs& args, cudaStream_t stream = nullptr, Context* ctx = nullptr);

// The same on the host, for `count` bf16/fp16 values: the dynamic scale of x, and x's e4m3 codes
// for a scale. Error(kInvalidArgument) when x_type is not bf16 or fp16.
float dynamic_scale_reference(const void* x, DType x_type, size_t count);
void quantize_reference(const void* x, DType x_type, size_t count, float scale, uint8_t* out);

}  // namespace fp8gemm
