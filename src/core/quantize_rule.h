// The linear layer's activation quantization, on the host: the reference that the GPU kernels
// (src/quantize) and fp8gemm.scaling in Python compute bit for bit (docs/linear.md "Numerics").
//
//   dynamic scale = max(amax(|x|), 1e-12) / 448        (float32; NaN anywhere in x gives NaN)
//   x_fp8 = e4m3(x / scale)                            (float32 division, round to nearest even,
//                                                       saturating at +-448; NaN stays NaN)
#pragma once

#include <cstddef>
#include <cstdint>

#include "fp8gemm/quantize.h"
#include "fp8gemm/types.h"

namespace fp8gemm {

inline constexpr float kE4M3Max = 448.0f;
// An all-zero tensor still gets a positive scale: never a division by zero.
inline constexpr float kMinAmax = 1e-12f;

// The scale of an amax (|x| of the largest magnitude, NaN if x holds one).
float scale_of_amax(float amax);

// amax(|x|) of `count` bf16/fp16 values, NaN when one of them is NaN (0 for none).
float amax_reference(const void* x, DType x_type, size_t count);

// dynamic_scale_reference (scale_of_amax(amax_reference(...))) and quantize_reference are public
// (fp8gemm/quantize.h).

}  // namespace fp8gemm
