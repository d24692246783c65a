// Every cuBLASLt tactic on >= 30 random shapes (m in {1, 3, 17, 255} among them, b > 1, every
// dtype pair, both out types) against the float64 reference, outputs poisoned.
#include <gtest/gtest.h>

#include <cublasLt.h>

#include <cstdlib>
#include <optional>
#include <random>

#include "backends/cublaslt/algo_name.h"
#include "backends/cublaslt/query.h"
#include "gpu_test_util.h"
#include "fp8gemm/measure.h"
#include "fp8gemm/verify.h"
#include "tools/common/shapes.h"

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

// torch._scaled_mm(A, W.t(), s_a, s_b, out_dtype, use_fast_accum=True)'s heuristic query,
// transcribed here from aten/src/ATen/cuda/CUDABlas.cpp scaled_gemm (created descriptors, its
// attribute calls) for A [m, k] row-major, W [n, k] and a fresh row-major out, as cublasCommonArgs
// hands them over: independent of the backend's query.h, which it checks. `min_alignment` and
// `workspace` vary one setting at a time, to say which one changed an answer.
class TorchQuery {
 public:
  TorchQuery() {
    EXPECT_EQ(cublasLtCreate(&handle_), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&scales_), 2 * sizeof(float)), cudaSuccess);
  }
  ~TorchQuery() {
    cudaFree(scales_);
    cublasLtDestroy(handle_);
  }

  // The first algorithm's canonical config, or nullopt when cuBLASLt has none (torch then fails).
  std::optional<cublaslt::AlgoConfig> first(const Problem& p, uint64_t workspace,
                                            std::optional<uint32_t> min_alignment = std::nullopt,
                                            uint32_t* needs_alignment = nullptr) {
    auto type = [](DType t) { return cublaslt::cuda_type(t); };
    // cublasCommonArgs: out contiguous -> transpose_result; mata = W.t() ('t', ld k), matb = A
    // ('n', ld k); cuBLAS m = n, n = m; ldc = n. Scale of mata = b_scale.
    const uint64_t m = uint64_t(p.n), n = uint64_t(p.m), k = uint64_t(p.k);
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    EXPECT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
    const cublasOperation_t opa = CUBLAS_OP_T, opb = CUBLAS_OP_N;
    const void* a_scale = scales_;
    const void* b_scale = scales_ + 1;
    const int8_t fast_accum = 1;
    const int32_t scale_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof a_scale);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof b_scale);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof fast_accum);
    cublasLtMatrixLayoutCreate(&a, type(p.b_type), k, m, int64_t(k));  // (m, k, lda, t) created as k x m
    cublasLtMatrixLayoutCreate(&b, type(p.a_type), k, n, int64_t(k));
    cublasLtMatrixLayoutCreate(&c, type(p.out_type), m, n, int64_t(m));  // the bias type: out's
    cublasLtMatrixLayoutCreate(&d, type(p.out_type), m, n, int64_t(m));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &scale_mode, sizeof scale_mode);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &scale_mode, sizeof scale_mode);
    EXPECT_EQ(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
    const size_t ws = workspace;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (min_alignment)
      for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
        cublasLtMatmulPreferenceSetAttribute(pref, attr, &*min_alignment, sizeof(uint32_t));
    cublasLtMatmulHeuristicResult_t result{};
    int returned = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(handle_, desc, a, b, c, d, pref, 1, &result, &returned);
    std::optional<cublaslt::AlgoConfig> out;
    if (st == CUBLAS_STATUS_SUCCESS && returned > 0) {
      out = cublaslt::read_config(result.algo, true);
      if (needs_alignment) {
        *needs_alignment = 0;
        for (auto cap : {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES,
                         CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES}) {
          uint32_t v = 0;
          size_t written = 0;
          cublasLtMatmulAlgoCapGetAttribute(&result.algo, cap, &v, sizeof v, &written);
          *needs_alignment = std::max(*needs_alignment, v);
        }
      }
    }
    cublasLtMatmulPreferenceDestroy(pref);
    for (cublasLtMatrixLayout_t l : {a, b, c, d}) cublasLtMatrixLayoutDestroy(l);
    cublasLtMatmulDescDestroy(desc);
    return out;
  }

 private:
  cublasLtHandle_t handle_ = nullptr;
  float* scales_ = nullptr;
};

