// small_m against the float64 reference: every tactic the backend offers, plus a sweep that
// reaches every kernel instantiation, on fresh random data with the output poisoned.
#include <gtest/gtest.h>

#include "backends/small_m/small_m_config.h"
#include "gpu_test_util.h"
#include "measure/verify.h"

namespace fp8gemm {
namespace {

Problem make(int64_t batch, int64_t m, int64_t n, int64_t k, DType a = DType::kE4M3, DType b = DType::kE4M3,
             DType out = DType::kBF16) {
  Problem p;
  p.batch = batch;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_type = a;
  p.b_type = b;
  p.out_type = out;
  return p;
}

Backend& small_m_backend() {
  Backend* b = testing::test_context().backend("small_m");
  if (!b) throw std::runtime_error("small_m is not part of this build");
  return *b;
}

void expect_ok(const Problem& p, const Tactic& t, uint64_t seed) {
  SCOPED_TRACE(p.to_string() + " " + t.name());
  const CheckResult r = verify_tactic(testing::test_context(), p, t, seed);
  EXPECT_TRUE(r.ok) << r.to_string();
}

TEST(SmallM, IsAvailableOnThisGpu) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  const Verdict v = small_m_backend().available();
  EXPECT_TRUE(v.ok) << v.reason;
}

// Every tactic tactics() returns, on shapes with odd M, tiny and ragged N, K tails, batch > 1.
TEST(SmallM, EveryOfferedTacticMatchesTheReference) {
  FP8GEMM_SKIP_WITHOUT_GPU();
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
    for (const Tactic& t : tactics) expect_ok(p, t, seed++);
  }
}

TEST(SmallM, AllDtypePairsAndOutputTypes) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Backend& be = small_m_backend();
  const std::pair<DType, DType> pairs[] = {
      {DType::kE4M3, DType::kE4M3}, {DType::kE4M3, DType::kE5M2}, {DType::kE5M2, DType::kE4M3}};
  uint64_t seed = 100;
  for (auto [a, b] : pairs)
    for (DType out : {DType::kBF16, DType::kFP16})
      for (int64_t m : {1, 13, 32}) {
        const Problem p = make(2, m, 208, 1088, a, b, out);
        for (const Tactic& t : be.tactics(p)) expect_ok(p, t, seed++);
      }
}

// Every (rows, stages, m tiles) instantiation, every warp count and split-K 1..8, with PDL.
TEST(SmallM, EveryInstantiationAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Backend& be = small_m_backend();
  uint64_t seed = 1000;
  int ran = 0;
  for (int64_t m : {1, 11, 19, 32})
    for (int rows : {16, 32, 64})
      for (int stages : {1, 2, 4})
        for (int warps : {1, 2, 4, 8})
          for (int splitk : {1, 2, 3, 8}) {
            const small_m::Config c{rows, splitk, warps, stages, (splitk + warps) % 2 == 1};
            if (!small_m::config_exists(c)) continue;
            const Problem p = make(2, m, 176, 2064);  // 32 full 64-byte chunks and a 16-byte tail
            const Tactic t{"small_m", c.to_string()};
            if (!be.can_implement(p, t)) continue;
            expect_ok(p, t, seed++);
            ++ran;
          }
  EXPECT_GT(ran, 200);
}

TEST(SmallM, RejectsWhatItCannotRun) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Backend& be = small_m_backend();
  const Problem big_m = make(1, 33, 256, 256);
  EXPECT_TRUE(be.tactics(big_m).empty());
  EXPECT_THROW(be.default_tactic(big_m), Error);
  EXPECT_FALSE(be.can_implement(make(1, 8, 256, 256), Tactic{"small_m", "rows=32"}));
  EXPECT_FALSE(be.can_implement(make(1, 8, 256, 256), Tactic{"cublaslt", "rows=32,splitk=1,warps=8,stages=2,pdl=0"}));
}

// Split-K is reduced in a fixed order: the same inputs give the same bits every time.
TEST(SmallM, SplitKIsDeterministic) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  const Problem p = make(1, 16, 1280, 8192);
  const Tactic t{"small_m", "rows=32,splitk=8,warps=8,stages=2,pdl=1"};
  const CheckResult a = verify_tactic(testing::test_context(), p, t, 77);
  const CheckResult b = verify_tactic(testing::test_context(), p, t, 77);
  EXPECT_TRUE(a.ok) << a.to_string();
  EXPECT_EQ(a.fro_rel, b.fro_rel);  // bitwise-equal outputs give bitwise-equal error norms
  EXPECT_EQ(a.worst_ratio, b.worst_ratio);
}

}  // namespace
}  // namespace fp8gemm
