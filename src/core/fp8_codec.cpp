#include "core/fp8_codec.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "fp8gemm/check.h"

namespace fp8gemm {

namespace {
constexpr Fp8Format kE4M3{4, 3, 7, 448.0f, 0x7E, 0x7F, false};
constexpr Fp8Format kE5M2{5, 2, 15, 57344.0f, 0x7B, 0x7F, true};
}  // namespace

const Fp8Format& fp8_format(DType t) {
  if (t == DType::kE4M3) return kE4M3;
  if (t == DType::kE5M2) return kE5M2;
  FP8GEMM_FAIL(kInvalidArgument, "fp8_format: ", to_string(t), " is not an FP8 type");
}

float fp8_decode(uint8_t code, DType t) {
  const Fp8Format& f = fp8_format(t);
  const int sign = code >> 7;
  const int exp_field = (code >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int mant = code & ((1 << f.mantissa_bits) - 1);
  const int exp_max = (1 << f.exponent_bits) - 1;
  float mag;
  if (f.has_infinity && exp_field == exp_max) {
    mag = mant == 0 ? INFINITY : NAN;
  } else if (!f.has_infinity && exp_field == exp_max && mant == (1 << f.mantissa_bits) - 1) {
    mag = NAN;  // e4m3fn: only S.1111.111 is NaN, the rest of the top binade is finite
  } else if (exp_field == 0) {
    mag = std::ldexp(float(mant), 1 - f.bias - f.mantissa_bits);
  } else {
    mag = std::ldexp(float(mant + (1 << f.mantissa_bits)), exp_field - f.bias - f.mantissa_bits);
  }
  return sign ? -mag : mag;
}

uint8_t fp8_encode(float x, DType t) {
  const Fp8Format& f = fp8_format(t);
  if (std::isnan(x)) return f.nan_code;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const double a = std::fabs(double(x));
  if (a >= f.max_finite) return sign | f.max_code;  // saturate (also +-inf)
  if (a == 0) return sign;
  // Quantum (spacing of representable values) in a's binade; subnormals share the smallest.
  const int min_exp = 1 - f.bias;
  const int e = std::max(int(std::floor(std::log2(a))), min_exp);
  double q = std::ldexp(1.0, e - f.mantissa_bits);
  double r = std::nearbyint(a / q) * q;  // default rounding mode: to nearest, ties to even
  if (r >= f.max_finite) return sign | f.max_code;
  if (r == 0) return sign;
  // Re-derive the fields from the rounded value (it may have moved up a binade).
  int er = int(std::floor(std::log2(r)));
  if (er < min_exp) {
    return sign | uint8_t(r / std::ldexp(1.0, min_exp - f.mantissa_bits));
  }
  const int mant = int(r / std::ldexp(1.0, er - f.mantissa_bits)) - (1 << f.mantissa_bits);
  return sign | uint8_t(((er + f.bias) << f.mantissa_bits) | mant);
}

float bf16_to_float(uint16_t bits) {
  uint32_t u = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t float_to_bf16(float x) {
  return __nv_bfloat16_raw(__float2bfloat16_rn(x)).x;
}

float fp16_to_float(uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

uint16_t float_to_fp16(float x) {
  return __half_raw(__float2half_rn(x)).x;
}

double decode_element(const void* data, size_t i, DType t) {
  switch (t) {
    case DType::kE4M3:
    case DType::kE5M2: return fp8_decode(static_cast<const uint8_t*>(data)[i], t);
    case DType::kBF16: return bf16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::kFP16: return fp16_to_float(static_cast<const uint16_t*>(data)[i]);
  }
  return NAN;
}

}  // namespace fp8gemm
