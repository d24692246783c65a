// GraphTimer on the GPU: sane timings (weights really stream from HBM), call sizing, failing
// candidates reported without breaking the context, the noise floor, output comparison.
#include <cmath>

#include "gpu_test_util.h"
#include "fp8gemm/measure.h"

namespace fp8gemm {
namespace {

using testing::problem;

TEST(GraphTimer, WeightsStreamFromHbmAndShortKernelsGet20Calls) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  GraphTimer timer(ctx);
  // 16 MiB of weights fits in L2: only rotation through distinct copies makes it stream.
  const Problem p = problem(1, 4096, 4096);
  const Tactic t = ctx.choose(p, "cublaslt");
  const std::vector<Timing> r = timer.measure(p, {t}, MeasureOptions{0, 7, 1});
  ASSERT_EQ(r.size(), 1u);
  ASSERT_TRUE(r[0].ok) << r[0].error;
  EXPECT_EQ(r[0].samples_us.size(), 7u);
  const double hbm_floor_us = p.min_bytes() / 4.8e12 * 1e6;  // datasheet HBM bandwidth
  EXPECT_GE(r[0].median_us, 0.95 * hbm_floor_us) << "weights were served from L2";
  EXPECT_LT(r[0].median_us, 1000.0);
  EXPECT_GE(timer.weight_copies(), 2);
  EXPECT_GE(double(timer.weight_copies()) * 4096 * 4096, 2.0 * double(ctx.device().l2_bytes));
  EXPECT_EQ(timer.calls_per_replay(p, t), 20);
  // Where the time went, per stage (the tune JSON's timer_* phases); the 7 timed replays of 20
  // calls are at least 140 HBM-bound calls.
  const std::map<std::string, double> spent = timer.spent_ms();
  for (const char* stage : {"prepare", "probe", "capture", "settle", "replays"})
    EXPECT_GT(spent.count(stage) ? spent.at(stage) : 0.0, 0.0) << stage;
  EXPECT_GE(spent.at("replays"), 140 * hbm_floor_us / 1000);
}

TEST(GraphTimer, LongKernelsGetFewerButAtLeastThreeCalls) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  GraphTimer timer(ctx);
  const Problem p = problem(8192, 8192, 8192);  // ~1.1 TFLOP: ~1 ms a call
  const Tactic t = ctx.choose(p, "cublaslt");
  const std::vector<Timing> r = timer.measure(p, {t}, MeasureOptions{0, 5, 1});
  ASSERT_TRUE(r[0].ok) << r[0].error;
  const int calls = timer.calls_per_replay(p, t);
  EXPECT_GE(calls, 3);
  EXPECT_LT(calls, 20);
  const double tflops = p.flops() / r[0].median_us * 1e-6;
  EXPECT_GT(tflops, 300.0);
  EXPECT_LT(tflops, 1979.0);
}

// Light after heavy (GraphTimerOptions::recover_ms): a light measurement that follows a heavy
// one replays (untimed, in "settle") until recover_ms have passed since the heavy one ended.
TEST(GraphTimer, LightAfterHeavyRecoversFirst) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  const Problem heavy = problem(8192, 8192, 8192), light = problem(1, 4096, 4096);
  const Tactic th = ctx.choose(heavy, "cublaslt"), tl = ctx.choose(light, "cublaslt");
  for (const double recover_ms : {0.0, 1000.0}) {
    GraphTimerOptions o;
    o.recover_ms = recover_ms;
    GraphTimer timer(ctx, o);
    ASSERT_TRUE(timer.measure(light, {tl}, MeasureOptions{0, 5, 1})[0].ok);  // buffers and modules warm
    ASSERT_TRUE(timer.measure(heavy, {th}, MeasureOptions{0, 5, 1})[0].ok);
    const double settled_before = timer.spent_ms().at("settle");
    const std::vector<Timing> r = timer.measure(light, {tl}, MeasureOptions{0, 5, 1});
    ASSERT_TRUE(r[0].ok) << r[0].error;
    const double settled = timer.spent_ms().at("settle") - settled_before;
    if (recover_ms > 0) {
      // Preparing and capturing the light problem took part of the window, not all of it.
      EXPECT_GE(settled, 0.5 * recover_ms);
      EXPECT_LT(settled, recover_ms + 200);
    } else {
      EXPECT_LT(settled, 100.0) << "no recovery asked for";
    }
  }
}

