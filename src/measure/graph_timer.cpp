#include "measure/graph_timer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "core/cuda_check.h"
#include "core/device_buffer.h"
#include "core/steady_clock.h"
#include "fp8gemm/backend.h"
#include "fp8gemm/fp8gemm.h"
#include "measure/graph_timer_kernels.h"
#include "measure/rounds.h"

namespace fp8gemm {

namespace {

constexpr size_t kCopyAlignment = 256;

size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

// Makes `device` current for the lifetime of the guard (the Context may not be on the current
// device), restoring the caller's device afterwards.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    FP8GEMM_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) FP8GEMM_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

// An instantiated graph of `calls` back-to-back calls of one candidate.
struct GraphExec {
  cudaGraphExec_t exec = nullptr;
  int calls = 0;
  bool flush_before_replay = false;  // its calls touch < 2x L2 of weights: evict L2 before each replay
  GraphExec() = default;
  GraphExec(GraphExec&& o) noexcept : exec(std::exchange(o.exec, nullptr)), calls(o.calls),
                                      flush_before_replay(o.flush_before_replay) {}
  GraphExec& operator=(GraphExec&& o) noexcept {
    std::swap(exec, o.exec);
    calls = o.calls;
    flush_before_replay = o.flush_before_replay;
    return *this;
  }
  ~GraphExec() {
    if (exec) cudaGraphExecDestroy(exec);
  }
};

// Grows `buf` to at least `bytes` (contents are not kept).
void ensure_size(DeviceBuffer& buf, size_t bytes) {
  if (buf.bytes() >= bytes) return;
  buf = DeviceBuffer();  // free first: the old and the new one need not fit together
  buf = DeviceBuffer(bytes);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

struct GraphTimer::Impl {
  Context& ctx;
  GraphTimerOptions options;
  cudaStream_t stream = nullptr;
  size_t l2_bytes = 0;

  // Weights of the current (batch, n, k, b_type), `copies` distinct copies `copy_stride` apart.
  Problem weight_key;
  bool have_weights = false;
  DeviceBuffer weights;
  size_t copy_bytes = 0, copy_stride = 0;
  int copies = 0;
  int weight_allocations = 0;

  DeviceBuffer a, out, out_ref, scales, scratch, flush;
  DeviceBuffer clock_slots;  // GraphTimerOptions::record_clock: two samples of sample_sm_clocks
  uint64_t draws = 0;  // seeds fresh activations per measurement

  // Calls per replay already probed for the current problem, by tactic name.
  Problem memo_problem;
  std::map<std::string, int> calls_memo;
  std::set<std::string> replayed;  // tactics this timer has run (any problem): their kernels are loaded

  std::vector<cudaEvent_t> events;       // timed replays and probes
  std::vector<cudaEvent_t> warm_events;  // the warm-up round run while capturing (RoundZero)
  // GraphTimerOptions::keep_busy_ms: the graph kept replaying after a heavy measurement, whether
  // replays of it may still be queued, and when they should end (host time, estimated).
  GraphExec heater;
  cudaEvent_t heater_end = nullptr;
  bool heating = false;
  double heater_end_ms = 0;
  double kept_busy_ms = 0;  // GPU time of the heater replays queued so far (GraphTimer::kept_busy_ms)
  double last_busy_ms = -1e300;  // host time at which the GPU last finished a measurement
  double last_heavy_ms = -1e300;  // ... one whose fastest candidate's calls were >= settle_min_call_us
  std::map<std::string, double> spent;  // GraphTimer::spent_ms

  // MeasureOptions::load_between_us: power_load_problem() on buffers of its own (made on first
  // use, random data: zeros would draw less power), one call a graph, untimed.
  struct PowerLoad {
    DeviceBuffer a, b, out;
    GraphExec graph;
    double call_us = 0;
  };
  std::unique_ptr<PowerLoad> load;
  double load_ms = 0;  // GPU time of the load queued so far (GraphTimer::power_load_ms)

  // Adds the wall time since `start` to stage `stage` and returns now.
  double lap(const char* stage, double start) {
    const double now = steady_ms();
    spent[stage] += now - start;
    return now;
  }

  Impl(Context& c, GraphTimerOptions o) : ctx(c), options(o) {}

  static bool same_weights(const Problem& x, const Problem& y) {
    return x.batch == y.batch && x.n == y.n && x.k == y.k && x.b_type == y.b_type;
  }

  // Buffers for `p`: weights kept across calls with the same (batch, n, k), fresh activations.
  void prepare(const Problem& p) {
    // The heater's graph reads the weights and activations and writes `out`: nothing it uses may
    // be freed while it runs.
    const size_t a_bytes = size_t(p.batch * p.m * p.k) * dtype_bytes(p.a_type);
    const size_t out_bytes = size_t(p.batch * p.m * p.n) * dtype_bytes(p.out_type);
    const bool new_weights = !have_weights || !same_weights(weight_key, p);
    if (new_weights || a.bytes() < a_bytes || out.bytes() < out_bytes) drain_heater();
    if (new_weights) {
      weights = DeviceBuffer();
      have_weights = false;
      copy_bytes = size_t(p.batch * p.n * p.k) * dtype_bytes(p.b_type);
      copy_stride = round_up(copy_bytes, kCopyAlignment);
      copies = weight_copies_for(copy_bytes, l2_bytes, options.weight_l2_multiple);
      weights = DeviceBuffer(copy_stride * size_t(copies));
      measure_kernels::fill_random_fp8(weights.get(), weights.bytes(), p.b_type, options.seed, stream);
      weight_key = p;
      have_weights = true;
      ++weight_allocations;
    }
    ensure_size(a, a_bytes);
    measure_kernels::fill_random_fp8(a.get(), a_bytes, p.a_type, options.seed + 1 + ++draws, stream);
    ensure_size(out, out_bytes);
    if (!(memo_problem == p)) {
      memo_problem = p;
      calls_memo.clear();
    }
    // Workspace is allocated on first use of a stream, which must not happen inside capture.
    ctx.workspace(stream);
  }

  GemmArgs args(int call, int first_copy, void* output) const {
    const int copy = (first_copy + call) % copies;
    const auto* w = static_cast<const uint8_t*>(weights.get()) + size_t(copy) * copy_stride;
    return GemmArgs{a.get(), w, scales.as<float>(), scales.as<float>() + 4, output};
  }

  float elapsed_ms(cudaEvent_t start, cudaEvent_t stop) {
    float ms = 0;
    FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }

  // Calls per replay for every candidate (MeasureOptions::calls_per_replay, else the memo, else a
  // probe: one eager call to load modules and warm up, then one timed call). The probes of all
  // candidates are enqueued together and synchronized once instead of once each (H200 session
  // 27: still ~7 s of a whole-suite tune, the host's cost of the eager calls). A candidate whose
  // probe fails gets 0 and its error.
  std::vector<int> calls_for_all(const Problem& p, const std::vector<Tactic>& candidates, const MeasureOptions& o,
                                 std::vector<Timing>& timings) {
    std::vector<int> calls(candidates.size(), 0);
    std::vector<size_t> probed;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (o.calls_per_replay > 0) {
        calls[i] = o.calls_per_replay;
        continue;
      }
      auto it = calls_memo.find(candidates[i].name());
      if (it != calls_memo.end())
        calls[i] = it->second;
      else
        probed.push_back(i);
    }
    if (probed.empty()) return calls;
    ensure_events(2 * probed.size());
    std::vector<char> queued(probed.size(), 0);
    for (size_t j = 0; j < probed.size(); ++j) {
      const size_t i = probed[j];
      try {
        ctx.run_tactic(p, candidates[i], args(0, 0, out.get()), stream);
        FP8GEMM_CUDA_CHECK(cudaEventRecord(events[2 * j], stream));
        ctx.run_tactic(p, candidates[i], args(1, 0, out.get()), stream);
        FP8GEMM_CUDA_CHECK(cudaEventRecord(events[2 * j + 1], stream));
        queued[j] = 1;
      } catch (const std::exception& e) {
        cudaGetLastError();
        timings[i].error = e.what();
      }
    }
    // A kernel that faults leaves a sticky error: nothing after it can be trusted, so this throws.
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (size_t j = 0; j < probed.size(); ++j) {
      if (!queued[j]) continue;
      const size_t i = probed[j];
      calls[i] = calls_per_replay_for(1000.0 * elapsed_ms(events[2 * j], events[2 * j + 1]), options);
      calls_memo[candidates[i].name()] = calls[i];
    }
    return calls;
  }

  // Captures `calls` calls of `t` starting at weight copy `first_copy`. On any failure the
  // capture is ended, the partial graph destroyed and non-sticky errors cleared, then it throws.
  GraphExec capture(const Problem& p, const Tactic& t, int calls, int first_copy) {
    GraphExec g = capture_calls(t.name(), [&] {
      for (int i = 0; i < calls; ++i) ctx.run_tactic(p, t, args(i, first_copy, out.get()), stream);
    });
    g.calls = calls;
    g.flush_before_replay = double(calls) * double(copy_bytes) < 2.0 * double(l2_bytes);
    return g;
  }

  // Captures what `enqueue` puts on the stream into an instantiated, uploaded graph (`what` names
  // it in errors). On any failure the capture is ended, the partial graph destroyed and non-sticky
  // errors cleared, then it throws.
  template <class Enqueue>
  GraphExec capture_calls(const std::string& what, Enqueue&& enqueue) {
    cudaGraph_t graph = nullptr;
    FP8GEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      cudaStreamEndCapture(stream, &graph);
      if (graph) cudaGraphDestroy(graph);
      cudaGetLastError();
      throw;
    }
    cudaError_t err = cudaStreamEndCapture(stream, &graph);
    if (err != cudaSuccess) {
      if (graph) cudaGraphDestroy(graph);
      cudaGetLastError();
      FP8GEMM_FAIL(kCuda, "capturing ", what, " failed: ", cudaGetErrorString(err));
    }
    GraphExec g;
    err = cudaGraphInstantiate(&g.exec, graph, 0);
    cudaGraphDestroy(graph);
    if (err != cudaSuccess) {
      g.exec = nullptr;
      cudaGetLastError();
      FP8GEMM_FAIL(kCuda, "instantiating the graph of ", what, " failed: ", cudaGetErrorString(err));
    }
    FP8GEMM_CUDA_CHECK(cudaGraphUpload(g.exec, stream));
    return g;
  }

