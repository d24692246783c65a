// small_m against the float64 reference through the backend: every tactic it offers, every dtype
// pair, odd shapes, exact-integer inputs that show which outputs go wrong, what it refuses, and the
// determinism of split-K. The per-family sweeps are in test_small_m_kernels.cpp.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "small_m_test_util.h"

namespace fp8gemm {
namespace {

using namespace small_m_test;

TEST(SmallM, IsAvailableOnThisGpu) {
  SKIP_UNLESS_SM90();
  const Verdict v = small_m_backend().available();
  EXPECT_TRUE(v.ok) << v.reason;
}

// Every tactic tactics() returns, on shapes with odd M, tiny and ragged N, K tails, batch > 1.
TEST(SmallM, EveryOfferedTacticMatchesTheReference) {
  SKIP_UNLESS_SM90();
  Backend& be = small_m_backend();
  const Problem problems[] = {
      make(1, 1, 16, 16),       make(1, 3, 48, 80),        make(2, 7, 4080, 272),
      make(1, 8, 4096, 1024),   make(3, 9, 160, 4112),     make(1, 16, 1280, 8192),
      make(1, 17, 96, 1040),    make(2, 24, 4080, 528),    make(1, 31, 48, 32768),
      make(1, 32, 512, 2064),   make(1, 5, 48, 32768),     make(4, 2, 64, 336),
  };
  uint64_t seed = 1;
  for (const Problem& p : problems) {
    const auto tactics = be.tactics(p);
    ASSERT_FALSE(tactics.empty()) << p;
    EXPECT_EQ(tactics.front(), be.default_tactic(p));
    VerifyCase vc(p, seed++);  // one reference per problem: the expensive part
    for (const Tactic& t : tactics) expect_ok(vc, t);
  }
}

TEST(SmallM, AllDtypePairsAndOutputTypes) {
  SKIP_UNLESS_SM90();
  Backend& be = small_m_backend();
  const std::pair<DType, DType> pairs[] = {
      {DType::kE4M3, DType::kE4M3}, {DType::kE4M3, DType::kE5M2}, {DType::kE5M2, DType::kE4M3}};
  uint64_t seed = 100;
  for (auto [a, b] : pairs)
    for (DType out : {DType::kBF16, DType::kFP16})
      for (int64_t m : {1, 13, 32}) {
        const Problem p = make(2, m, 208, 1088, a, b, out);
        VerifyCase vc(p, seed++);
        for (const Tactic& t : be.tactics(p)) expect_ok(vc, t);
      }
}

// Larger and odd shapes: K up to 32768, K < 128, n = 16, batch 3, every dtype pair.
TEST(SmallM, WgmmaShapesAndDtypes) {
  SKIP_UNLESS_SM90();
  Backend& be = small_m_backend();
  const Problem problems[] = {make(1, 1, 16, 16),     make(1, 5, 48, 80),       make(3, 3, 4096, 1040),
                              make(1, 31, 1280, 32768), make(1, 16, 4096, 4096), make(2, 2, 8192, 1024)};
  uint64_t seed = 5000;
  for (const Problem& p : problems) {
    VerifyCase vc(p, seed++);
    for (const small_m::Config& c : {tma(64, 1, 4, false), tma(128, 8, 8, true),
                                     tma(64, 4, 16, true), small_m::with_cp_weights(tma(64, 1, 4, false)),
                                     small_m::with_cp_weights(tma(64, 8, 4, true))}) {
      const Tactic t{"small_m", c.to_string()};
      if (!small_backend_can(p, t)) continue;
      SCOPED_TRACE(p.to_string() + " " + t.name());
      const CheckResult r = vc.run(testing::test_context(), t);
      EXPECT_TRUE(r.ok) << r.to_string();
    }
  }
  passes_every_dtype_pair(be, seed, {tma(64, 2, 4, true), tma(128, 1, 8, false)});
}

// Diagnostic for every kernel family: exact small-integer inputs, so that any wrong element is
// wrong by a visible amount; prints which output rows / columns / K blocks are affected. (The
// activation-once kernel runs m = 1 only: WgmmaKPairsActivationOnce covers it.)
TEST(SmallM, WgmmaExactIntegersWithMismatchPattern) {
  SKIP_UNLESS_SM90();
  Backend& be = small_m_backend();
  const int64_t batch = 2, m = 11, n = 208, k = 400;  // K: 3 full 128-byte blocks and a 16-byte tail
  Problem p = make(batch, m, n, k);
  const uint8_t code[5] = {0xC0, 0xB8, 0x00, 0x38, 0x40};  // e4m3 -2, -1, 0, 1, 2
  std::mt19937 rng(7);
  std::vector<int> av(size_t(batch * m * k)), wv(size_t(batch * n * k));
  std::vector<uint8_t> ab(av.size()), wb(wv.size());
  for (size_t i = 0; i < av.size(); ++i) { const int c = int(rng() % 5); av[i] = c - 2; ab[i] = code[c]; }
  for (size_t i = 0; i < wv.size(); ++i) { const int c = int(rng() % 5); wv[i] = c - 2; wb[i] = code[c]; }
  const float sa = 0.5f, sb = 0.25f;
  void *da, *dw, *dout;
  float* ds;
  ASSERT_EQ(cudaMalloc(&da, ab.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dw, wb.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dout, size_t(batch * m * n) * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&ds), 2 * sizeof(float)), cudaSuccess);
  const float scales[2] = {sa, sb};
  cudaMemcpy(da, ab.data(), ab.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dw, wb.data(), wb.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(ds, scales, sizeof(scales), cudaMemcpyHostToDevice);
  for (const small_m::Config& c : {tma(64, 1, 2, false), tma(128, 2, 3, true),
                                   small_m::with_cp_weights(tma(64, 2, 3, true)),
                                   small_m::with_cp_weights(tma(128, 1, 2, false)),
                                   small_m::persistent(64, 2, 3, 1), small_m::persistent(128, 1, 2, 2, Pdl::kOff),
                                   tma(32, 2, 2, true),
                                   small_m::with_cp_weights(tma(32, 1, 3, false)),
                                   tma(40, 2, 3, true),
                                   small_m::with_cp_weights(tma(100, 1, 2, false))}) {
    const Tactic t{"small_m", c.to_string()};
    cudaMemset(dout, 0xFF, size_t(batch * m * n) * 2);
    GemmArgs args;
    args.a = da;
    args.b = dw;
    args.a_scale = ds;
    args.b_scale = ds + 1;
    args.out = dout;
    be.run(p, t, args, testing::test_context().workspace(nullptr), nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << t.name();
    std::vector<uint16_t> out(size_t(batch * m * n));
    cudaMemcpy(out.data(), dout, out.size() * 2, cudaMemcpyDeviceToHost);
    int bad = 0;
    std::map<int, int> by_n64, by_m, by_nmod64;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double ref = 0;
          for (int64_t q = 0; q < k; ++q) ref += double(av[size_t((b * m + i) * k + q)]) * wv[size_t((b * n + j) * k + q)];
          ref *= sa * sb;
          const uint32_t bits = uint32_t(out[size_t((b * m + i) * n + j)]) << 16;
          float got;
          std::memcpy(&got, &bits, 4);
          if (!(std::fabs(got - ref) <= 0.01 * std::fabs(ref) + 1e-6)) {
            if (bad < 12)
              std::printf("  %s: b=%lld m=%lld n=%lld got %g want %g\n", t.name().c_str(), (long long)b, (long long)i,
                          (long long)j, got, ref);
            ++bad;
            ++by_n64[int(j / 64)];
            ++by_m[int(i)];
            ++by_nmod64[int(j % 64)];
          }
        }
    if (bad) {
      std::printf("  %s: %d of %lld wrong\n  by n/64:", t.name().c_str(), bad, (long long)(batch * m * n));
      for (auto [key, v] : by_n64) std::printf(" %d:%d", key, v);
      std::printf("\n  by m:");
      for (auto [key, v] : by_m) std::printf(" %d:%d", key, v);
      std::printf("\n  by n%%64:");
      for (auto [key, v] : by_nmod64) std::printf(" %d:%d", key, v);
      std::printf("\n");
    }
    EXPECT_EQ(bad, 0) << t.name();
  }
  cudaFree(da);
  cudaFree(dw);
  cudaFree(dout);
  cudaFree(ds);
}

TEST(SmallM, RejectsWhatItCannotRun) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Backend& be = small_m_backend();
  const Problem big_m = make(1, 33, 256, 256);
  EXPECT_TRUE(be.tactics(big_m).empty());
  EXPECT_THROW(be.default_tactic(big_m), Error);
  EXPECT_FALSE(be.can_implement(make(1, 8, 256, 256), Tactic{"small_m", "rows=32"}));
  EXPECT_FALSE(be.can_implement(make(1, 8, 256, 256), Tactic{"cublaslt", "rows=32,splitk=1,warps=8,stages=2,pdl=0"}));
  EXPECT_FALSE(be.can_implement(make(1, 8, 256, 256), Tactic{"small_m", "wgmma,rows=64,splitk=1,stages=1,pdl=0"}));
  if (testing::test_context().device().compute_capability() != 90) {
    EXPECT_FALSE(be.can_implement(make(1, 8, 256, 256), Tactic{"small_m", "wgmma,rows=64,splitk=1,stages=4,pdl=0"}));
    return;
  }
  // The names of removed kernels and options are refused with what became of them, not run.
  for (const char* removed : {"rows=16,splitk=1,warps=8,stages=2,pdl=1", "wgmma,rows=64,splitk=2,stages=12,l2pf=8,pdl=1",
                              "wgmma,rows=64,splitk=1,stages=6,pdl=1,streamk=2,wload=cp",
                              "wgmma,rows=64,splitk=1,stages=4,pdl=0,wload=reg"}) {
    const Verdict v = be.can_implement(make(1, 8, 4096, 4096), Tactic{"small_m", removed});
    EXPECT_FALSE(v) << removed;
    EXPECT_NE(v.reason.find("removed"), std::string::npos) << removed << ": " << v.reason;
  }
}

// Split-K is reduced in a fixed order: the same inputs give the same bits every time.
TEST(SmallM, SplitKIsDeterministic) {
  SKIP_UNLESS_SM90();
  const Problem p = make(1, 16, 1280, 8192);
  const std::vector<std::string> names{
      tma(64, 8, 4, true).to_string(), small_m::persistent(64, 5, 6, 1).to_string(),
      small_m::with_cp_weights(tma(64, 8, 4, true)).to_string(), small_m::with_cp_weights(tma(32, 8, 4, true)).to_string(),
      tma(40, 8, 4, true).to_string()};
  for (const std::string& name : names) {
    const Tactic t{"small_m", name};
    const CheckResult a = verify_tactic(testing::test_context(), p, t, 77);
    const CheckResult b = verify_tactic(testing::test_context(), p, t, 77);
    EXPECT_TRUE(a.ok) << name << " " << a.to_string();
    EXPECT_EQ(a.fro_rel, b.fro_rel) << name;  // bitwise-equal outputs give bitwise-equal error norms
    EXPECT_EQ(a.worst_ratio, b.worst_ratio) << name;
  }
}

}  // namespace
}  // namespace fp8gemm
