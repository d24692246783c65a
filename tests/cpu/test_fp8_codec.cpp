// The host FP8 codec over all 256 codes of each format, against an independent formula (the
// OCP FP8 definition written out directly) and against CUDA's own host conversions.
#include <gtest/gtest.h>

#include <cuda_fp8.h>

#include <cmath>
#include <random>

#include "core/fp8_codec.h"

namespace fp8gemm {
namespace {

// Independent decode: value = (-1)^s * 2^(e - bias) * (1 + m / 2^M), subnormals 2^(1-bias) * m/2^M.
double formula(int code, int ebits, int mbits, bool ieee_special) {
  const int s = (code >> 7) & 1, e = (code >> mbits) & ((1 << ebits) - 1), m = code & ((1 << mbits) - 1);
  const int bias = (1 << (ebits - 1)) - 1;
  const int emax = (1 << ebits) - 1;
  double v;
  if (ieee_special && e == emax) v = m == 0 ? INFINITY : NAN;        // e5m2: IEEE-like
  else if (!ieee_special && e == emax && m == (1 << mbits) - 1) v = NAN;  // e4m3fn: only S1111111
  else if (e == 0) v = std::pow(2.0, 1 - bias) * (m / std::pow(2.0, mbits));
  else v = std::pow(2.0, e - bias) * (1 + m / std::pow(2.0, mbits));
  return s ? -v : v;
}

struct Format {
  DType type;
  int ebits, mbits;
  bool ieee;
  double max;
};
const Format kFormats[] = {{DType::kE4M3, 4, 3, false, 448.0}, {DType::kE5M2, 5, 2, true, 57344.0}};

TEST(Fp8Codec, DecodeMatchesFormulaForAll256Codes) {
  for (const Format& f : kFormats)
    for (int c = 0; c < 256; ++c) {
      const double want = formula(c, f.ebits, f.mbits, f.ieee);
      const double got = fp8_decode(uint8_t(c), f.type);
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << to_string(f.type) << " code " << c;
      else EXPECT_EQ(got, want) << to_string(f.type) << " code " << c;
    }
}

TEST(Fp8Codec, EncodeOfEveryFiniteCodeRoundTrips) {
  for (const Format& f : kFormats)
    for (int c = 0; c < 256; ++c) {
      const float v = fp8_decode(uint8_t(c), f.type);
      if (!std::isfinite(v)) continue;
      EXPECT_EQ(fp8_encode(v, f.type), uint8_t(c)) << to_string(f.type) << " value " << v;
    }
}

// Brute force: the nearest finite code, ties to the even (last mantissa bit 0) code.
uint8_t nearest_even(float x, const Format& f) {
  int best = -1;
  double best_err = INFINITY;
  for (int c = 0; c < 256; ++c) {
    const double v = formula(c, f.ebits, f.mbits, f.ieee);
    if (!std::isfinite(v) || (v == 0 && std::signbit(v) != std::signbit(x))) continue;
    const double err = std::fabs(v - double(x));
    if (err < best_err || (err == best_err && (c & 1) == 0 && (best & 1) == 1)) {
      best = c;
      best_err = err;
    }
  }
  return uint8_t(best);
}

TEST(Fp8Codec, EncodeRoundsToNearestEvenAgainstBruteForce) {
  std::mt19937 rng(7);
  for (const Format& f : kFormats) {
    std::uniform_real_distribution<float> mag(-std::log2(float(f.max)) - 12, std::log2(float(f.max)));
    for (int i = 0; i < 20000; ++i) {
      const float x = (i & 1 ? -1.f : 1.f) * std::exp2(mag(rng));
      EXPECT_EQ(fp8_encode(x, f.type), nearest_even(x, f)) << to_string(f.type) << " x=" << x;
    }
    // Exact midpoints between neighbouring codes must go to the even code.
    for (int c = 0; c + 1 < 128; ++c) {
      const double lo = formula(c, f.ebits, f.mbits, f.ieee), hi = formula(c + 1, f.ebits, f.mbits, f.ieee);
      if (!std::isfinite(hi)) break;
      const float mid = float((lo + hi) / 2);
      EXPECT_EQ(fp8_encode(mid, f.type), uint8_t((c & 1) ? c + 1 : c)) << to_string(f.type) << " mid " << mid;
    }
  }
}

TEST(Fp8Codec, SaturatesAndKeepsNaN) {
  for (const Format& f : kFormats) {
    const uint8_t max_code = fp8_encode(float(f.max), f.type);
    EXPECT_EQ(fp8_decode(max_code, f.type), f.max);
    EXPECT_EQ(fp8_encode(float(f.max) * 4, f.type), max_code);
    EXPECT_EQ(fp8_encode(INFINITY, f.type), max_code);
    EXPECT_EQ(fp8_encode(-INFINITY, f.type), uint8_t(max_code | 0x80));
    EXPECT_TRUE(std::isnan(fp8_decode(fp8_encode(NAN, f.type), f.type)));
    EXPECT_EQ(fp8_encode(-0.0f, f.type), 0x80);
    EXPECT_EQ(fp8_encode(1e-30f, f.type), 0x00);  // underflow to +0
  }
}

TEST(Fp8Codec, AgreesWithCudaHostConversions) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0, 50);
  for (int i = 0; i < 20000; ++i) {
    const float x = normal(rng) * (i % 7 == 0 ? 1000.f : 1.f);
    EXPECT_EQ(fp8_encode(x, DType::kE4M3), __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)) << x;
    EXPECT_EQ(fp8_encode(x, DType::kE5M2), __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2)) << x;
  }
}

TEST(Fp16Bf16, RoundTripAndRounding) {
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(fp16_to_float(float_to_fp16(-2.5f)), -2.5f);
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 1.0f / 256)), 1.0f);  // tie to even
  EXPECT_EQ(fp16_to_float(float_to_fp16(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isnan(bf16_to_float(0xFFFF)));  // the poison pattern is NaN
  EXPECT_TRUE(std::isnan(fp16_to_float(0xFFFF)));
}

}  // namespace
}  // namespace fp8gemm