  static void ensure_events(std::vector<cudaEvent_t>& pool, size_t n) {
    while (pool.size() < n) {
      cudaEvent_t e;
      FP8GEMM_CUDA_CHECK(cudaEventCreate(&e));
      pool.push_back(e);
    }
  }
  void ensure_events(size_t n) { ensure_events(events, n); }

  // Queues replays of `g` (the fastest candidate of a heavy measurement, `call_us` a call) for
  // about keep_busy_ms and keeps the graph alive until they have run. Not timed.
  void keep_busy(GraphExec&& g, double call_us) {
    const double replay_ms = g.calls * call_us / 1000;
    if (!(options.keep_busy_ms > 0) || !(replay_ms > 0)) return;
    heater = std::move(g);
    const int n = int(std::clamp(std::ceil(options.keep_busy_ms / replay_ms), 1.0, 1000.0));
    int launched = 0;
    for (; launched < n; ++launched)
      if (cudaGraphLaunch(heater.exec, stream) != cudaSuccess) {
        cudaGetLastError();  // the graph just ran: a failure here is not the candidate's; stop heating
        break;
      }
    if (!heater_end) FP8GEMM_CUDA_CHECK(cudaEventCreateWithFlags(&heater_end, cudaEventDisableTiming));
    FP8GEMM_CUDA_CHECK(cudaEventRecord(heater_end, stream));
    heating = true;
    heater_end_ms = steady_ms() + launched * replay_ms;
    kept_busy_ms += launched * replay_ms;
  }

