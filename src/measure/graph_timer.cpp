// GraphTimer (fp8gemm/measure.h): measure() and compare_outputs(), on the state and steps of
// graph_timer_impl.h.
#include "fp8gemm/measure.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include "fp8gemm/check.h"
#include "core/device_buffer.h"
#include "core/steady_clock.h"
#include "fp8gemm/fp8gemm.h"
#include "measure/graph_timer_impl.h"
#include "measure/graph_timer_kernels.h"

namespace fp8gemm {

namespace {

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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

GraphTimer::GraphTimer(Context& ctx, GraphTimerOptions options) : impl_(std::make_unique<Impl>(ctx, options)) {
  DeviceGuard guard(ctx.device().device);
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking));
  impl_->l2_bytes = std::max<size_t>(ctx.device().l2_bytes, 1 << 20);
  impl_->sm_count = ctx.device().sm_count;
  // Two scalars 16 bytes apart: cuBLASLt needs 16-byte aligned scale pointers.
  impl_->scales = DeviceBuffer(8 * sizeof(float));
  const float ones[8] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  impl_->scales.upload(ones, sizeof ones);
  impl_->scratch = DeviceBuffer(64);
}

GraphTimer::~GraphTimer() {
  cudaStreamSynchronize(impl_->stream);
  try {
    // Its stream ends here: the Context's workspace for it would never be used again.
    impl_->ctx.release_stream(impl_->stream);
  } catch (const std::exception&) {
  }
  for (cudaEvent_t e : impl_->events) cudaEventDestroy(e);
  for (cudaEvent_t e : impl_->warm_events) cudaEventDestroy(e);
  if (impl_->heater_end) cudaEventDestroy(impl_->heater_end);
  cudaStreamDestroy(impl_->stream);
}

cudaStream_t GraphTimer::stream() const { return impl_->stream; }
std::map<std::string, double> GraphTimer::spent_ms() const { return impl_->spent; }
double GraphTimer::kept_busy_ms() const { return impl_->kept_busy_ms; }
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
  // otherwise the GPU sits idle while the host captures, a large share of a tune's host time.
  const bool first_replay_in_capture = !options.settle && options.warmup_replays == 0;
  if (first_replay_in_capture) s.drain_heater();  // such a round is light: nothing heavy before it
  const bool heater_running = s.heating && cudaEventQuery(s.heater_end) == cudaErrorNotReady;
  Impl::RoundZero r0;
  r0.start_ms = steady_ms();

  const std::vector<int> calls = s.calls_for_all(p, candidates, options, timings);
  since = s.lap("probe", since);

  const size_t n = candidates.size();
  s.ensure_events(2 * n * size_t(options.replays));
  Impl::ensure_events(s.warm_events, 2 * n);
  std::vector<char> recorded(n * size_t(options.replays), 0), warmed(n, 0);

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
    if (timings[i].ok) start(i);
  }

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
  }
  for (const Timing& t : timings)
    if (t.ok) s.replayed.insert(t.tactic.name());

  // The timed round-robin (the rest of it, where the first replays ran while capturing). Nothing
  // synchronizes until all are enqueued, so the GPU runs them back to back.
  bool held = false;
  for (int r = first_replay_in_capture ? 1 : 0; r < options.replays; ++r) {
    for (size_t i = 0; i < n; ++i) {
      if (!timings[i].ok) continue;
      if (!held) measure_kernels::hold(kHoldUs, s.stream);
      held = true;
      const size_t slot = size_t(r) * n + i;
      recorded[slot] = s.timed_replay(graphs[i], timings[i], slot);
    }
  }
  // A kernel that faults leaves a sticky error: nothing after it can be trusted, so this throws.
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(s.stream));
  s.last_busy_ms = s.lap("replays", since);

  for (size_t i = 0; i < n; ++i) {
    if (!timings[i].ok) continue;
    for (int r = 0; r < options.replays; ++r) {
      const size_t slot = size_t(r) * n + i;
      if (!recorded[slot]) continue;
      timings[i].samples_us.push_back(1000.0 * s.elapsed_ms(s.events[2 * slot], s.events[2 * slot + 1]) /
                                      graphs[i].calls);
    }
    timings[i].median_us = median(timings[i].samples_us);
  }
  // Heavy for recover_ms: the fastest candidate's calls are heavy (one slow candidate among light
  // ones does not make the load heavy).
  size_t fastest = n;
  for (size_t i = 0; i < n; ++i)
    if (timings[i].ok && !timings[i].samples_us.empty() &&
        (fastest == n || timings[i].median_us < timings[fastest].median_us))
      fastest = i;
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
