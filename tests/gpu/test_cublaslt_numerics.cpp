// Every cuBLASLt tactic on >= 30 random shapes (m in {1, 3, 17, 255} among them, b > 1, every
// dtype pair, both out types) against the float64 reference, outputs poisoned.
#include <gtest/gtest.h>

#include <random>

#include "gpu_test_util.h"
#include "measure/graph_timer.h"
#include "measure/verify.h"

namespace fp8gemm {
namespace {

std::vector<Problem> random_problems(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t ms[] = {1, 3, 17, 255, 2, 8, 31, 64, 100, 128, 333, 512};
  const std::pair<DType, DType> pairs[] = {{DType::kE4M3, DType::kE4M3}, {DType::kE4M3, DType::kE5M2},
                                           {DType::kE5M2, DType::kE4M3}};
  std::vector<Problem> out;
  for (int i = 0; i < count; ++i) {
    Problem p;
    p.m = i < 4 ? ms[i] : ms[rng() % std::size(ms)];  // the required m values come first
    p.n = 16 * int64_t(1 + rng() % 96);               // 16 .. 1536
    p.k = 16 * int64_t(1 + rng() % 128);              // 16 .. 2048
    p.batch = i % 3 == 0 ? int64_t(1 + rng() % 4) : 1;
    auto [a, b] = pairs[i % 3];
    p.a_type = a, p.b_type = b;
    p.out_type = (i / 3) % 2 ? DType::kFP16 : DType::kBF16;
    out.push_back(p);
  }
  return out;
}

TEST(CublasLtNumerics, EveryTacticOnRandomShapes) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  Backend* lt = ctx.backend("cublaslt");
  ASSERT_TRUE(lt && lt->available()) << lt->available().reason;
  int checked = 0;
  uint64_t seed = 100;
  for (const Problem& p : random_problems(32, 42)) {
    VerifyCase vcase(p, seed++);
    const std::vector<Tactic> tactics = lt->tactics(p);
    ASSERT_FALSE(tactics.empty()) << p;
    // The default is one of the tactics, and it is the heuristic's first.
    const Tactic def = lt->default_tactic(p);
    EXPECT_NE(std::find(tactics.begin(), tactics.end(), def), tactics.end()) << def << " for " << p;
    for (const Tactic& t : tactics) {
      const CheckResult r = vcase.run(ctx, t);
      EXPECT_TRUE(r.ok) << p << " " << t << ": " << r.to_string();
      ++checked;
    }
  }
  std::printf("checked %d (problem, tactic) pairs\n", checked);
  EXPECT_GT(checked, 32);
}

TEST(CublasLtNumerics, TacticRebuiltFromItsNameAloneRunsTheSameKernel) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  Problem p;
  p.m = 64, p.n = 1024, p.k = 1024;
  // A fresh Context has no memo: the name alone must rebuild and pass can_implement.
  Context fresh;
  for (const Tactic& t : ctx.backend("cublaslt")->tactics(p)) {
    const Tactic parsed = Tactic::parse(t.name());
    EXPECT_TRUE(fresh.backend("cublaslt")->can_implement(p, parsed)) << t;
    EXPECT_TRUE(verify_tactic(fresh, p, parsed, 7).ok) << t;
  }
}

// A fitted tile ("128xM/2", listed where the heuristic cut a tile exactly to M) resolves to
// another tile at every other M of the bucket; each must pass the reference there too. The
// tactics come from the heuristic's lists at a 4096x4096 layer (where the H200 showed fitted
// tiles at M=100 and 300), and run on a smaller n, k so the float64 reference stays quick.
TEST(CublasLtNumerics, FittedTilesRunAtEveryMOfTheirBucket) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  Backend* lt = ctx.backend("cublaslt");
  int fitted = 0, runs = 0;
  const std::pair<int64_t, std::vector<int64_t>> buckets[] = {{100, {97, 100, 113, 128}}, {300, {257, 300, 333, 384}}};
  for (const auto& [list_m, ms] : buckets) {
    Problem listed = testing::problem(list_m, 4096, 4096);
    for (const Tactic& t : lt->tactics(listed)) {
      if (t.config.find("xM/") == std::string::npos) continue;
      ++fitted;
      for (int64_t m : ms) {
        const Problem q = testing::problem(m, 1024, 512);
        const Verdict v = lt->can_implement(q, t);
        if (!v.ok) {
          std::printf("%s cannot run m=%lld: %s\n", t.name().c_str(), (long long)m, v.reason.c_str());
          continue;
        }
        const CheckResult r = verify_tactic(ctx, q, t, uint64_t(m));
        EXPECT_TRUE(r.ok) << q << " " << t << ": " << r.to_string();
        ++runs;
      }
    }
  }
  std::printf("%d fitted tactics, %d runs\n", fitted, runs);
  EXPECT_GT(fitted, 0) << "no tile of the heuristic's lists at m=100, 300 was cut to M";
  EXPECT_GE(runs, 2 * fitted) << "fitted tiles should resolve at most M of their bucket";
}

// "cublaslt:heuristic" (the adaptive floor a tuned segment may hold) runs, at each M, the
// heuristic's first there: the same kernel as default_tactic(), so the same output, and the
// float64 reference passes. It is never listed (tactics() holds fixed configs only).
TEST(CublasLtNumerics, TheAdaptiveHeuristicRunsEachMsDefault) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  Backend* lt = ctx.backend("cublaslt");
  ASSERT_TRUE(lt && lt->available()) << lt->available().reason;
  const std::optional<Tactic> h = lt->adaptive_default();
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->name(), "cublaslt:heuristic");
  GraphTimer timer(ctx);
  for (int64_t m : {1, 17, 100, 300, 700, 3000}) {
    const Problem q = testing::problem(m, 1280, 1024);
    ASSERT_TRUE(lt->can_implement(q, *h).ok) << q;
    EXPECT_EQ(lt->same_tiles_up_to(q, *h), m);  // it re-decides per M: no promise above m
    for (const Tactic& t : lt->tactics(q)) EXPECT_NE(t.config, "heuristic");
    const Tactic def = lt->default_tactic(q);
    EXPECT_EQ(lt->workspace_bytes(q, *h), lt->workspace_bytes(q, def)) << q << " " << def;
    const CheckResult r = verify_tactic(ctx, q, *h, uint64_t(m));
    EXPECT_TRUE(r.ok) << q << ": " << r.to_string();
    // Same inputs, same kernel: the outputs agree (bitwise unless a split-K reduction orders
    // its partial sums differently from run to run).
    const double diff = timer.compare_outputs(q, def, {*h}).at(0);
    if (def.config.find("splitk=1,") != std::string::npos) EXPECT_EQ(diff, 0.0) << q << " " << def;
    else EXPECT_LE(diff, 0.02) << q << " " << def;
    EXPECT_EQ(ctx.choose(q, "cublaslt:heuristic", nullptr), *h);  // a named tactic like any other
  }
}

}  // namespace
}  // namespace fp8gemm