  // Waits for queued heater replays. The GPU was busy until now if they were still running,
  // else until about when they were due to end; that counts as the end of a heavy measurement.
  void drain_heater() {
    if (!heating) return;
    const bool running = cudaEventQuery(heater_end) == cudaErrorNotReady;
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    heater_done(running, steady_ms());
  }

  // The heater's replays are over (the stream has been synchronized since they were queued): the
  // GPU was busy until `at` if they were still running then, else until about when they were
  // due to end.
  void heater_done(bool running_at, double at) {
    if (!heating) return;
    heating = false;
    last_busy_ms = last_heavy_ms = running_at ? at : std::min(at, heater_end_ms);
  }

  // Queues about `us` of the power load (MeasureOptions::load_between_us) on the stream.
  void queue_load(double us) {
    if (!(us > 0)) return;
    if (!load) make_load();
    const int n = int(std::clamp(std::ceil(us / load->call_us), 1.0, 10000.0));
    for (int i = 0; i < n; ++i) FP8GEMM_CUDA_CHECK(cudaGraphLaunch(load->graph.exec, stream));
    load_ms += n * load->call_us / 1000;
  }

  void make_load() {
    const Problem p = power_load_problem();
    Backend* b = ctx.backend("cublaslt");
    FP8GEMM_REQUIRE(b && b->available().ok, kUnsupported,
                    "the power load (MeasureOptions::load_between_us) runs on cuBLASLt, which is not available");
    const Tactic t = b->default_tactic(p);
    auto l = std::make_unique<PowerLoad>();
    l->a = DeviceBuffer(size_t(p.m * p.k));
    l->b = DeviceBuffer(size_t(p.n * p.k));
    l->out = DeviceBuffer(size_t(p.m * p.n) * dtype_bytes(p.out_type));
    measure_kernels::fill_random_fp8(l->a.get(), l->a.bytes(), p.a_type, options.seed + 7, stream);
    measure_kernels::fill_random_fp8(l->b.get(), l->b.bytes(), p.b_type, options.seed + 11, stream);
    const GemmArgs args{l->a.get(), l->b.get(), scales.as<float>(), scales.as<float>() + 4, l->out.get()};
    ctx.workspace(stream);
    ctx.run_tactic(p, t, args, stream);  // loads its kernels before the capture
    l->graph = capture_calls("the power load (" + t.name() + ")", [&] { ctx.run_tactic(p, t, args, stream); });
    // Its time a call, warm: to size the load queued for a given GPU time.
    ensure_events(2);
    constexpr int kCalls = 8;
    for (int i = 0; i < 2; ++i) FP8GEMM_CUDA_CHECK(cudaGraphLaunch(l->graph.exec, stream));
    FP8GEMM_CUDA_CHECK(cudaEventRecord(events[0], stream));
    for (int i = 0; i < kCalls; ++i) FP8GEMM_CUDA_CHECK(cudaGraphLaunch(l->graph.exec, stream));
    FP8GEMM_CUDA_CHECK(cudaEventRecord(events[1], stream));
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    l->call_us = std::max(1.0, 1000.0 * elapsed_ms(events[0], events[1]) / kCalls);
    load = std::move(l);
  }

