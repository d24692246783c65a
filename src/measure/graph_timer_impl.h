// The GraphTimer's state and the steps measure() is made of (graph_timer.cpp): buffers, probes
// and graphs (graph_timer_graphs.cpp), and the GPU's load between measurements: settling,
// recovering, keeping the load on (graph_timer_settle.cpp). Private to src/measure.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/device_buffer.h"
#include "core/steady_clock.h"
#include "fp8gemm/measure.h"

namespace fp8gemm {

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
void ensure_size(DeviceBuffer& buf, size_t bytes);

struct GraphTimer::Impl {
  Context& ctx;
  GraphTimerOptions options;
  cudaStream_t stream = nullptr;
  size_t l2_bytes = 0;
  int sm_count = 0;  // the layer problems' quantization kernels size their grids by it

  // Weights of the current (batch, n, k, b_type), `copies` distinct copies `copy_stride` apart.
  Problem weight_key;
  bool have_weights = false;
  DeviceBuffer weights;
  size_t copy_bytes = 0, copy_stride = 0;
  int copies = 0;
  int weight_allocations = 0;

  DeviceBuffer a, out, out_ref, scales, scratch, flush, bias;
  // A layer problem's activations before quantization and its dynamic scale's partial maxima.
  DeviceBuffer x, partials;
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

  Impl(Context& c, GraphTimerOptions o) : ctx(c), options(o) {}

  // Adds the wall time since `start` to stage `stage` and returns now.
  double lap(const char* stage, double start) {
    const double now = steady_ms();
    spent[stage] += now - start;
    return now;
  }

  // Buffers, probes and graphs (graph_timer_graphs.cpp).

  // Buffers for `p`: weights kept across calls with the same (batch, n, k), fresh activations.
  void prepare(const Problem& p);
  GemmArgs args(int call, int first_copy, void* output) const;
  // One call of `t` as a timed graph holds it: a layer problem's quantization of x into `a` (and
  // its dynamic scale), then the GEMM on weight copy (first_copy + call).
  void run_call(const Problem& p, const Tactic& t, int call, int first_copy, void* output);
  float elapsed_ms(cudaEvent_t start, cudaEvent_t stop);
  // Calls per replay for every candidate (MeasureOptions::calls_per_replay, else the memo, else a
  // probe: one eager call to load modules and warm up, then one timed call). The probes of all
  // candidates are enqueued together and synchronized once, not once each: the host's cost of
  // the eager calls adds up over a tune. A candidate whose probe fails gets 0 and its error.
  std::vector<int> calls_for_all(const Problem& p, const std::vector<Tactic>& candidates, const MeasureOptions& o,
                                 std::vector<Timing>& timings);
  // Captures `calls` calls of `t` starting at weight copy `first_copy`. On any failure the
  // capture is ended, the partial graph destroyed and non-sticky errors cleared, then it throws.
  GraphExec capture(const Problem& p, const Tactic& t, int calls, int first_copy);
  static void ensure_events(std::vector<cudaEvent_t>& pool, size_t n);
  void ensure_events(size_t n) { ensure_events(events, n); }
  // Launches one replay, between events `start` and `end` when given (the L2 flush, when the
  // graph's weights do not cover 2x L2, runs before `start`: it is not timed); false (error
  // cleared, recorded in `t`) if the launch fails.
  bool launch(const GraphExec& g, Timing& t, cudaEvent_t start = nullptr, cudaEvent_t end = nullptr);
  // A timed replay into `slot` (r * n + i for replay r of candidate i of n): events[2 * slot] and
  // events[2 * slot + 1] hold its span.
  bool timed_replay(const GraphExec& g, Timing& t, size_t slot) {
    return launch(g, t, events[2 * slot], events[2 * slot + 1]);
  }

  // The GPU's load between measurements (graph_timer_settle.cpp).

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
              bool may_settle, const RoundZero& r0);
  // Queues replays of `g` (the fastest candidate of a heavy measurement, `call_us` a call) for
  // about keep_busy_ms and keeps the graph alive until they have run. Not timed.
  void keep_busy(GraphExec&& g, double call_us);
  // Waits for queued heater replays. The GPU was busy until now if they were still running,
  // else until about when they were due to end; that counts as the end of a heavy measurement.
  void drain_heater();
  // The heater's replays are over (the stream has been synchronized since they were queued): the
  // GPU was busy until `at` if they were still running then, else until about when they were
  // due to end.
  void heater_done(bool running_at, double at);

  static bool same_weights(const Problem& x, const Problem& y) {
    return x.batch == y.batch && x.n == y.n && x.k == y.k && x.b_type == y.b_type;
  }
};

}  // namespace fp8gemm
