// The FP8 linear layer: bf16/fp16 activations in, bf16/fp16 out, on an FP8 weight with one scale.
//
//   out[m, n] = e4m3(x / x_scale) @ W[n, k]^T * x_scale * w_scale (+ bias[n])
//
// x is quantized per tensor by fp8gemm's own kernel (docs/linear.md "Numerics": x / x_scale in
// float32, round to nearest even, saturating at +-448), static (x_scale given, as FP8 checkpoints
// calibrate it) or dynamic (x_scale = max(amax(|x|), 1e-12) / 448 computed on the GPU and written
// to x_scale: no host sync); then the FP8 GEMM of `auto` (or the named backend/tactic) with the bias
// in its epilogue, added in float32 before the output is rounded. The quantization kernel lets the
// GEMM launch while it runs (programmatic dependent launch), so a GEMM that prefetches its weights
// (small_m, CUTLASS's _pdl kernels) streams them meanwhile.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fp8gemm/context.h"
#include "fp8gemm/device.h"
#include "fp8gemm/types.h"

namespace fp8gemm {

enum class ActivationScale : uint8_t {
  kStatic,   // x_scale is read (a calibrated scale)
  kDynamic,  // x_scale is written: max(amax(|x|), 1e-12) / 448 of this call's x
};
const char* to_string(ActivationScale s);  // "static", "dynamic"

struct LinearArgs {
  const void* x = nullptr;    // [m, k] bf16/fp16, row-major
  const void* w = nullptr;    // [n, k] FP8 (the weight as stored), row-major
  const float* w_scale = nullptr;  // device scalar
  float* x_scale = nullptr;   // device scalar: read (kStatic) or written (kDynamic)
  const void* bias = nullptr; // [n] of out_type, optional
  void* out = nullptr;        // [m, n] out_type, row-major
  // Device scratch of linear_scratch_bytes(m, k, ...) bytes: the quantized activations (and the
  // dynamic path's partial maxima). Nothing is allocated per call.
  void* scratch = nullptr;
  int64_t m = 0, n = 0, k = 0;
  DType x_type = DType::kBF16, w_type = DType::kE4M3, out_type = DType::kBF16;
  ActivationScale scale = ActivationScale::kStatic;
};

// Bytes of LinearArgs::scratch for an [m, k] x (the FP8 copy, 256-byte padded, then the dynamic
// path's partial maxima); `sm_count` of the device that runs it.
size_t linear_scratch_bytes(int64_t m, int64_t k, ActivationScale scale, int sm_count);

// Checks every rule (docs/linear.md "Arguments") without touching the GPU's work queue and returns
// the layer's problem: the GEMM on its quantized activations, with the quantization as its
// prologue (Problem::prologue; its tuning key is the layer's). Throws Error(kInvalidArgument)
// naming the argument and the rule.
Problem validate(const LinearArgs& args, const DeviceInfo& device,
                 PointerPlacement pointers = PointerPlacement::kAskDriver);

// The layer problem (its tuning key, what `auto` chooses for) of GEMM problem `gemm` as `layer`
// spells it: "static" or "dynamic" (the activation scale, the activations of gemm's output type),
// either with "+bias", or "bias" alone for the GEMM with a bias epilogue; "" returns gemm. Throws
// Error(kInvalidArgument) naming the rule for another spelling, or for a layer whose gemm's A is
// not e4m3 (the layer quantizes to e4m3). The CLI's --layer and Python's layer= use it.
Problem with_layer(Problem gemm, const std::string& layer);

// Validates, chooses the GEMM's tactic ("auto", a backend name, or a tactic name; with a bias only
// backends with a bias epilogue qualify), then enqueues the quantization and the GEMM on `stream`.
// Uses default_context() when ctx is null. Allocates nothing, never synchronizes, legal inside
// CUDA-graph capture. m == 0 enqueues nothing, except that a dynamic x_scale is written with the
// scale of an empty x (1e-12 / 448). `pointers`: as validate's.
void linear_fp8(const LinearArgs& args, cudaStream_t stream = nullptr, const std::string& backend = "auto",
                Context* ctx = nullptr, PointerPlacement pointers = PointerPlacement::kAskDriver);

}  // namespace fp8gemm