  // Round 0 of the warm-up, run while the graphs are captured (measure): each graph's replay is
  // launched right after its capture, so the GPU runs them while the host captures the next.
  struct RoundZero {
    double start_ms = 0;  // host time when capturing began (the load this measurement puts on)
    double gpu_ms = 0;    // GPU time of its replays
    long calls = 0;
  };

  // After round 0: more warm-up rounds (round-robin, each synchronized) while the calls are
  // heavy (>= settle_min_call_us, judged from round 0's GPU time) until the GPU has run this load
  // for the settle time since round 0 began, or while light ones (< recover_below_call_us)
  // follow a heavy measurement by less than recover_ms (GraphTimerOptions), and until
  // `warmup_replays` rounds have run. Nothing is timed here.
  void settle(const std::vector<GraphExec>& graphs, std::vector<Timing>& timings, int warmup_replays,
              bool may_settle, const RoundZero& r0) {
    const bool enabled = may_settle && options.settle_ms > 0;
    const bool recovering = may_settle && options.recover_ms > 0 && r0.start_ms - last_heavy_ms < options.recover_ms;
    const double target = settle_target_ms(options, r0.start_ms - last_busy_ms);
    const double call_us = r0.calls > 0 ? 1000 * r0.gpu_ms / double(r0.calls) : 0;
    const bool heavy = r0.calls > 0 && call_us >= options.settle_min_call_us;
    for (int round = 1;; ++round) {
      if (round >= warmup_replays) {
        const bool settling = enabled && heavy && steady_ms() - r0.start_ms < target;
        const bool recovered = !recovering || call_us >= options.recover_below_call_us ||
                               steady_ms() - last_heavy_ms >= options.recover_ms;
        if (!settling && recovered) break;
      }
      long calls = 0;
      for (size_t i = 0; i < graphs.size(); ++i)
        if (timings[i].ok && launch(graphs[i], timings[i])) calls += graphs[i].calls;
      FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
      if (calls == 0) break;
    }
  }

