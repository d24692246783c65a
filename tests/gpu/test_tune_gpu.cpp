// The tuner on the GPU: tuned `auto` within 3% of the best measured tactic (also at M between
// bucket edges), nothing profiled during stream capture inside an AutotuneScope, and a cache
// saved on this device loading back in a fresh Context (named, and at the conventional location).
// Each test sets the tuner's environment itself (scoped_env.h): the caller's cache never leaks in.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "core/device_buffer.h"
#include "gpu_test_util.h"
#include "scoped_env.h"
#include "fp8gemm/tune.h"
#include "fp8gemm/measure.h"
#include "tune/keys/tune_key.h"
#include "tune/tuning_selector.h"

namespace fp8gemm {
namespace {

using testing::NoTuningEnv;
using testing::problem;

// Every tactic of every available backend, `first` leading (the reference of the round).
std::vector<Tactic> everything(Context& ctx, const Problem& p, const Tactic& first) {
  std::vector<Tactic> out{first};
  for (Backend* b : ctx.backends()) {
    if (!b->available()) continue;
    try {
      for (const Tactic& t : b->tactics(p))
        if (t != first) out.push_back(t);
    } catch (const std::exception&) {
    }
  }
  return out;
}

TEST(TuneGpu, TunedAutoIsWithinThreePercentOfTheBestTactic) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  NoTuningEnv env;
  Context ctx;
  // (tuned at the bucket edge, measured at m): edges and points between edges.
  const std::vector<Problem> points = {problem(16, 6144, 4096), problem(12, 6144, 4096),
                                       problem(100, 4096, 4096), problem(128, 4096, 4096),
                                       problem(700, 28672, 4096), problem(4096, 4096, 14336)};
  tune(ctx, points);
  GraphTimer timer(ctx), judge(ctx, tuning_timer_options());
  RoundOptions ro;
  ro.max_finalists = 12;
  for (const Problem& p : points) {
    const Tactic chosen = ctx.choose(p, "auto");
    const RoundResult r = measure_in_rounds(timer, p, everything(ctx, p, chosen), ro);
    ASSERT_TRUE(r.reference.ok) << r.reference.error;
    std::vector<const Timing*> fastest;
    for (const Timing& t : r.finalists)
      if (t.ok && t.tactic != chosen) fastest.push_back(&t);
    std::sort(fastest.begin(), fastest.end(), [](const Timing* x, const Timing* y) { return x->median_us < y->median_us; });
    const double round_ratio = fastest.empty() ? 1.0 : r.reference.median_us / fastest[0]->median_us;
    // The round's fastest is the least of a dozen noisy medians, and so biased low: judged by it,
    // this test failed on near-tie twins that the round put a few percent apart. The verdict
    // comes from a second, independent measurement: auto against the round's three fastest
    // others, 15 replays each, round-robin, with short calls' replays of >= 300 us as in the
    // tuner's timer and bench's head-to-head rounds: at short calls 20-call replays rank small_m's
    // PDL tactics differently (docs/tuning.md "Longer replays for short calls").
    std::vector<Tactic> confirm{chosen};
    for (size_t i = 0; i < fastest.size() && i < 3; ++i) confirm.push_back(fastest[i]->tactic);
    const std::vector<Timing> c = judge.measure(p, confirm, MeasureOptions{0, 15, 1});
    ASSERT_EQ(c.size(), confirm.size());
    ASSERT_TRUE(c[0].ok) << c[0].error;
    double best = c[0].median_us;
    std::string best_name = chosen.name();
    for (const Timing& t : c)
      if (t.ok && t.median_us < best) best = t.median_us, best_name = t.tactic.name();
    const double ratio = c[0].median_us / best;
    std::printf("%-50s auto %8.2f us  best %8.2f us  ratio %.3f (round %.3f)  noise %.3f  auto=%s best=%s\n",
                p.to_string().c_str(), c[0].median_us, best, ratio, round_ratio, r.noise, chosen.name().c_str(),
                best_name.c_str());
    EXPECT_LE(ratio, 1.03 + 2 * r.noise) << p << ": auto " << chosen.name() << " vs best " << best_name;
  }
}

TEST(TuneGpu, NothingIsProfiledDuringStreamCaptureInsideAnAutotuneScope) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  NoTuningEnv env;
  Context ctx;
  install_autotuner(ctx);
  auto* sel = dynamic_cast<tuning::TuningSelector*>(ctx.selector().get());
  ASSERT_NE(sel, nullptr);
  const Problem p = problem(48, 4096, 4096);
  DeviceBuffer a(p.m * p.k), b(p.n * p.k), out(p.m * p.n * 2), scales(8 * sizeof(float));
  const float one[8] = {1, 1, 1, 1, 1, 1, 1, 1};  // a_scale and b_scale 16 bytes apart
  scales.upload(one, sizeof one);
  GemmArgs args{a.get(), b.get(), scales.as<float>(), scales.as<float>() + 4, out.get()};
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ctx.run(problem(8, 4096, 4096), args, stream);  // the stream's workspace, outside the scope
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  {
    AutotuneScope scope(true, {}, &ctx);
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
    ctx.run(p, args, stream);
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess) << "the capture was broken";
    EXPECT_FALSE(sel->cache().find(tuning::key_of(p))) << "tuned inside a capture";
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);

    ctx.run(p, args, stream);  // uncaptured, inside the scope: tunes the key first
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_TRUE(sel->cache().find(tuning::key_of(p)));
  }
  cudaStreamDestroy(stream);
}

