// The segment checks (docs/tuning.md "Checking a segment's lowest M", "The adaptive floor"): after
// the tuner has chosen per sampled M, each segment's lowest M is timed and the segment goes to the
// contender that regrets least over its two ends; where the adaptive floor and a fixed tactic each
// win one end, the segment is split where the heuristic's answer changes. check_low_ends
// (low_end_check.cpp) is the step decide() calls; the splits (floor_splits.cpp) are its parts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/tune.h"
#include "fp8gemm/measure.h"

namespace fp8gemm::tuning {

struct PolicyOptions;

// Times each segment that has a rival at its lowest M and gives it to the contender that fits it
// best. `edge_rows` are the edge's timings (the edge's own segment holds none yet).
void check_low_ends(std::vector<ChoiceSegment>& segments, const Problem& problem,
                    const std::vector<Backend*>& backends, const std::vector<CandidateReport>& edge_rows,
                    double threshold, Timer& timer, const PolicyOptions& o);

// Times the middle of each side of a segment's sampled M, the choice against untuned `auto`
// there, and hands a side where the choice is slower beyond `threshold` to untuned `auto`'s
// tactic there (middle_check.cpp).
void check_middles(std::vector<ChoiceSegment>& segments, const Problem& problem,
                   const std::vector<Backend*>& backends, double threshold, Timer& timer, const PolicyOptions& o);

// Times each segment's choice against untuned `auto` in each run of M where untuned auto runs a
// kernel the choice was not timed against at any M of that run (at the run's middle), and hands
// a run where the choice is slower beyond `threshold` to untuned `auto`
// (untimed_default_check.cpp). Why: untuned auto's kernel can change between the M a segment was
// timed at, and a choice that beat one kernel there can lose to another a few M away. Where the
// choice is the adaptive floor, whose own kernel changes with the heuristic's answer, a run ends
// where either kernel changes. Checks that do not fit a quarter of the key budget, or fail, leave
// the run as it is.
void check_untimed_defaults(std::vector<ChoiceSegment>& segments, const Problem& problem,
                            const std::vector<Backend*>& backends, double threshold, Timer& timer,
                            const PolicyOptions& o);

// One run of M over which a per-M answer stays the same.
struct AnswerRun {
  int64_t first = 0, last = 0;
  std::string answer;
};

// The runs of `answer` over [lo, hi]: asked at most 256 times across it and bisected at each
// change (a run shorter than the probes' spacing can go unseen).
std::vector<AnswerRun> answer_runs(int64_t lo, int64_t hi, const std::function<std::string(int64_t)>& answer);

// The segments that run, at every M of [lo, hi], what untuned `auto` runs there: its answer per M
// (o.default_at), one segment per run of one answer (answer_runs: host calls, nothing timed), and
// the adaptive floor's where that answer is the heuristic's own kernel; `fallback` where the
// answer cannot be asked. Each part's `skipped` row gives `why`. Why: a part handed back to the default
// must run untuned auto's kernel at every M of it, not its kernel at the one M where it was
// timed, which a few M higher can need another wave of tiles.
std::vector<ChoiceSegment> untuned_parts(const Problem& problem, const std::vector<Backend*>& backends, int64_t lo,
                                         int64_t hi, const std::string& fallback, const std::string& why,
                                         const PolicyOptions& o);

// A tactic that may take a segment after its lowest M is timed.
struct Contender {
  std::string name;
  double at_sampled = 0;  // its time at the segment's sampled M
  double at_low = 0;      // at the segment's lowest M (0: not timed or failed there)
};

// How far above its sampled M segment i holds once a check has given it to `tactic`: as far as
// that tactic's own M tiles reach, below the next segment's sampled M. The adaptive floor
// (`adaptive`) reaches as far as its kernel at the sampled M (`floor_top`) does while the
// heuristic still answers that kernel.
int64_t reach_above_sample(const std::vector<ChoiceSegment>& segments, size_t i, const Problem& problem,
                           const std::string& tactic, const std::string& adaptive, const std::string& floor_top,
                           const std::vector<Backend*>& backends);

// Where the adaptive floor (`adaptive`) is the fastest at segment i's lowest M (`low`) and
// slower than the fastest fixed contender at its top, each by more than `threshold`, the segment
// is split where the heuristic's answer turns into `floor_top` (its answer at the top): the
// adaptive floor below, that contender above. Returns whether it split (segments[i] is then the
// lower part).
bool split_at_floor_switch(std::vector<ChoiceSegment>& segments, size_t i, const Problem& problem, int64_t low,
                           const std::vector<Contender>& c, const std::string& adaptive, const std::string& floor_top,
                           double threshold, const std::vector<Backend*>& backends, bool edge);

// Where the adaptive floor has taken segment i (or the lower part of a split) on its time at the
// lowest M (`low`), where it ran `floor_low`, and the heuristic answers an untimed third kernel
// before floor_low's own reach (at most `top`): floor_low keeps the M up to its reach. Returns
// whether it split (segments[i] is then floor_low's part).
bool low_kernel_holds(std::vector<ChoiceSegment>& segments, size_t i, const Problem& problem, int64_t low,
                      int64_t top, const std::vector<Contender>& c, const std::string& adaptive,
                      const std::string& floor_low, const std::string& floor_top,
                      const std::vector<Backend*>& backends);

}  // namespace fp8gemm::tuning