  // Launches one replay, between events `start` and `end` when given (the L2 flush, when the
  // graph's weights do not cover 2x L2, runs before `start`: it is not timed); false (error
  // cleared, recorded in `t`) if the launch fails.
  bool launch(const GraphExec& g, Timing& t, cudaEvent_t start = nullptr, cudaEvent_t end = nullptr) {
    if (g.flush_before_replay) {
      ensure_size(flush, 2 * l2_bytes);
      measure_kernels::read_through(flush.get(), flush.bytes(), stream);
    }
    if (start) FP8GEMM_CUDA_CHECK(cudaEventRecord(start, stream));
    const cudaError_t err = cudaGraphLaunch(g.exec, stream);
    if (err != cudaSuccess) {
      cudaGetLastError();
      t.ok = false;
      t.error = detail::cat("launching the graph of ", t.tactic.name(), " failed: ", cudaGetErrorString(err));
      return false;
    }
    if (end) FP8GEMM_CUDA_CHECK(cudaEventRecord(end, stream));
    return true;
  }
  // A timed replay into `slot` (r * n + i for replay r of candidate i of n): events[2 * slot] and
  // events[2 * slot + 1] hold its span.
  bool timed_replay(const GraphExec& g, Timing& t, size_t slot) {
    return launch(g, t, events[2 * slot], events[2 * slot + 1]);
  }
};

namespace {

// `o` with every FP8GEMM_* override of the timer this process's environment sets.
GraphTimerOptions with_environment(GraphTimerOptions o) {
  o = with_settle_env(o, std::getenv("FP8GEMM_SETTLE_MS"), std::getenv("FP8GEMM_SETTLE_MIN_CALL_US"),
                      std::getenv("FP8GEMM_SETTLE_BUSY_MS"), std::getenv("FP8GEMM_RECOVER_MS"),
                      std::getenv("FP8GEMM_KEEP_BUSY_MS"));
  o = with_clock_env(o, std::getenv("FP8GEMM_RECORD_CLOCK"));
  o = with_weights_env(o, std::getenv("FP8GEMM_WEIGHT_L2_MULTIPLE"));
  o = with_load_env(o, std::getenv("FP8GEMM_LOAD_BETWEEN_US"));
  return with_overlap_env(o, std::getenv("FP8GEMM_OVERLAP_CAPTURE"));
}

}  // namespace

GraphTimer::GraphTimer(Context& ctx, GraphTimerOptions options)
    : impl_(std::make_unique<Impl>(ctx, with_environment(options))) {
  DeviceGuard guard(ctx.device().device);
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking));
  impl_->l2_bytes = std::max<size_t>(ctx.device().l2_bytes, 1 << 20);
  // Two scalars 16 bytes apart: cuBLASLt needs 16-byte aligned scale pointers.
  impl_->scales = DeviceBuffer(8 * sizeof(float));
  const float ones[8] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  impl_->scales.upload(ones, sizeof ones);
  impl_->scratch = DeviceBuffer(64);
}

