// The GPU Timer (docs/design.md "Measuring"): CUDA-graph replays of back-to-back calls over weights
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
