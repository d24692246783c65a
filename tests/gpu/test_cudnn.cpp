// Every cudnn tactic against the float64 reference (fp8gemm/verify.h: fresh random inputs and
// scales, output poisoned with NaN first) over batches, odd m, n and k off any tile, both out
// types and every supported FP8 pair; names that rebuild their plans; a run inside CUDA-graph
// capture. Skipped, with the reason, where cuDNN cannot be loaded.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "backends/cudnn/plan_name.h"
#include "gpu_test_util.h"

namespace fp8gemm {
namespace {

using testing::make_problem;
using testing::TypeCase;

struct Shape { int64_t batch, m, n, k; };
const Shape kShapes[] = {{1, 1, 256, 256}, {1, 3, 136, 512}, {2, 17, 520, 384}, {1, 255, 264, 256}, {3, 64, 384, 128}};

// A Context that lists cuDNN's runtime-compiled plans too (on the H200 the only ones it has for
// this graph); the default Context leaves them out of tactics().
Context& compiled_context() {
  static Context* ctx = [] {  // alive until exit, like default_context()
    ContextOptions o;
    o.cudnn_runtime_compiled = true;
    return new Context(o);
  }();
  return *ctx;
}

#define FP8GEMM_CUDNN_OR_SKIP(ctx, backend)                                                          \
  Backend* backend = (ctx).backend("cudnn");                                                          \
  if (!backend || !backend->available())                                                              \
    GTEST_SKIP() << "cudnn backend not available: " << (backend ? backend->available().reason : "not registered")

class CudnnNumerics : public ::testing::TestWithParam<TypeCase> {};

TEST_P(CudnnNumerics, EveryTacticMatchesTheReference) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = compiled_context();
  FP8GEMM_CUDNN_OR_SKIP(ctx, backend);
  const TypeCase tc = GetParam();
  std::map<std::string, int> runs;
  int failures = 0;
  uint64_t seed = 11;
  for (const Shape& s : kShapes) {
    const Problem p = make_problem(s.batch, s.m, s.n, s.k, tc.a, tc.b, tc.out);
    EXPECT_FALSE(backend->tactics(p).empty()) << "cudnn lists no tactic for " << p;
    testing::verify_listed_tactics(ctx, *backend, p, seed, runs, failures);
  }
  std::printf("[cudnn] %s x %s -> %s: %zu tactics, %d failures\n", to_string(tc.a), to_string(tc.b),
              to_string(tc.out), runs.size(), failures);
}

INSTANTIATE_TEST_SUITE_P(Types, CudnnNumerics,
                         ::testing::Values(TypeCase{DType::kE4M3, DType::kE4M3, DType::kBF16},
                                           TypeCase{DType::kE4M3, DType::kE4M3, DType::kFP16},
                                           TypeCase{DType::kE4M3, DType::kE5M2, DType::kBF16},
                                           TypeCase{DType::kE5M2, DType::kE4M3, DType::kFP16}),
                         testing::type_case_name);

// A listed name parses back to itself, passes can_implement, and Context::choose resolves it; a
// well-formed name for an engine that does not exist is refused with cuDNN's reason.
TEST(CudnnGpu, NamesRebuildTheirPlans) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = compiled_context();
  FP8GEMM_CUDNN_OR_SKIP(ctx, backend);
  const Problem p = make_problem(1, 16, 4096, 4096, DType::kE4M3, DType::kE4M3, DType::kBF16);
  const std::vector<Tactic> tactics = backend->tactics(p);
  ASSERT_FALSE(tactics.empty());
  EXPECT_EQ(backend->default_tactic(p), tactics.front());
  for (const Tactic& t : tactics) {
    EXPECT_EQ(cudnn::format_config(cudnn::parse_config(t.config)), t.config);
    EXPECT_TRUE(backend->can_implement(p, t).ok) << t.name();
    EXPECT_EQ(ctx.choose(p, t.name()), t);  // the name alone, through the library's own path
  }
  const Verdict none = backend->can_implement(p, Tactic{"cudnn", "eng=99999"});
  EXPECT_FALSE(none.ok);
  EXPECT_FALSE(none.reason.empty());
  std::printf("[cudnn] %zu tactics at m=16 n=4096 k=4096, default %s\n", tactics.size(), tactics.front().name().c_str());
}

// The default Context lists no runtime-compiled plan, yet backend "cudnn" still runs (its
// default is then the first runtime-compiled plan that builds), and correctly.
TEST(CudnnGpu, TheDefaultContextListsOnlyPrecompiledPlansButRunsTheBackend) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  FP8GEMM_CUDNN_OR_SKIP(ctx, backend);
  const Problem p = make_problem(1, 16, 4096, 4096, DType::kE4M3, DType::kE4M3, DType::kBF16);
  const std::vector<Tactic> listed = backend->tactics(p);
  const std::vector<Tactic> all = compiled_context().backend("cudnn")->tactics(p);
  EXPECT_LE(listed.size(), all.size());
  const Tactic t = ctx.choose(p, "cudnn");
  EXPECT_EQ(t.backend, "cudnn");
  const CheckResult r = verify_tactic(ctx, p, t, 5);
  EXPECT_TRUE(r.ok) << t.name() << ": " << r.to_string();
  std::printf("[cudnn] default Context lists %zu of %zu plans; backend \"cudnn\" runs %s\n", listed.size(), all.size(),
              t.name().c_str());
}

TEST(CudnnGpu, RunsInsideGraphCapture) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = compiled_context();
  FP8GEMM_CUDNN_OR_SKIP(ctx, backend);
  const Problem p = make_problem(2, 3, 1024, 4096, DType::kE4M3, DType::kE4M3, DType::kBF16);
  const Tactic t = backend->default_tactic(p);
  SCOPED_TRACE(t.name());
  testing::check_in_graph(ctx, p, t);
}

}  // namespace
}  // namespace fp8gemm