GraphTimer::~GraphTimer() {
  cudaStreamSynchronize(impl_->stream);
  for (cudaEvent_t e : impl_->events) cudaEventDestroy(e);
  for (cudaEvent_t e : impl_->warm_events) cudaEventDestroy(e);
  if (impl_->heater_end) cudaEventDestroy(impl_->heater_end);
  cudaStreamDestroy(impl_->stream);
}

cudaStream_t GraphTimer::stream() const { return impl_->stream; }
std::map<std::string, double> GraphTimer::spent_ms() const { return impl_->spent; }
double GraphTimer::kept_busy_ms() const { return impl_->kept_busy_ms; }
double GraphTimer::power_load_ms() const { return impl_->load_ms; }
int GraphTimer::weight_copies() const { return impl_->copies; }
int GraphTimer::weight_allocations() const { return impl_->weight_allocations; }

int GraphTimer::calls_per_replay(const Problem& p, const Tactic& t) const {
  if (!(impl_->memo_problem == p)) return 0;
  auto it = impl_->calls_memo.find(t.name());
  return it == impl_->calls_memo.end() ? 0 : it->second;
}

// How long the GPU is held (measure_kernels::hold) before a timed replay that may be enqueued
// onto an idle stream: several times what the host takes to record an event and launch a graph.
constexpr double kHoldUs = 40;

