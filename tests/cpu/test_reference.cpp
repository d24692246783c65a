// The float64 reference GEMM and the accuracy check that every tactic must pass.
#include <gtest/gtest.h>

#include <cmath>

#include "core/fp8_codec.h"
#include "fp8gemm/verify.h"

namespace fp8gemm {
namespace {

Problem small(int64_t b, int64_t m, int64_t n, int64_t k) {
  Problem p;
  p.batch = b, p.m = m, p.n = n, p.k = k;
  return p;
}

TEST(Reference, MatchesHandComputedBatchedProduct) {
  const Problem p = small(2, 2, 16, 16);
  HostInputs in = random_inputs(p, 3);
  in.a_scale = 0.5f;
  in.b_scale = 4.0f;
  const Reference ref = reference_gemm(p, in);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t m = 0; m < 2; ++m)
      for (int64_t n = 0; n < 16; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < 16; ++k)
          acc += double(fp8_decode(in.a[(b * 2 + m) * 16 + k], p.a_type)) *
                 double(fp8_decode(in.b[(b * 16 + n) * 16 + k], p.b_type));
        EXPECT_DOUBLE_EQ(ref.out[(b * 2 + m) * 16 + n], 2.0 * acc);
      }
}

TEST(Reference, RandomInputsAreNotZeroAndChangeWithSeed) {
  const Problem p = small(1, 8, 32, 64);
  const HostInputs x = random_inputs(p, 1), y = random_inputs(p, 2);
  size_t zeros = 0;
  for (uint8_t v : x.a) zeros += (v & 0x7F) == 0;
  EXPECT_LT(zeros, x.a.size() / 10);
  EXPECT_NE(x.a, y.a);
  EXPECT_NE(x.b, y.b);
}

std::vector<uint16_t> to_bits(const Problem& p, const std::vector<double>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = p.out_type == DType::kBF16 ? float_to_bf16(float(v[i])) : float_to_fp16(float(v[i]));
  return out;
}

TEST(Check, ExactResultRoundedToOutputPasses) {
  for (DType o : {DType::kBF16, DType::kFP16}) {
    Problem p = small(1, 17, 64, 256);
    p.out_type = o;
    const Reference ref = reference_gemm(p, random_inputs(p, 5));
    const CheckResult r = check_output(p, to_bits(p, ref.out), ref, Tolerance::for_problem(p, false));
    EXPECT_TRUE(r.ok) << r.to_string();
    EXPECT_LE(r.worst_ratio, 1.0);
  }
}

TEST(Check, DetectsPoisonWrongElementMissingKTileAndWrongScale) {
  const Problem p = small(1, 16, 64, 512);
  const HostInputs in = random_inputs(p, 9);
  const Reference ref = reference_gemm(p, in);
  const Tolerance tol = Tolerance::for_problem(p, true);

  auto poisoned = to_bits(p, ref.out);
  poisoned[123] = 0xFFFF;  // one unwritten element
  EXPECT_FALSE(check_output(p, poisoned, ref, tol).ok);

  auto wrong = to_bits(p, ref.out);
  wrong[7] = float_to_bf16(float(ref.out[8]));  // another element's value
  EXPECT_FALSE(check_output(p, wrong, ref, tol).ok);

  // Drop the last 32 of 512 K values (one k-tile of a tensor-core instruction).
  Problem short_k = p;
  HostInputs cut = in;
  for (int64_t r = 0; r < p.m; ++r)
    for (int64_t k = 480; k < 512; ++k) cut.a[r * 512 + k] = 0;
  EXPECT_FALSE(check_output(p, to_bits(p, reference_gemm(short_k, cut).out), ref, tol).ok);

  std::vector<double> scaled = ref.out;
  for (double& v : scaled) v *= 1.02;  // a 2% scale error
  EXPECT_FALSE(check_output(p, to_bits(p, scaled), ref, tol).ok);
}

}  // namespace
}  // namespace fp8gemm