TEST(TuneGpu, CacheSavedHereLoadsIntoAFreshContext) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  NoTuningEnv env;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("fp8gemm_tune_gpu_" + std::to_string(::getpid()) + ".json")).string();
  std::filesystem::remove(path);
  const std::vector<Problem> ps = {problem(32, 4096, 4096), problem(256, 4096, 4096)};
  {
    Context ctx;
    const auto d = tune(ctx, ps);
    ASSERT_EQ(d.size(), 2u);
    EXPECT_TRUE(d[0].measured) << d[0].reason;
    save_cache(ctx, path);
  }
  Context fresh;
  EXPECT_EQ(load_cache(fresh, path), 2u);
  std::filesystem::remove(path);
}

// What tune writes at default_cache_path (here the conventional file under FP8GEMM_CACHE_DIR),
// a fresh Context loads by itself on first use.
TEST(TuneGpu, ConventionalCacheFileLoadsItselfInAFreshContext) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  NoTuningEnv env;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fp8gemm_tune_gpu_dir_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  env.unset("FP8GEMM_CACHE").set("FP8GEMM_CACHE_DIR", dir.string());
  const std::vector<Problem> ps = {problem(64, 4096, 4096)};
  {
    Context ctx;
    ASSERT_EQ(default_cache_path(ctx.device()), conventional_cache_path(ctx.device()));
    EXPECT_EQ(default_cache_path(ctx.device()).rfind(dir.string(), 0), 0u);
    tune(ctx, ps);
    save_cache(ctx, default_cache_path(ctx.device()));  // creates the directory
  }
  Context fresh;
  install_autotuner(fresh);
  auto* sel = dynamic_cast<tuning::TuningSelector*>(fresh.selector().get());
  ASSERT_NE(sel, nullptr);
  EXPECT_EQ(sel->cache().size(), 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fp8gemm

namespace fp8gemm {
namespace {

using testing::problem;

// Lazy tuning as FP8GEMM_TUNE=`tune` asks (nullptr: only inside an AutotuneScope), with no cache
// file loaded or written (the caller's FP8GEMM_CACHE and the conventional location stay out, or a
// key an earlier test tuned would already be cached).
struct TuningEnv : testing::ScopedEnv {
  explicit TuningEnv(const char* tune) {
    set("FP8GEMM_CACHE", "off");
    unset("FP8GEMM_CACHE_DIR");
    if (tune)
      set("FP8GEMM_TUNE", tune);
    else
      unset("FP8GEMM_TUNE");
  }
};

size_t free_device_bytes() {
  size_t free = 0, total = 0;
  FP8GEMM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

// One call's device buffers for `p` (e4m3 inputs, bf16 out, unit scales 16 bytes apart).
struct CallBuffers {
  DeviceBuffer a, b, out, scales;
  explicit CallBuffers(const Problem& p)
      : a(p.m * p.k), b(p.n * p.k), out(p.m * p.n * 2), scales(8 * sizeof(float)) {
    const float one[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    scales.upload(one, sizeof one);
  }
  GemmArgs args() const { return {a.get(), b.get(), scales.as<float>(), scales.as<float>() + 4, out.get()}; }
};

// A 64 MiB weight: the timer rotates >= 2 copies of it (>= 2x L2), 128 MiB or more.
constexpr int64_t kBigN = 8192, kBigK = 8192;
constexpr size_t kTimerWeightsAtLeast = 100ull << 20;

// Issue 44: the lazy tuner kept its weight copies after the last scope ended. The scope's end
// frees them, and the workspace of the timer's stream.
TEST(TuneGpu, TheLastScopeToEndReleasesTheTunersBuffers) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  TuningEnv env(nullptr);
  Context ctx;
  install_autotuner(ctx);
  auto* sel = dynamic_cast<tuning::TuningSelector*>(ctx.selector().get());
  ASSERT_NE(sel, nullptr);
  const Problem p = problem(64, kBigN, kBigK);
  CallBuffers buffers(p);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  size_t streams_while_tuning = 0, free_while_tuning = 0;
  {
    AutotuneScope scope(true, {}, &ctx);
    ctx.run(p, buffers.args(), stream);  // tunes the key first
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_TRUE(sel->cache().find(tuning::key_of(p)));
    EXPECT_TRUE(sel->has_timer());
    streams_while_tuning = ctx.stream_workspaces();
    free_while_tuning = free_device_bytes();
  }
  EXPECT_FALSE(sel->has_timer());
  EXPECT_EQ(ctx.stream_workspaces(), streams_while_tuning - 1) << "the timer's stream keeps its workspace";
  EXPECT_GE(free_device_bytes(), free_while_tuning + kTimerWeightsAtLeast);
  ctx.release_stream(stream);
  cudaStreamDestroy(stream);
}

// tune() returns with its timer gone (no scope is active), and no workspace left behind for the
// timer's stream: each call made a stream of its own.
TEST(TuneGpu, TuneReturnsWithTheTimersMemoryFreed) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  TuningEnv env(nullptr);
  Context ctx;
  install_autotuner(ctx);
  auto* sel = dynamic_cast<tuning::TuningSelector*>(ctx.selector().get());
  ASSERT_NE(sel, nullptr);
  const size_t streams = ctx.stream_workspaces();
  TuneOptions o;
  o.key_budget_ms = 20;
  for (int64_t m : {16, 32, 64}) {
    EXPECT_TRUE(tune(ctx, {problem(m, 4096, 4096)}, o).front().measured);
    EXPECT_FALSE(sel->has_timer());
    EXPECT_EQ(ctx.stream_workspaces(), streams);
  }
}

// With FP8GEMM_TUNE=1 lazy tuning never ends: the buffers stay until release_tuning_buffers.
TEST(TuneGpu, ReleaseTuningBuffersFreesTheLazyTimer) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  TuningEnv env("1");
  Context ctx;
  install_autotuner(ctx);
  auto* sel = dynamic_cast<tuning::TuningSelector*>(ctx.selector().get());
  ASSERT_NE(sel, nullptr);
  const Problem p = problem(64, kBigN, kBigK), next = problem(128, kBigN, kBigK);
  CallBuffers buffers(next);  // for the larger of the two calls
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ctx.run(p, buffers.args(), stream);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_TRUE(sel->has_timer());
  const size_t streams = ctx.stream_workspaces(), free_before = free_device_bytes();
  release_tuning_buffers(ctx);
  EXPECT_FALSE(sel->has_timer());
  EXPECT_EQ(ctx.stream_workspaces(), streams - 1);
  EXPECT_GE(free_device_bytes(), free_before + kTimerWeightsAtLeast);
  ctx.run(next, buffers.args(), stream);  // the next key tunes with a new timer
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_TRUE(sel->cache().find(tuning::key_of(next)));
  release_tuning_buffers(ctx);
  ctx.release_stream(stream);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace fp8gemm