std::vector<Timing> GraphTimer::measure(const Problem& p, const std::vector<Tactic>& candidates,
                                        const MeasureOptions& options) {
  Impl& s = *impl_;
  DeviceGuard guard(s.ctx.device().device);
  FP8GEMM_REQUIRE(options.replays >= 1, kInvalidArgument, "replays must be >= 1, got ", options.replays);
  std::vector<Timing> timings(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) timings[i].tactic = candidates[i];
  if (p.empty()) {
    for (Timing& t : timings) t.ok = true;
    return timings;
  }
  double since = steady_ms();  // for GraphTimer::spent_ms
  s.prepare(p);
  since = s.lap("prepare", since);

  // The host's capture overlaps GPU work. A round with no warm-up and no settling (the tuner's
  // short rounds of light calls) times each graph's first replay right after its capture, while
  // the host captures the next; any other round runs its first warm-up round that way (round 0).
  // Round-robin holds either way: replay r of every candidate before replay r + 1 of any. Why:
  // the GPU sat idle while the host captured (8-11 s of host time in a whole-suite tune; H200
  // session 27: the tune 107.8 s with the overlap, 111.4 s without).
  const bool first_replay_in_capture = !options.settle && options.warmup_replays == 0;
  if (first_replay_in_capture) s.drain_heater();  // such a round is light: nothing heavy before it
  const bool heater_running = s.heating && cudaEventQuery(s.heater_end) == cudaErrorNotReady;
  Impl::RoundZero r0;
  r0.start_ms = steady_ms();

  const std::vector<int> calls = s.calls_for_all(p, candidates, options, timings);
  since = s.lap("probe", since);
  // MeasureOptions::load_between_us (or the timer's own, with a lead of ten times it): the GPU
  // runs the load while the host captures, and again before each cycle of timed replays.
  const double load_between_us = std::max(options.load_between_us, s.options.load_between_us);
  const double load_lead_us = std::max(options.load_lead_us, 10 * s.options.load_between_us);
  const bool loaded = load_between_us > 0 || load_lead_us > 0;
  s.queue_load(load_lead_us);
  since = s.lap("load", since);

  const size_t n = candidates.size();
  s.ensure_events(2 * n * size_t(options.replays));
  Impl::ensure_events(s.warm_events, 2 * n);
  std::vector<char> recorded(n * size_t(options.replays), 0), warmed(n, 0);

  // GraphTimerOptions::record_clock: every SM's cycle counter and the global timer, sampled
  // right before the first timed replay and right after the last (outside every replay's events).
  const size_t clock_words = 2 * size_t(measure_kernels::kClockSlots);
  uint64_t* clock_start = nullptr;
  auto sample_clock_start = [&] {
    if (!s.options.record_clock) return;
    ensure_size(s.clock_slots, 2 * clock_words * sizeof(uint64_t));
    clock_start = s.clock_slots.as<uint64_t>();
    FP8GEMM_CUDA_CHECK(cudaMemsetAsync(clock_start, 0, 2 * clock_words * sizeof(uint64_t), s.stream));
    measure_kernels::sample_sm_clocks(clock_start, s.ctx.device().sm_count, s.stream);
  };
  if (first_replay_in_capture) sample_clock_start();

  // Capture every candidate; one that fails here is out, the others go on. Each graph starts at
  // a different weight copy, so round-robin neighbours do not share warm lines.
  std::vector<GraphExec> graphs(n);
  cudaEvent_t last_start = nullptr;  // of the last timed replay queued by start()
  // What runs of graph i as soon as it exists: its first timed replay, or its round-0 warm-up.
  auto start = [&](size_t i) {
    if (first_replay_in_capture) {
      // A tactic's first replay in this process gets a warm-up: it may load its kernels' modules.
      if (!s.replayed.count(candidates[i].name()) && !s.launch(graphs[i], timings[i])) return;
      // No hold while the previous timed replay has not even started: a whole replay is queued.
      if (!(last_start && cudaEventQuery(last_start) == cudaErrorNotReady)) measure_kernels::hold(kHoldUs, s.stream);
      recorded[i] = s.timed_replay(graphs[i], timings[i], i);
      if (recorded[i]) last_start = s.events[2 * i];
    } else {
      warmed[i] = s.launch(graphs[i], timings[i], s.warm_events[2 * i], s.warm_events[2 * i + 1]);
    }
  };
  for (size_t i = 0; i < n; ++i) {
    if (calls[i] == 0) continue;  // its probe failed (timings[i].error says why)
    try {
      graphs[i] = s.capture(p, candidates[i], calls[i], int((i * size_t(calls[i])) % size_t(s.copies)));
      timings[i].ok = true;
    } catch (const std::exception& e) {
      timings[i].ok = false;
      timings[i].error = e.what();
    }
    since = s.lap("capture", since);
    if (timings[i].ok && s.options.overlap_capture) start(i);
  }
  if (!s.options.overlap_capture)  // GraphTimerOptions::overlap_capture off: the same, after capturing
    for (size_t i = 0; i < n; ++i)
      if (timings[i].ok) start(i);

  if (!first_replay_in_capture) {
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(s.stream));
    for (size_t i = 0; i < n; ++i)
      if (warmed[i] && timings[i].ok) {
        r0.gpu_ms += s.elapsed_ms(s.warm_events[2 * i], s.warm_events[2 * i + 1]);
        r0.calls += graphs[i].calls;
      }
    s.heater_done(heater_running, r0.start_ms);
    s.settle(graphs, timings, options.warmup_replays, options.settle, r0);
    since = s.lap("settle", since);
    sample_clock_start();
  }
  for (const Timing& t : timings)
    if (t.ok) s.replayed.insert(t.tactic.name());

  // The timed round-robin (the rest of it, where the first replays ran while capturing). Nothing
  // synchronizes until all are enqueued, so the GPU runs them back to back.
  bool held = false;
  for (int r = first_replay_in_capture ? 1 : 0; r < options.replays; ++r) {
    if (load_between_us > 0) {
      s.queue_load(load_between_us);
      held = true;  // the stream is busy: what follows is queued behind the load
    }
    for (size_t i = 0; i < n; ++i) {
      if (!timings[i].ok) continue;
      if (!held) measure_kernels::hold(kHoldUs, s.stream);
      held = true;
      const size_t slot = size_t(r) * n + i;
      recorded[slot] = s.timed_replay(graphs[i], timings[i], slot);
    }
  }
  if (clock_start) measure_kernels::sample_sm_clocks(clock_start + clock_words, s.ctx.device().sm_count, s.stream);
  // A kernel that faults leaves a sticky error: nothing after it can be trusted, so this throws.
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(s.stream));
  s.last_busy_ms = s.lap("replays", since);
  double clock_mhz = 0;
  if (clock_start) {
    std::vector<uint64_t> samples(2 * clock_words);
    FP8GEMM_CUDA_CHECK(cudaMemcpy(samples.data(), clock_start, samples.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    clock_mhz = mean_sm_clock_mhz(samples.data(), samples.data() + clock_words, measure_kernels::kClockSlots);
  }

  for (size_t i = 0; i < n; ++i) {
    if (!timings[i].ok) continue;
    for (int r = 0; r < options.replays; ++r) {
      const size_t slot = size_t(r) * n + i;
      if (!recorded[slot]) continue;
      timings[i].samples_us.push_back(1000.0 * s.elapsed_ms(s.events[2 * slot], s.events[2 * slot + 1]) /
                                      graphs[i].calls);
    }
    timings[i].median_us = median(timings[i].samples_us);
    timings[i].clock_mhz = clock_mhz;
  }
  // Heavy for recover_ms: the fastest candidate's calls are heavy (one slow candidate among light
  // ones does not make the load heavy).
  size_t fastest = n;
  for (size_t i = 0; i < n; ++i)
    if (timings[i].ok && !timings[i].samples_us.empty() &&
        (fastest == n || timings[i].median_us < timings[fastest].median_us))
      fastest = i;
  // Under the power load the GPU ran heavy work: light measurements after it recover.
  if (loaded) s.last_heavy_ms = s.last_busy_ms;
  if (fastest < n && timings[fastest].median_us >= s.options.settle_min_call_us) {
    s.last_heavy_ms = s.last_busy_ms;
    s.keep_busy(std::move(graphs[fastest]), timings[fastest].median_us);
  }
  return timings;
}

std::vector<double> GraphTimer::compare_outputs(const Problem& p, const Tactic& reference,
                                                const std::vector<Tactic>& candidates) {
  Impl& s = *impl_;
  DeviceGuard guard(s.ctx.device().device);
  struct CompareLap {  // GraphTimer::spent_ms: "compare", however this returns
    Impl& s;
    double since = steady_ms();
    ~CompareLap() { s.lap("compare", since); }
  } compare_lap{s};
  std::vector<double> result(candidates.size(), INFINITY);
  if (p.empty()) return std::vector<double>(candidates.size(), 0.0);
  s.drain_heater();
  s.prepare(p);
  const size_t out_bytes = size_t(p.batch * p.m * p.n) * dtype_bytes(p.out_type);
  ensure_size(s.out_ref, out_bytes);
  try {
    FP8GEMM_CUDA_CHECK(cudaMemsetAsync(s.out_ref.get(), 0xFF, out_bytes, s.stream));
    s.ctx.run_tactic(p, reference, s.args(0, 0, s.out_ref.get()), s.stream);
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(s.stream));
  } catch (const Error&) {
    cudaGetLastError();
    return result;  // without a reference output nothing can be trusted
  }
  const size_t count = size_t(p.batch * p.m * p.n);
  for (size_t i = 0; i < candidates.size(); ++i) {
    try {
      // Poisoned (NaN) first, so elements a candidate never writes show up.
      FP8GEMM_CUDA_CHECK(cudaMemsetAsync(s.out.get(), 0xFF, out_bytes, s.stream));
      s.ctx.run_tactic(p, candidates[i], s.args(0, 0, s.out.get()), s.stream);
      const measure_kernels::Difference d =
          measure_kernels::compare(s.out.get(), s.out_ref.get(), count, p.out_type, s.scratch.get(), s.stream);
      if (d.nan) continue;
      if (d.max_abs_ref > 0)
        result[i] = d.max_abs_diff / d.max_abs_ref;
      else if (d.max_abs_diff == 0)
        result[i] = 0;
    } catch (const Error&) {
      cudaGetLastError();
    }
  }
  return result;
}

}  // namespace fp8gemm
