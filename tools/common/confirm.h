// `fp8gemm bench`'s second look at `auto`: auto against the fastest other tactic of a point,
// timed again head to head. A point's first-pass best is the fastest of many noisy medians, so it
// is biased low; a fresh round that times only auto and its opponents is not.
#pragma once

#include <iosfwd>
#include <vector>

#include "fp8gemm/measure.h"
#include "tools/common/report.h"

namespace fp8gemm {

// Replays of the head-to-head round, each >= 300 us (fp8gemm/measure.h long_replays).
constexpr int kConfirmReplays = 9;
// Head-to-head rounds per point: bench runs them as that many passes over the points, and a point's
// verdict is its median round, since a single round can move a point by about the width of the
// 1.03 bar the regret is judged by.
constexpr int kConfirmRounds = 3;

// The entry auto is compared with: the fastest ok entry (cuBLASLt's default, a backend's best)
// whose tactic is not auto's; nullptr when there is none. Auto itself and the --add-tactic
// entries (named_*) are not candidates.
const BenchEntry* fastest_other_than_auto(const BenchPoint& point);

// At most this many tactics are timed against auto in a head-to-head round: the fastest other
// entry and the next contenders (BenchPoint::contenders) within kConfirmOpponentMargin of its
// first-pass time: where the first pass has near-ties, which of them is "the fastest" is chance, and
// a verdict against one opponent would move with that chance.
constexpr int kConfirmOpponents = 3;
constexpr double kConfirmOpponentMargin = 0.03;

// The tactics confirm_auto times against auto: the fastest other entry's first, then untuned
// auto's where auto ran another (tuned) choice, then the contenders not auto's within the margin
// of the fastest, fastest first, up to kConfirmOpponents; empty when there is no other entry.
std::vector<std::string> confirm_opponents(const BenchPoint& point);

// Times [auto, b1..bk, bk..b1, auto] (mirrored, so drift during the round cancels; with
// best_first, [b1..bk, auto, auto, bk..b1], so that over a point's rounds auto does not always
// hold the ends) on point.problem, b1..bk the confirm_opponents as point.timings holds them; the
// best is the fastest of them in this round. Always against the others, also where auto looked
// fastest: a point's first-pass regret is biased either way by whichever tactic's medians
// happened to be low, and only a fresh round is not. Never throws: a failed round is reported in
// the note, with ran = false. The result holds one round (round_ratios: its auto_us / best_us, or
// NaN; untuned_ratios: its auto_us / untuned_us where untuned auto was an opponent, or NaN).
AutoConfirm confirm_auto(Timer& timer, const BenchPoint& point, bool best_first = false);

// A point's verdict over its rounds (each from confirm_auto, in the order they ran): the round
// whose auto / best is the median of those that ran (for an even count the slower of the two
// middle ones: a tie between rounds never passes a point),
// with every round's ratio in round_ratios and every round's auto / untuned auto in untuned_ratios.
// When none ran, the first round, whose note says why.
// Throws std::invalid_argument for an empty list.
AutoConfirm median_round(const std::vector<AutoConfirm>& rounds);

// The order the head-to-head rounds run in: by the first pass's time of auto, lightest first
// (stable; points without a timed auto last). A round of light calls right after heavy ones runs
// at clocks still recovering from the power cap; the tuner measures its keys lightest first for the
// same reason.
std::vector<size_t> confirm_order(const std::vector<BenchPoint>& points);

// One line for the point's head-to-head round: its regret, times, noise and the best's tactic, or
// why it did not run (nothing when it was not tried).
void print_confirm_line(std::ostream& os, const BenchPoint& point);

// auto_us / min(auto_us, the fastest other entry's us) from the first pass; NaN without auto.
double first_pass_regret(const BenchPoint& point);

// The regret summary over the points with auto, first pass and timed again (a point not timed
// again keeps its first-pass regret): geomean, max, and how many within 1.03 (issue 5's bar);
// with several rounds, also the first round alone.
void print_confirm_summary(std::ostream& os, const std::vector<BenchPoint>& points);

}  // namespace fp8gemm
