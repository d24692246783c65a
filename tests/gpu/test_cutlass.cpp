// Every CUTLASS tactic against the float64 reference (fp8gemm/verify.h: fresh random inputs and
// scales, output poisoned with NaN first): b > 1, odd m (1, 3, 17, 255), n and k that are not
// multiples of the tiles, both out types and every supported FP8 pair. Plus one run inside
// CUDA-graph capture (stream-K clears its workspace with an async memset there).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/device_buffer.h"
#include "fp8gemm/verify.h"
#include "gpu_test_util.h"

namespace fp8gemm {
namespace {

using testing::make_problem;
using testing::TypeCase;

// Small enough for the float64 host reference, varied enough to hit every edge: m below, at and
// across tile boundaries, n and k with partial tiles, k below one K tile, batches.
struct Shape { int64_t batch, m, n, k; };
const Shape kShapes[] = {
    {1, 1, 256, 256},  {1, 3, 136, 512},  {1, 17, 520, 384}, {2, 255, 264, 256},
    {3, 64, 384, 128}, {1, 5, 64, 16},    {1, 300, 1032, 1024}, {2, 1, 2048, 2048},
};

Backend* cutlass_or_skip(Context& ctx) {
  Backend* b = ctx.backend("cutlass");
  if (!b) return nullptr;
  return b->available() ? b : nullptr;
}


class CutlassNumerics : public ::testing::TestWithParam<TypeCase> {};

TEST_P(CutlassNumerics, EveryTacticMatchesTheReference) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  Backend* backend = cutlass_or_skip(ctx);
  if (!backend) GTEST_SKIP() << "cutlass backend not available on " << ctx.device().name;
  const TypeCase tc = GetParam();

  std::map<std::string, int> runs;  // tactic -> problems it passed or failed on
  int failures = 0;
  uint64_t seed = 1;
  for (const Shape& s : kShapes) {
    const Problem p = make_problem(s.batch, s.m, s.n, s.k, tc.a, tc.b, tc.out);
    testing::verify_listed_tactics(ctx, *backend, p, seed, runs, failures);
  }
  // Coverage: every tactic the backend offers for these types ran on at least two shapes.
  const Problem generic = make_problem(1, 16, 4096, 4096, tc.a, tc.b, tc.out);
  const std::vector<Tactic> all = backend->tactics(generic);
  EXPECT_FALSE(all.empty());
  for (const Tactic& t : all) EXPECT_GE(runs[t.config], 2) << t.name() << " was not exercised";
  std::printf("[cutlass] %s x %s -> %s: %zu tactics, %d failures\n", to_string(tc.a), to_string(tc.b),
              to_string(tc.out), runs.size(), failures);
}

INSTANTIATE_TEST_SUITE_P(Types, CutlassNumerics,
                         ::testing::Values(TypeCase{DType::kE4M3, DType::kE4M3, DType::kBF16},
                                           TypeCase{DType::kE4M3, DType::kE4M3, DType::kFP16},
                                           TypeCase{DType::kE4M3, DType::kE5M2, DType::kBF16},
                                           TypeCase{DType::kE4M3, DType::kE5M2, DType::kFP16},
                                           TypeCase{DType::kE5M2, DType::kE4M3, DType::kBF16},
                                           TypeCase{DType::kE5M2, DType::kE4M3, DType::kFP16}),
                         testing::type_case_name);

TEST(CutlassGpu, DefaultTacticIsCorrectAcrossMBuckets) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  Backend* backend = cutlass_or_skip(ctx);
  if (!backend) GTEST_SKIP() << "cutlass backend not available on " << ctx.device().name;
  for (int64_t m : {1, 16, 33, 100, 200, 2100}) {
    const Problem p = make_problem(1, m, 256, 512, DType::kE4M3, DType::kE4M3, DType::kBF16);
    const Tactic t = backend->default_tactic(p);
    const CheckResult r = verify_tactic(ctx, p, t, 100 + m);
    EXPECT_TRUE(r.ok) << "default " << t.name() << " on " << p << ": " << r.to_string();
  }
}

TEST(CutlassGpu, RunsInsideGraphCapture) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  Backend* backend = cutlass_or_skip(ctx);
  if (!backend) GTEST_SKIP() << "cutlass backend not available on " << ctx.device().name;
  const Problem p = make_problem(2, 3, 1024, 4096, DType::kE4M3, DType::kE4M3, DType::kBF16);
  int captured = 0;
  for (const Tactic& t : backend->tactics(p)) {
    // One persistent and every stream-K kernel (the ones that touch the workspace).
    const bool streamk = t.config.find("_streamk") != std::string::npos;
    if (!streamk && captured > 0) continue;
    SCOPED_TRACE(t.name());
    testing::check_in_graph(ctx, p, t);
    ++captured;
  }
  EXPECT_GE(captured, 1);
}

}  // namespace
}  // namespace fp8gemm
