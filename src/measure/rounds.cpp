#include "measure/rounds.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/cuda_check.h"

namespace fp8gemm {

namespace {

// Indices (into candidates, reference excluded) of the challengers that go to the full round:
// those that ran, within prune_ratio x the best short-round time (reference included in "best"),
// at most max_finalists of them, fastest first; plus the protected ones that ran; in candidate
// order for the full round.
std::vector<size_t> pick_finalists(const std::vector<Timing>& short_round, const RoundOptions& o,
                                   std::vector<Timing>& pruned) {
  double best = INFINITY;
  for (const Timing& t : short_round)
    if (t.ok) best = std::min(best, t.median_us);

  std::vector<size_t> keep, always;
  const size_t protected_end = size_t(std::max(1, o.protected_candidates));
  for (size_t i = 1; i < short_round.size(); ++i) {
    if (i < protected_end) {
      if (short_round[i].ok)
        always.push_back(i);
      else
        pruned.push_back(short_round[i]);
      continue;
    }
    const Timing& t = short_round[i];
    if (t.ok && t.median_us <= o.prune_ratio * best)
      keep.push_back(i);
    else
      pruned.push_back(t);
  }
  std::stable_sort(keep.begin(), keep.end(),
                   [&](size_t x, size_t y) { return short_round[x].median_us < short_round[y].median_us; });
  const size_t limit = size_t(std::max(0, o.max_finalists));
  for (size_t j = limit; j < keep.size(); ++j) pruned.push_back(short_round[keep[j]]);
  if (keep.size() > limit) keep.resize(limit);
  keep.insert(keep.end(), always.begin(), always.end());
  std::sort(keep.begin(), keep.end());
  return keep;
}

}  // namespace

RoundResult measure_in_rounds(Timer& timer, const Problem& p, const std::vector<Tactic>& candidates,
                              const RoundOptions& options) {
  FP8GEMM_REQUIRE(!candidates.empty(), kInvalidArgument,
                  "measure_in_rounds needs at least the reference candidate");
  RoundResult result;

  // With a single challenger the short round could prune at most one candidate while costing
  // nearly what it saves, so it only runs when there is a choice to narrow.
  std::vector<size_t> finalists;
  if (candidates.size() > 2) {
    const std::vector<Timing> short_round = timer.measure(p, candidates, options.short_round);
    FP8GEMM_REQUIRE(short_round.size() == candidates.size(), kInternal, "timer returned ",
                    short_round.size(), " timings for ", candidates.size(), " candidates");
    finalists = pick_finalists(short_round, options, result.pruned);
  } else {
    for (size_t i = 1; i < candidates.size(); ++i) finalists.push_back(i);
  }

  // Full round, one round-robin: reference, finalists, reference again. The reference's two
  // timings sit at the ends of each cycle, so their difference also sees drift within a cycle.
  std::vector<Tactic> full{candidates[0]};
  for (size_t i : finalists) full.push_back(candidates[i]);
  full.push_back(candidates[0]);
  std::vector<Timing> timed = timer.measure(p, full, options.full_round);
  FP8GEMM_REQUIRE(timed.size() == full.size(), kInternal, "timer returned ", timed.size(),
                  " timings for ", full.size(), " candidates");

  result.reference = timed.front();
  const Timing& again = timed.back();
  if (result.reference.ok && again.ok && result.reference.median_us > 0)
    result.noise = std::fabs(result.reference.median_us - again.median_us) / result.reference.median_us;
  for (size_t j = 1; j + 1 < timed.size(); ++j) {
    // A candidate that ran in the short round but fails now is no finalist either.
    if (timed[j].ok)
      result.finalists.push_back(std::move(timed[j]));
    else
      result.pruned.push_back(std::move(timed[j]));
  }
  return result;
}

}  // namespace fp8gemm
