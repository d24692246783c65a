// The linear layer's activation quantization on the GPU: bf16/fp16 x to e4m3 with a per-tensor
// scale, static (read from device memory) or dynamic (computed from amax(|x|), written to device
// memory), bit for bit the rule of core/quantize_rule.h. Uses core only.
//
// Every kernel is launched with programmatic dependent launch: it lets the next kernel on the
// stream (the GEMM) launch at once, so that the GEMM's blocks request their weights while this one
// runs, and it reads x only after the kernel before it has finished. A GEMM that reads the FP8
// activations must wait for this kernel's completion before it does (griddepcontrol.wait, or a
// launch without PDL).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "fp8gemm/types.h"

namespace fp8gemm::quantize {

// Elements per vector: 16 bytes of bf16/fp16 in, 8 bytes of e4m3 out. count must be a multiple.
inline constexpr int64_t kVector = 8;

// How the dynamic path runs `count` elements: one block that holds x in registers (one kernel,
// one pass; up to 32 Ki elements), or partial maxima and then the quantization (two kernels).
struct DynamicPlan {
  bool one_kernel = true;
  int blocks = 1;   // 1, or the partial maxima's blocks
  int vectors = 0;  // one kernel: 16-byte vectors each thread holds (1, 2 or 4)
};
DynamicPlan dynamic_plan(int64_t count, int sm_count);

// Device scratch the dynamic path needs beside its output (the partial maxima), in bytes.
size_t dynamic_scratch_bytes(int64_t count, int sm_count);

// The layout every launch requires, checked on the host before it launches (Error(kInvalidArgument)
// naming the argument): x bf16 or fp16, count a non-negative multiple of kVector, x 16-byte and out
// 8-byte aligned.
void require_layout(const void* x, DType x_type, int64_t count, const void* out);

// out[i] = e4m3(x[i] / *scale), i < count. x and out 16- and 8-byte aligned.
void launch_static(const void* x, DType x_type, int64_t count, const float* scale, void* out, int sm_count,
                   cudaStream_t stream);

// *scale = max(amax(|x|), 1e-12) / 448, then out as launch_static. `scratch`: dynamic_scratch_bytes,
// 16-byte aligned (unused on the one-kernel path). count == 0 writes the scale of an empty x
// (1e-12 / 448).
void launch_dynamic(const void* x, DType x_type, int64_t count, float* scale, void* out, void* scratch,
                    int sm_count, cudaStream_t stream);

}  // namespace fp8gemm::quantize
