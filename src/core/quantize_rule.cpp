#include "core/quantize_rule.h"

#include <cmath>

#include "fp8gemm/check.h"
#include "core/fp8_codec.h"

namespace fp8gemm {

namespace {

float element(const void* x, DType t, size_t i) {
  const uint16_t bits = static_cast<const uint16_t*>(x)[i];
  return t == DType::kBF16 ? bf16_to_float(bits) : fp16_to_float(bits);
}

void require_16bit(DType t) {
  FP8GEMM_REQUIRE(t == DType::kBF16 || t == DType::kFP16, kInvalidArgument,
                  "the activations to quantize must be bf16 or fp16, got ", t);
}

}  // namespace

float scale_of_amax(float amax) {
  const float clamped = std::isnan(amax) || amax > kMinAmax ? amax : kMinAmax;
  return clamped / kE4M3Max;
}

float amax_reference(const void* x, DType x_type, size_t count) {
  require_16bit(x_type);
  float amax = 0;
  for (size_t i = 0; i < count; ++i) {
    const float a = std::fabs(element(x, x_type, i));
    if (std::isnan(a)) return a;
    if (a > amax) amax = a;
  }
  return amax;
}

float dynamic_scale_reference(const void* x, DType x_type, size_t count) {
  return scale_of_amax(amax_reference(x, x_type, count));
}

void quantize_reference(const void* x, DType x_type, size_t count, float scale, uint8_t* out) {
  require_16bit(x_type);
  for (size_t i = 0; i < count; ++i) out[i] = fp8_encode(element(x, x_type, i) / scale, DType::kE4M3);
}

}  // namespace fp8gemm
