// Measuring tactics as fp8gemm measures them, for benchmarks and the tuner: the Timer interface
// (timings, options), rounds that prune before timing at full length, and the GPU timer that
// replays CUDA graphs over rotating weights (docs/design.md "Measuring"). `fp8gemm bench` and the
// tuner use exactly this; the policy's tests run against fakes of Timer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fp8gemm/types.h"

namespace fp8gemm {

// ---- The Timer interface ----------------------------------------------------------------------
// The most calls one replay holds: long replays of short calls stop here (long_replays,
// GraphTimerOptions::min_replay_us).
constexpr int kMaxCallsPerReplay = 200;

struct MeasureOptions {
  int calls_per_replay = 0;  // 0: automatic (>= 20 short calls, >= 3 once a replay is >= ~1 ms)
  int replays = 7;           // timed graph replays per candidate (median taken); >= 5 for reports
  int warmup_replays = 1;
  // false: nothing runs before the timed replays but the warm-up replays (none with
  // warmup_replays = 0), and heavy calls are not settled (GraphTimerOptions): for rounds of
  // calls known to be light, where a timed replay needs no warm-up before it.
  bool settle = true;
};

struct Timing {
  Tactic tactic;
  bool ok = false;            // false: the candidate failed to run (error says why)
  std::string error;
  double median_us = 0;       // per call
  std::vector<double> samples_us;  // per call, one per replay, in measurement order
};

class Timer {
 public:
  virtual ~Timer() = default;

  // Times every candidate on `p`, round-robin (A B C A B C ...), each as a CUDA-graph replay of
  // back-to-back calls over weights rotating through >= 2x L2. Candidates may repeat (the same
  // tactic twice gives the noise floor). Never throws for a failing candidate: it is reported
  // with ok = false.
  virtual std::vector<Timing> measure(const Problem& p, const std::vector<Tactic>& candidates,
                                      const MeasureOptions& options) = 0;

  // Runs `reference` and each candidate on the same fresh random inputs and returns, per
  // candidate, max |out - ref_out| / max |ref_out| (infinity when it failed or wrote NaN).
  virtual std::vector<double> compare_outputs(const Problem& p, const Tactic& reference,
                                              const std::vector<Tactic>& candidates) = 0;

