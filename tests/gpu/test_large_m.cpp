// Calls whose m*n is past 2^31-1 (a long prefill through a wide layer): bmm_fp8 and the linear
// layer run them as several calls on whole rows (include/fp8gemm/row_chunks.h). Sampled outputs on
// both sides of each part's boundary against the float64 reference.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "fp8gemm/row_chunks.h"
#include "core/device_buffer.h"
#include "core/fp8_codec.h"
#include "fp8gemm/verify.h"
#include "gpu_test_util.h"

namespace fp8gemm {
namespace {

using testing::test_context;

constexpr int64_t kM = 37450, kN = 57344, kK = 1024;  // m*n = 2,147,532,800

struct Inputs {
  std::vector<uint8_t> a, w;  // A [m, k] (or x quantized), W [n, k]
};

Inputs random_codes(uint64_t seed) {
  Inputs in;
  in.a.resize(size_t(kM * kK));
  in.w.resize(size_t(kN * kK));
  std::mt19937_64 rng(seed);
  // Codes of magnitude 2^-3 .. 2^3 of either sign (no NaN): a random byte with the exponent bits
  // forced into a narrow range.
  for (auto* v : {&in.a, &in.w})
    for (uint8_t& c : *v) c = uint8_t((rng() & 0x87) | (0x28 + ((rng() % 6) << 3)));
  return in;
}

// out[r][c] against a_scale * w_scale * sum_k A[r][k] W[c][k] for rows about every part boundary.
void check_samples(const Inputs& in, const std::vector<uint16_t>& rows_out, const std::vector<int64_t>& rows,
                   const std::vector<int64_t>& cols, float scale, bool fast_accum) {
  Problem p;
  p.m = kM, p.n = kN, p.k = kK;
  const Tolerance tol = Tolerance::for_problem(p, fast_accum);
  size_t bad = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < cols.size(); ++j) {
      double sum = 0, abs_sum = 0;
      for (int64_t k = 0; k < kK; ++k) {
        const double t = double(fp8_decode(in.a[size_t(rows[i] * kK + k)], DType::kE4M3)) *
                         fp8_decode(in.w[size_t(cols[j] * kK + k)], DType::kE4M3);
        sum += t;
        abs_sum += std::fabs(t);
      }
      const double got = bf16_to_float(rows_out[i * cols.size() + j]);
      const double allowed = tol.out_rtol * std::fabs(sum * scale) + tol.acc_tol * abs_sum * scale + 1e-30;
      if (!(std::fabs(got - sum * scale) <= allowed)) {
        if (bad++ < 5) ADD_FAILURE() << "row " << rows[i] << " col " << cols[j] << ": " << got << " vs " << sum * scale;
      }
    }
  EXPECT_EQ(bad, 0u);
}

// The rows each side of every part boundary, and the first and last.
std::vector<int64_t> boundary_rows() {
  const int64_t part = max_call_rows(kN, kK);
  std::vector<int64_t> rows = {0, 1};
  for (int64_t r = part; r < kM; r += part) rows.insert(rows.end(), {r - 1, r, r + 1});
  rows.insert(rows.end(), {kM - 2, kM - 1});
  return rows;
}

std::vector<uint16_t> download_rows(const DeviceBuffer& out, const std::vector<int64_t>& rows,
                                    const std::vector<int64_t>& cols) {
  std::vector<uint16_t> row(static_cast<size_t>(kN)), picked;
  for (int64_t r : rows) {
    FP8GEMM_CUDA_CHECK(cudaMemcpy(row.data(), static_cast<const uint16_t*>(out.get()) + r * kN, size_t(kN) * 2,
                                  cudaMemcpyDeviceToHost));
    for (int64_t c : cols) picked.push_back(row[size_t(c)]);
  }
  return picked;
}

TEST(LargeM, BmmFp8RunsItAsPartsOnWholeRows) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = test_context();
  ASSERT_TRUE(splits_rows(testing::problem(kM, kN, kK)));
  const Inputs in = random_codes(7);
  DeviceBuffer da(in.a.size()), dw(in.w.size()), dout(size_t(kM * kN) * 2), ds(16);
  da.upload(in.a.data(), in.a.size());
  dw.upload(in.w.data(), in.w.size());
  const float scales[2] = {0.5f, 0.25f};
  ds.upload(scales, sizeof scales);
  FP8GEMM_CUDA_CHECK(cudaMemset(dout.get(), 0xFF, dout.bytes()));
  BmmFp8Args args;
  args.a = da.get(), args.b = dw.get(), args.out = dout.get();
  args.a_scale = ds.as<float>(), args.b_scale = ds.as<float>() + 1;
  args.m = kM, args.n = kN, args.k = kK;
  bmm_fp8(args, nullptr, "auto", &ctx);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<int64_t> rows = boundary_rows(), cols = {0, 1, 4097, kN - 1};
  check_samples(in, download_rows(dout, rows, cols), rows, cols, 0.125f, true);
}

TEST(LargeM, TheLinearLayerQuantizesAllOfXThenRunsTheParts) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = test_context();
  const Inputs in = random_codes(8);
  // x = the codes' values in bf16 with a static scale of 1: quantizing gives the codes back.
  std::vector<uint16_t> x(in.a.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = float_to_bf16(fp8_decode(in.a[i], DType::kE4M3));
  DeviceBuffer dx(x.size() * 2), dw(in.w.size()), dout(size_t(kM * kN) * 2), ds(16),
      scratch(linear_scratch_bytes(kM, kK, ActivationScale::kStatic, ctx.device().sm_count));
  dx.upload(x.data(), dx.bytes());
  dw.upload(in.w.data(), in.w.size());
  const float scales[2] = {1.0f, 0.25f};
  ds.upload(scales, sizeof scales);
  FP8GEMM_CUDA_CHECK(cudaMemset(dout.get(), 0xFF, dout.bytes()));
  LinearArgs args;
  args.x = dx.get(), args.w = dw.get(), args.out = dout.get(), args.scratch = scratch.get();
  args.x_scale = ds.as<float>(), args.w_scale = ds.as<float>() + 1;
  args.m = kM, args.n = kN, args.k = kK;
  args.scale = ActivationScale::kStatic;
  linear_fp8(args, nullptr, "auto", &ctx);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<int64_t> rows = boundary_rows(), cols = {0, 2, 30000, kN - 1};
  check_samples(in, download_rows(dout, rows, cols), rows, cols, 0.25f, true);
}

}  // namespace
}  // namespace fp8gemm
