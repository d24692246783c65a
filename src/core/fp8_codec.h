// Host FP8 codec (OCP FP8: e4m3fn and e5m2) and 16-bit float helpers, for building test data
// and references. Encoding rounds to nearest even and saturates: finite values beyond the
// largest finite magnitude (and, for e5m2, infinities) become +-max; NaN stays NaN.
#pragma once

#include <cstdint>

#include "fp8gemm/types.h"

namespace fp8gemm {

struct Fp8Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  float max_finite;     // 448 (e4m3fn), 57344 (e5m2)
  uint8_t max_code;     // code of +max_finite
  uint8_t nan_code;     // canonical positive NaN
  bool has_infinity;    // e5m2 only
};

const Fp8Format& fp8_format(DType t);  // throws for non-FP8 types

float fp8_decode(uint8_t code, DType t);
uint8_t fp8_encode(float x, DType t);

float bf16_to_float(uint16_t bits);
uint16_t float_to_bf16(float x);  // round to nearest even
float fp16_to_float(uint16_t bits);
uint16_t float_to_fp16(float x);  // round to nearest even

// Decodes an element of any library dtype stored at `data[i]`.
double decode_element(const void* data, size_t i, DType t);

}  // namespace fp8gemm