// Keeping the load on (GraphTimerOptions::keep_busy_ms): after a heavy measurement its fastest
// graph keeps replaying, untimed, while the host prepares the next; nothing it reads or writes is
// freed under it (a problem with other weights and a larger M follow), it does not leak into the
// next measurement's timed replays, and it is off by default.
TEST(GraphTimer, KeepBusyQueuesTheFastestGraphAfterAHeavyMeasurementAndNothingElse) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  const Problem heavy = problem(4096, 8192, 8192), other = problem(8192, 4096, 8192);
  const Tactic th = ctx.choose(heavy, "cublaslt"), to = ctx.choose(other, "cublaslt");
  GraphTimer plain(ctx);
  ASSERT_TRUE(plain.measure(heavy, {th}, MeasureOptions{0, 5, 1})[0].ok);
  EXPECT_EQ(plain.kept_busy_ms(), 0.0) << "off by default";

  GraphTimerOptions o;
  o.keep_busy_ms = 30;
  GraphTimer timer(ctx, o);
  const std::vector<Timing> first = timer.measure(heavy, {th, th}, MeasureOptions{0, 5, 1});
  ASSERT_TRUE(first[0].ok && first[1].ok) << first[0].error << first[1].error;
  EXPECT_GE(timer.kept_busy_ms(), 30.0);
  // Right behind the heater: the same problem, then other weights and a larger M (both free
  // buffers the heater uses), then an output comparison.
  const std::vector<Timing> again = timer.measure(heavy, {th}, MeasureOptions{0, 5, 1});
  ASSERT_TRUE(again[0].ok) << again[0].error;
  // Leaked into them, ~30 ms of heater would add several times a replay (1.2 ms) to its time.
  EXPECT_NEAR(again[0].median_us / first[0].median_us, 1.0, 0.4) << "the heater ran inside the timed replays";
  EXPECT_TRUE(timer.measure(other, {to}, MeasureOptions{0, 5, 1})[0].ok);
  EXPECT_EQ(timer.weight_allocations(), 2);
  EXPECT_LE(timer.compare_outputs(other, to, {to})[0], 1e-2);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  // A light measurement queues nothing.
  const double queued = timer.kept_busy_ms();
  const Problem light = problem(1, 4096, 4096);
  ASSERT_TRUE(timer.measure(light, {ctx.choose(light, "cublaslt")}, MeasureOptions{0, 5, 1})[0].ok);
  EXPECT_EQ(timer.kept_busy_ms(), queued);
  EXPECT_EQ(cudaStreamSynchronize(timer.stream()), cudaSuccess);
}

TEST(GraphTimer, FailingCandidateIsReportedAndOthersStillRun) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  GraphTimer timer(ctx);
  const Problem p = problem(64, 4096, 4096);
  const Tactic good = ctx.choose(p, "cublaslt");
  const Tactic bad{"no_such_backend", "x"};
  for (int calls : {0, 20}) {  // 0: fails in the eager probe; 20: fails inside stream capture
    const std::vector<Timing> r = timer.measure(p, {good, bad, good}, MeasureOptions{calls, 5, 1});
    ASSERT_EQ(r.size(), 3u);
    EXPECT_TRUE(r[0].ok) << r[0].error;
    EXPECT_FALSE(r[1].ok);
    EXPECT_NE(r[1].error.find("no_such_backend"), std::string::npos) << r[1].error;
    EXPECT_TRUE(r[2].ok) << r[2].error;
    // The same tactic twice, round-robin: the noise floor is small on a quiet GPU.
    EXPECT_NEAR(r[2].median_us / r[0].median_us, 1.0, 0.2);
    cudaStreamCaptureStatus status;
    ASSERT_EQ(cudaStreamIsCapturing(timer.stream(), &status), cudaSuccess);
    EXPECT_EQ(status, cudaStreamCaptureStatusNone);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
}

TEST(GraphTimer, MSweepReusesWeights) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  GraphTimer timer(ctx);
  for (int64_t m : {1, 16, 256}) {
    const Problem p = problem(m, 6144, 4096);
    const std::vector<Timing> r = timer.measure(p, {ctx.choose(p, "cublaslt")}, MeasureOptions{0, 5, 1});
    ASSERT_TRUE(r[0].ok) << r[0].error;
  }
  EXPECT_EQ(timer.weight_allocations(), 1);
  const Problem other = problem(16, 4096, 4096);
  timer.measure(other, {ctx.choose(other, "cublaslt")}, MeasureOptions{0, 5, 1});
  EXPECT_EQ(timer.weight_allocations(), 2);
}

TEST(GraphTimer, CompareOutputsZeroForSameTacticInfForFailure) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  GraphTimer timer(ctx);
  for (DType out : {DType::kBF16, DType::kFP16}) {
    Problem p = problem(48, 4096, 4096);
    p.out_type = out;
    const Tactic ref = ctx.choose(p, "cublaslt");
    const std::vector<double> d = timer.compare_outputs(p, ref, {ref, Tactic{"no_such_backend", "x"}});
    ASSERT_EQ(d.size(), 2u);
    EXPECT_LE(d[0], 1e-2) << to_string(out);
    EXPECT_TRUE(std::isinf(d[1]));
  }
}

TEST(GraphTimer, CompareOutputsAgreesAcrossCublasltTactics) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  GraphTimer timer(ctx);
  const Problem p = problem(100, 6144, 4096);
  const Tactic ref = ctx.choose(p, "cublaslt");
  std::vector<Tactic> all = ctx.backend("cublaslt")->tactics(p);
  ASSERT_FALSE(all.empty());
  if (all.size() > 8) all.resize(8);
  const std::vector<double> d = timer.compare_outputs(p, ref, all);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_LE(d[i], 2e-2) << all[i].name();
}

TEST(GraphTimer, RoundsOnTheGpu) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  GraphTimer timer(ctx);
  const Problem p = problem(64, 4096, 4096);
  std::vector<Tactic> cands{ctx.choose(p, "cublaslt")};
  for (const Tactic& t : ctx.backend("cublaslt")->tactics(p)) cands.push_back(t);
  const RoundResult r = measure_in_rounds(timer, p, cands);
  ASSERT_TRUE(r.reference.ok) << r.reference.error;
  EXPECT_LT(r.noise, 0.1);  // two medians of 7 replays of the same tactic
  EXPECT_LE(r.finalists.size(), 8u);
  EXPECT_EQ(r.finalists.size() + r.pruned.size(), cands.size() - 1);
}

}  // namespace
}  // namespace fp8gemm
