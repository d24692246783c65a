// Measuring many candidates without timing every one at full length (docs/design.md "Measuring":
// prune early). Shared by `fp8gemm bench` and the tuner's policy.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "measure/timer.h"

namespace fp8gemm {

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

}  // namespace fp8gemm
