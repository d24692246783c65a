// The GPU Timer (DESIGN.md "Measuring"): CUDA-graph replays of back-to-back calls over weights
// rotating through >= 2x L2, fresh random FP8 activations, warm-up, round-robin replays across
// candidates, median per call. One GraphTimer is used by one thread at a time.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "fp8gemm/types.h"
#include "measure/timer.h"

namespace fp8gemm {

class Context;  // fp8gemm/fp8gemm.h: the timer runs its tactics through one

struct GraphTimerOptions {
  double target_replay_us = 1000;  // automatic sizing: a replay of >= this needs no more calls
  int max_calls = 20;              // calls per replay for short kernels
  int min_calls = 3;               // calls per replay for the longest kernels
  // With automatic sizing, also replays of at least this long (more than max_calls short calls, up
  // to kMaxCallsPerReplay); 0: off. For measuring experiments (`fp8gemm bench --min-replay-us`): at 3-7 us calls
  // the per-replay cost spread over 20 calls moved a tactic's time by ~7% (docs/perf/small_m.md
  // "Session 18").
  double min_replay_us = 0;
  uint64_t seed = 0x5eed;          // data is random, but the same from run to run
  // Settling (docs/tuning.md "Power and clocks"): under sustained load the H200 holds a heavy
  // GEMM at the clock its power cap allows (4096x4480x15680: ~470 us per call against ~408 us in
  // the first ~50 ms after an idle gap, whose boost comes back after gaps as short as 10 ms). A
  // measurement whose calls take >= settle_min_call_us first replays its candidates, round-robin,
  // for settle_ms (settle_idle_ms after the GPU idled longer than idle_gap_ms), so every timed
  // replay sees the clocks that serving under load sees. settle_ms = 0 turns this off.
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
  // Recovery: a light measurement (calls < recover_below_call_us: weight streams) that starts
  // within recover_ms of the end of a heavy one (its fastest candidate's calls >=
  // settle_min_call_us) first replays its candidates, round-robin, until recover_ms have passed
  // since then (rounds with MeasureOptions::settle off skip it too). Under the power cap the SM clock is held down and takes a while to come back once
  // the load drops; light calls timed in that window ran slower. H200 (docs/tuning.md "Light
  // after heavy"): 6-15 us calls timed within ~30 ms of an M=3000 round ran 5-28% slower than in
  // the first pass; recovering for 100 ms was not always enough, 300 ms was (0.99-1.01). Calls of
  // 25-100 us are left alone: with them recovering too, after any round with one slow candidate,
  // one H200 run timed M=200-700 first passes ~6% slower and the tune took 171 s instead of ~115.
  // recover_ms = 0: off.
  double recover_ms = 300;
  double recover_below_call_us = 25;
  // Keeping the load on: after a heavy measurement (fastest calls >= settle_min_call_us) its
  // fastest candidate's graph is replayed for keep_busy_ms more, queued behind the timed replays
  // and not timed, so the GPU stays under that load while the host decides, lists and captures the
  // next measurement, whose settling then starts from a busy GPU. Why: the clock returns to boost
  // in any idle gap and takes ~50-100 ms of load to come back down to the power cap, so a heavy
  // measurement that follows a few milliseconds of host work was timed on the way down (docs/tuning.md
  // "Session 23: the tune and the judge in different power states"). 0: off (the tuner's timer: 5).
  double keep_busy_ms = 0;
  // Records the mean SM clock over each measurement's timed replays (Timing::clock_mhz): every
  // SM's cycle counter against the global timer, sampled right before the first timed replay and
  // right after the last, so the power state a measurement ran in is visible beside its times
  // (docs/tuning.md "Session 23: the tune and the judge in different power states"). Off by
  // default (FP8GEMM_RECORD_CLOCK=1 turns it on).
  bool record_clock = false;
  // Weights rotate through copies totalling >= this x L2 (DESIGN "Measuring": >= 2). More copies
  // put more traffic between two reads of one copy, for experiments on whether a part of the
  // last copy surviving in L2 moves a measurement (FP8GEMM_WEIGHT_L2_MULTIPLE).
  double weight_l2_multiple = 2;
  // The GPU works while the host captures: each graph's round-0 warm-up (or, in a round with no
  // warm-up and no settling, its first timed replay) is launched as soon as it is captured,
  // instead of after every graph is captured. false: the latter, for A/B measurements
  // (FP8GEMM_OVERLAP_CAPTURE=0).
  bool overlap_capture = true;
  // Every measurement as if its MeasureOptions asked for this much power load between cycles
  // (and ten times it before the round), unless it asks for more itself: for timing a whole
  // bench in the power-capped state (FP8GEMM_LOAD_BETWEEN_US). 0: off.
  double load_between_us = 0;
};

// `o` with FP8GEMM_LOAD_BETWEEN_US applied (`value`: unset or empty leaves it); anything but a
// finite number >= 0 throws Error(kInvalidArgument) naming the variable. The GraphTimer
// constructor applies it.
GraphTimerOptions with_load_env(GraphTimerOptions o, const char* value);

// The heavy GEMM that MeasureOptions::load_between_us replays: square, e4m3 -> bf16, through
// cuBLASLt's default (H200: ~0.15 ms a call, at the power cap under sustained load).
Problem power_load_problem();

// `o` with FP8GEMM_OVERLAP_CAPTURE applied (unset or empty leaves it, 0 off, any other number >= 0
// on); anything else throws Error(kInvalidArgument) naming the variable.
GraphTimerOptions with_overlap_env(GraphTimerOptions o, const char* value);

// How many weight copies of `copy_bytes` rotate: at least 2, totalling >= `l2_multiple` x `l2_bytes`.
int weight_copies_for(size_t copy_bytes, size_t l2_bytes, double l2_multiple);

// `o` with FP8GEMM_WEIGHT_L2_MULTIPLE applied (`value`: unset or empty leaves it); anything but a
// finite number >= 2 throws Error(kInvalidArgument) naming the variable. The GraphTimer
// constructor applies it.
GraphTimerOptions with_weights_env(GraphTimerOptions o, const char* value);

// `o` with FP8GEMM_RECORD_CLOCK applied (`value`: unset or empty leaves it, 0 turns it off, any
// other number >= 0 on); anything else throws Error(kInvalidArgument) naming the variable. The
// GraphTimer constructor applies it.
GraphTimerOptions with_clock_env(GraphTimerOptions o, const char* value);

// The mean over SMs of (cycles / nanoseconds) between two samples of sample_sm_clocks (each
// 2 * slots words), in MHz; an SM is counted where both samples were written (non-zero) and both
// counters advanced. 0 when none was.
double mean_sm_clock_mhz(const uint64_t* start, const uint64_t* end, int slots);

// How long a heavy measurement settles when the GPU has been idle for `gap_ms` since the last
// measurement's replays: settle_busy_ms up to busy_gap_ms, settle_ms up to idle_gap_ms,
// settle_idle_ms beyond.
double settle_target_ms(const GraphTimerOptions& o, double gap_ms);

// The tuner's timer: settles of 5 ms between a key's back-to-back measurements (20 ms after a
// pause, 60 after an idle gap, as every timer; docs/tuning.md "Power and clocks"), 5 ms of the
// load kept on after each heavy measurement (keep_busy_ms), and replays of short calls of >= 300
// us (min_replay_us; docs/tuning.md "Longer replays for short calls").
GraphTimerOptions tuning_timer_options();

// `o` with the environment's settle overrides, for measuring experiments: FP8GEMM_SETTLE_MS
// (settle_ms; settle_idle_ms becomes three times it; 0 turns settling off),
// FP8GEMM_SETTLE_BUSY_MS (settle_busy_ms), FP8GEMM_SETTLE_MIN_CALL_US, FP8GEMM_RECOVER_MS
// (recover_ms) and FP8GEMM_KEEP_BUSY_MS (keep_busy_ms). Unset or empty:
// unchanged. Throws Error(kInvalidArgument) naming the variable for anything but a finite
// number >= 0. The GraphTimer constructor applies it.
GraphTimerOptions with_settle_env(GraphTimerOptions o, const char* settle_ms, const char* min_call_us,
                                  const char* settle_busy_ms = nullptr, const char* recover_ms = nullptr,
                                  const char* keep_busy_ms = nullptr);

// Calls per replay for a kernel whose single call took `call_us`: `max_calls` unless that many
// would last >= target_replay_us, then just enough to reach it, but at least `min_calls`; with
// min_replay_us, at least enough calls to last that long (at most 200).
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
  // GPU time of the power load queued so far (MeasureOptions::load_between_us), in ms.
  double power_load_ms() const;

  // The timer's own stream (non-blocking), on which every measurement runs.
  cudaStream_t stream() const;
  // How many distinct weight copies the current (batch, n, k) rotates through (0 before use).
  int weight_copies() const;
  // How many times weights were (re)allocated: an M sweep over one (n, k) allocates once.
  int weight_allocations() const;
  // Calls per replay chosen for (p, t) by the last measurement (0 if none).
  int calls_per_replay(const Problem& p, const Tactic& t) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fp8gemm