// The floor (default_tactic, and "cublaslt:heuristic" through it) is torch._scaled_mm's kernel:
// the first algorithm of torch's own query with torch's workspace, at the issue's shape
// (5120x20480, M = 64 and 128) and every DESIGN-suite layer at M = 1, 16, 128, 1024. Prints where
// that differs from the old floor (the first with the Context's 32 MiB and 16-byte alignment
// declared) and which of the two settings made the difference.
TEST(CublasLtFloor, IsTorchScaledMmsHeuristicAnswer) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  Backend* lt = ctx.backend("cublaslt");
  ASSERT_TRUE(lt && lt->available()) << lt->available().reason;
  const uint64_t torch_ws = cublaslt::torch_workspace_bytes(std::getenv("CUBLASLT_WORKSPACE_SIZE"));
  const uint64_t context_ws = ctx.options().workspace_bytes;
  ASSERT_LE(torch_ws, context_ws) << "CUBLASLT_WORKSPACE_SIZE asks more than the Context's workspace";
  std::vector<std::pair<NamedShape, int64_t>> points;
  for (int64_t m : {64, 128}) points.push_back({NamedShape{"issue42.5120x20480", 5120, 20480}, m});
  for (const NamedShape& s : model_shapes("all"))
    for (int64_t m : {1, 16, 128, 1024}) points.push_back({s, m});
  TorchQuery torch;
  const Tactic adaptive = *lt->adaptive_default();
  int changed = 0, by_alignment = 0, narrowed = 0;
  for (const auto& [shape, m] : points) {
    const Problem p = testing::problem(m, shape.n, shape.k);
    uint32_t needs = 0;
    const std::optional<cublaslt::AlgoConfig> want = torch.first(p, torch_ws, std::nullopt, &needs);
    ASSERT_TRUE(want.has_value()) << "torch's query has no algorithm for " << p;
    const Tactic floor = lt->default_tactic(p);
    if (needs > uint32_t(p.alignment)) {
      // torch's kernel needs more alignment than a call guarantees: the floor is the same query
      // declaring p.alignment (docs/cublaslt.md).
      ++narrowed;
      std::printf("%-28s M=%-5lld torch's %s needs %u-byte pointers; floor %s\n", shape.name.c_str(),
                  (long long)m, cublaslt::format_config(*want).c_str(), needs, floor.config.c_str());
      const auto aligned = torch.first(p, torch_ws, uint32_t(p.alignment));
      ASSERT_TRUE(aligned.has_value()) << p;
      EXPECT_EQ(floor.config, cublaslt::format_config(*aligned)) << p;
      continue;
    }
    EXPECT_EQ(floor.config, cublaslt::format_config(*want)) << shape.name << " " << p;
    EXPECT_LE(lt->workspace_bytes(p, floor), torch_ws) << p << " " << floor;
    EXPECT_EQ(lt->workspace_bytes(p, adaptive), lt->workspace_bytes(p, floor)) << p;
    const std::vector<Tactic> listed = lt->tactics(p);
    EXPECT_NE(std::find(listed.begin(), listed.end(), floor), listed.end()) << floor << " is not listed for " << p;
    const auto old_floor = torch.first(p, context_ws, uint32_t(p.alignment));
    if (old_floor && !(*old_floor == *want)) {
      ++changed;
      const auto with_alignment = torch.first(p, torch_ws, uint32_t(p.alignment));
      const bool alignment_matters = !with_alignment || !(*with_alignment == *want);
      by_alignment += alignment_matters;
      std::printf("%-28s M=%-5lld floor %s (was %s; %s)\n", shape.name.c_str(), (long long)m,
                  floor.config.c_str(), cublaslt::format_config(*old_floor).c_str(),
                  alignment_matters ? "the alignment declared changed it too" : "the workspace alone changed it");
    }
  }
  std::printf("%zu points: the floor is torch's answer; it differs from the 32 MiB first at %d (alignment "
              "involved at %d); torch's kernel needed more than 16-byte pointers at %d\n",
              points.size(), changed, by_alignment, narrowed);
  // The issue's own point: torch ran a non-split kernel where the 32 MiB first was split-K.
  const Tactic issue = lt->default_tactic(testing::problem(128, 5120, 20480));
  EXPECT_NE(issue.config.find("splitk=1,"), std::string::npos) << issue;
}

}  // namespace
}  // namespace fp8gemm
