#include "fp8gemm/verify.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

#include "core/fp8_codec.h"

namespace fp8gemm {

HostInputs random_inputs(const Problem& p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Normal values with unit-ish spread: most mass over ~6 binades, well inside FP8 range.
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> scale(0.5f, 2.0f);
  HostInputs in;
  in.a.resize(size_t(p.batch * p.m * p.k));
  in.b.resize(size_t(p.batch * p.n * p.k));
  for (auto& v : in.a) v = fp8_encode(normal(rng), p.a_type);
  for (auto& v : in.b) v = fp8_encode(normal(rng), p.b_type);
  in.a_scale = scale(rng);
  in.b_scale = scale(rng);
  if (p.bias) {
    // Of the outputs' own size (sqrt(k) for unit-normal operands), so that a lost bias shows.
    std::normal_distribution<float> bias(0.0f, float(std::sqrt(double(p.k))));
    in.bias.resize(size_t(p.n));
    for (auto& v : in.bias) v = p.out_type == DType::kBF16 ? float_to_bf16(bias(rng)) : float_to_fp16(bias(rng));
  }
  return in;
}

Reference reference_gemm(const Problem& p, const HostInputs& in) {
  // Decode once (256-entry tables), then a plain triple loop in float64, rows split over threads.
  double ta[256], tb[256];
  for (int c = 0; c < 256; ++c) {
    ta[c] = fp8_decode(uint8_t(c), p.a_type);
    tb[c] = fp8_decode(uint8_t(c), p.b_type);
  }
  const size_t rows = size_t(p.batch * p.m);
  Reference ref;
  ref.out.assign(rows * p.n, 0.0);
  ref.abs_sum.assign(rows * p.n, 0.0);
  const double s = double(in.a_scale) * double(in.b_scale);
  auto work = [&](size_t row_begin, size_t row_end) {
    std::vector<double> arow(p.k);
    for (size_t row = row_begin; row < row_end; ++row) {
      const size_t batch = row / p.m;
      const uint8_t* a = &in.a[row * p.k];
      for (int64_t kk = 0; kk < p.k; ++kk) arow[kk] = ta[a[kk]];
      for (int64_t n = 0; n < p.n; ++n) {
        const uint8_t* b = &in.b[(batch * p.n + n) * p.k];
        double acc = 0, abs_acc = 0;
        for (int64_t kk = 0; kk < p.k; ++kk) {
          const double prod = arow[kk] * tb[b[kk]];
          acc += prod;
          abs_acc += std::fabs(prod);
        }
        ref.out[row * p.n + n] = s * acc + (p.bias ? decode_element(in.bias.data(), size_t(n), p.out_type) : 0.0);
        ref.abs_sum[row * p.n + n] = s * abs_acc;
      }
    }
  };
  const unsigned threads = std::max(1u, std::min(std::thread::hardware_concurrency(), 16u));
  std::vector<std::thread> pool;
  const size_t per = (rows + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const size_t begin = t * per, end = std::min(rows, begin + per);
    if (begin < end) pool.emplace_back(work, begin, end);
  }
  for (auto& th : pool) th.join();
  return ref;
}

Tolerance Tolerance::for_problem(const Problem& p, bool fast_accum) {
  Tolerance t;
  t.out_rtol = p.out_type == DType::kBF16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
  t.acc_tol = fast_accum ? std::ldexp(1.0, -9) : std::ldexp(1.0, -13);
  // Output rounding alone gives ~out_rtol/3 in Frobenius norm; fast accumulation adds up to
  // a few 1e-3 for the suite's K.
  t.fro_tol = (p.out_type == DType::kBF16 ? 4e-3 : 1e-3) + (fast_accum ? 4e-3 : 0.0);
  return t;
}

CheckResult check_output(const Problem& p, const std::vector<uint16_t>& out, const Reference& ref,
                         const Tolerance& tol) {
  CheckResult r;
  double err2 = 0, ref2 = 0;
  for (size_t i = 0; i < ref.out.size(); ++i) {
    const double v = decode_element(out.data(), i, p.out_type);
    const double e = std::fabs(v - ref.out[i]);
    const double allowed = tol.out_rtol * std::fabs(ref.out[i]) + tol.acc_tol * ref.abs_sum[i] + 1e-30;
    const bool is_nan = std::isnan(v) || std::isinf(v);
    if (is_nan) ++r.nan;
    const double ratio = is_nan ? INFINITY : e / allowed;
    if (!(ratio <= 1.0)) {
      if (r.bad == 0) r.first_bad = i;
      ++r.bad;
    }
    r.worst_ratio = std::max(r.worst_ratio, ratio);
    if (!is_nan) err2 += e * e;
    ref2 += ref.out[i] * ref.out[i];
  }
  r.fro_rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  r.ok = r.bad == 0 && r.fro_rel <= tol.fro_tol;
  return r;
}

std::string CheckResult::to_string() const {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s bad=%zu nan=%zu worst=%.3g fro=%.2e", ok ? "PASS" : "FAIL",
                bad, nan, worst_ratio, fro_rel);
  std::string s = buf;
  if (bad) s += " first_bad=" + std::to_string(first_bad);
  return s;
}

}  // namespace fp8gemm