  // Wall time spent so far, per stage of measuring (e.g. "capture", "settle", "replays"), in ms,
  // summed over the timer's life: where a tuning run's time goes. Empty when not kept.
  virtual std::map<std::string, double> spent_ms() const { return {}; }
};

// ---- Rounds: prune early, time the finalists at full length ---------------------------------
struct RoundOptions {
  double prune_ratio = 1.3;  // after the short round, drop candidates slower than this x best
  int max_finalists = 8;     // at most this many go to the full round (plus the reference)
  // candidates[0, protected_candidates) reach the full round whatever their short-round time
  // (unless they fail) and do not count towards max_finalists: e.g. `auto` in a benchmark.
  int protected_candidates = 1;
  // Also send every backend's fastest short-round candidate (within prune_ratio) to the full
  // round, beyond max_finalists. A benchmark needs it: a backend with no finalist could only show
  // a one-replay short-round time, and the short and full rounds can run at different clocks
  // (docs/tuning.md "The bench's best is a full-round time").
  bool best_of_each_backend = false;
  MeasureOptions short_round{0, 1, 1};
  MeasureOptions full_round{0, 7, 1};
};

struct RoundResult {
  // The reference (candidates[0], the default) timed twice in the full round: the first is its
  // timing, |t1 - t2| / t1 is the noise floor.
  Timing reference;
  double noise = 0;
  std::vector<Timing> finalists;  // full-round timings of every candidate that survived pruning (all ok)
  std::vector<Timing> pruned;     // short-round timings of those that did not (or failed); a
                                  // finalist that fails in the full round lands here too
  std::map<std::string, double> short_us;  // every candidate's short-round time (when it ran)

};

// The noise floor from one tactic timed twice in one round-robin (`first`, then `again` later in
// each cycle): the median over replays of |again / first - 1|, replay by replay (the medians'
// difference when the sample counts differ).
double paired_noise(const Timing& first, const Timing& again);

// How long a long replay lasts at least (long_replays): the retime's and bench's head-to-head rounds.
constexpr double kLongReplayUs = 300;

// A round for a few candidates whose calls take ~`call_us`: `replays` replays of as many calls
// as make >= `replay_us` (3 to kMaxCallsPerReplay calls). A round's 20-call replay of calls of a
// few microseconds is short, and its noise floor too high to tell two tactics a few percent
// apart; longer replays bring it well under a percent (docs/tuning.md "Retiming a challenger").
MeasureOptions long_replays(double call_us, int replays, double replay_us = kLongReplayUs);

// candidates[0] is the reference (default) tactic; it always reaches the full round. The short
// round runs only when there are >= 2 challengers; the full round is one Timer::measure call
// over [reference, finalists..., reference].
RoundResult measure_in_rounds(Timer& timer, const Problem& p, const std::vector<Tactic>& candidates,
                              const RoundOptions& options = {});

// ---- The GPU timer ---------------------------------------------------------------------------
// CUDA-graph replays of back-to-back calls over weights rotating through >= 2x L2, fresh random
// FP8 activations, warm-up, round-robin replays across candidates, median per call. One
// GraphTimer is used by one thread at a time.
class Context;  // fp8gemm/fp8gemm.h: the timer runs its tactics through one

struct GraphTimerOptions {
  double target_replay_us = 1000;  // automatic sizing: a replay of >= this needs no more calls
  int max_calls = 20;              // calls per replay for short kernels
  int min_calls = 3;               // calls per replay for the longest kernels
  // With automatic sizing, also replays of at least this long (more than max_calls short calls,
  // up to kMaxCallsPerReplay); 0: off. At calls of a few microseconds the per-replay cost spread
  // over 20 calls moves a tactic's time enough to reorder close tactics (`fp8gemm bench
  // --min-replay-us`; the tuner's timer uses kLongReplayUs).
  double min_replay_us = 0;
  uint64_t seed = 0x5eed;          // data is random, but the same from run to run
  // Settling (docs/tuning.md "Power and clocks"): under sustained load a heavy GEMM runs at the
  // clock the GPU's power cap allows, slower than right after an idle gap (even a short gap brings
  // the boost clock back). A measurement whose calls take >=
  // settle_min_call_us first replays its candidates, round-robin, for settle_ms (settle_idle_ms
  // after the GPU idled longer than idle_gap_ms), so every timed replay sees the clocks that
  // serving under load sees. settle_ms = 0 turns this off.
  double settle_min_call_us = 100;
  double settle_ms = 20;
  double settle_idle_ms = 60;
  double idle_gap_ms = 20;
  // A measurement that starts within busy_gap_ms of the previous one's last replay (the tuner's
  // rounds, samples and segment checks of one key follow each other that closely) settles for
  // settle_busy_ms: the GPU has been under load all along. The same as settle_ms by default;
  // the tuner's timer shortens it (tuning_timer_options).
  double settle_busy_ms = 20;
  double busy_gap_ms = 5;
  // Recovery (docs/tuning.md "Light after heavy"): a light measurement (calls <
  // recover_below_call_us: weight streams) that starts within recover_ms of the end of a heavy
  // one (its fastest candidate's calls >= settle_min_call_us) first replays its candidates,
  // round-robin, until recover_ms have passed since then (rounds with MeasureOptions::settle off
  // skip it too). Under the power cap the SM clock is held down and takes a while to come back
  // once the load drops, and light calls timed in that window run slower. Calls between the two
  // thresholds are left alone: recovering after every round with one slow candidate cost much
  // tuning time and timed mid-sized calls slower. recover_ms = 0: off.
  double recover_ms = 300;
  double recover_below_call_us = 25;
  // Keeping the load on: after a heavy measurement (fastest calls >= settle_min_call_us) its
  // fastest candidate's graph is replayed for keep_busy_ms more, queued behind the timed replays
  // and not timed, so the GPU stays under that load while the host decides, lists and captures
  // the next measurement, whose settling then starts from a busy GPU. Why: the clock returns to
  // boost in any idle gap and takes a while under load to come back down to the power cap, so a
  // heavy measurement that follows a few milliseconds of host work would be timed on the way
  // down. 0: off (the tuner's timer keeps it on).
  double keep_busy_ms = 0;
};

// How many weight copies of `copy_bytes` rotate: at least 2, totalling >= 2x `l2_bytes` (DESIGN
// "Measuring").
int weight_copies_for(size_t copy_bytes, size_t l2_bytes);

// How long a heavy measurement settles when the GPU has been idle for `gap_ms` since the last
// measurement's replays: settle_busy_ms up to busy_gap_ms, settle_ms up to idle_gap_ms,
// settle_idle_ms beyond.
double settle_target_ms(const GraphTimerOptions& o, double gap_ms);

// The tuner's timer: shorter settles between a key's back-to-back measurements (the same after a
// pause or an idle gap as every timer; docs/tuning.md "Power and clocks"), the load kept on after
// each heavy measurement (keep_busy_ms), and replays of short calls of >= kLongReplayUs
// (min_replay_us; docs/tuning.md "Longer replays for short calls").
GraphTimerOptions tuning_timer_options();

// Calls per replay for a kernel whose single call took `call_us`: `max_calls` unless that many
// would last >= target_replay_us, then just enough to reach it, but at least `min_calls`; with
// min_replay_us, at least enough calls to last that long (at most kMaxCallsPerReplay).
int calls_per_replay_for(double call_us, const GraphTimerOptions& options);

class GraphTimer : public Timer {
 public:
  explicit GraphTimer(Context& ctx, GraphTimerOptions options = {});
  ~GraphTimer() override;
  GraphTimer(const GraphTimer&) = delete;
  GraphTimer& operator=(const GraphTimer&) = delete;

  std::vector<Timing> measure(const Problem& p, const std::vector<Tactic>& candidates,
                              const MeasureOptions& options) override;
  std::vector<double> compare_outputs(const Problem& p, const Tactic& reference,
                                      const std::vector<Tactic>& candidates) override;
  // "prepare" (buffers, random data), "probe" (sizing calls per replay), "capture" (graphs:
  // capture, instantiate, upload), "settle" (warm-up and settling replays), "replays" (the
  // timed round-robin, until the GPU is done), "compare" (output checks).
  std::map<std::string, double> spent_ms() const override;
  // GPU time of the replays queued to keep the load on (GraphTimerOptions::keep_busy_ms), in ms.
  // Not a stage of spent_ms: they overlap the host's work, and what the host waited for them is in
  // the stage that waited ("probe", "settle", "compare").
  double kept_busy_ms() const;

  // The timer's own stream (non-blocking), on which every measurement runs.
  cudaStream_t stream() const;
  // How many distinct weight copies the current (batch, n, k) rotates through (0 before use).
  int weight_copies() const;
  // How many times weights were (re)allocated: an M sweep over one (n, k) allocates once.
  int weight_allocations() const;
  // Calls per replay chosen for (p, t) by the last measurement (0 if none).
  int calls_per_replay(const Problem& p, const Tactic& t) const;

  struct Impl;  // graph_timer_impl.h

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fp8gemm
