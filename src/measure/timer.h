// The measuring interface shared by `fp8gemm bench` and the tuner. The GPU implementation
// (graph_timer) measures as docs/design.md "Measuring" says; policy code is tested on the CPU
// against fakes of this interface.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fp8gemm/types.h"

namespace fp8gemm {

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

}  // namespace fp8gemm
