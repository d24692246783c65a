#include "fp8gemm/measure.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "fp8gemm/check.h"

namespace fp8gemm {

namespace {

// Indices (into candidates, reference excluded) of the challengers that go to the full round:
// those that ran, within prune_ratio x the best short-round time (reference included in "best"),
// at most max_finalists of them, fastest first (and, with best_of_each_backend, each backend's
// fastest beyond them); plus the protected ones that ran; in candidate order for the full round.
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
  std::vector<size_t> finalists;
  std::vector<std::string> backends_seen;
  for (size_t j = 0; j < keep.size(); ++j) {
    // keep is fastest first, so a backend's first candidate here is its fastest.
    const std::string& backend = short_round[keep[j]].tactic.backend;
    const bool fastest_of_its_backend =
        std::find(backends_seen.begin(), backends_seen.end(), backend) == backends_seen.end();
    if (fastest_of_its_backend) backends_seen.push_back(backend);
    if (j < limit || (o.best_of_each_backend && fastest_of_its_backend))
      finalists.push_back(keep[j]);
    else
      pruned.push_back(short_round[keep[j]]);
  }
  keep = std::move(finalists);
  keep.insert(keep.end(), always.begin(), always.end());
  std::sort(keep.begin(), keep.end());
  return keep;
}

}  // namespace

// The two timings of the reference, replay by replay: the r-th replays of both ran in the same
// round-robin cycle, so their ratio cancels clock drift (power throttling that slows every
// candidate from one replay on moves the two medians apart although each cycle agrees). The
// median of |t2/t1 - 1| over replays; the medians' difference when the sample counts differ.
double paired_noise(const Timing& first, const Timing& again) {
  const auto& a = first.samples_us;
  const auto& b = again.samples_us;
  if (a.empty() || a.size() != b.size())
    return std::fabs(first.median_us - again.median_us) / first.median_us;
  std::vector<double> dev;
  for (size_t r = 0; r < a.size(); ++r) dev.push_back(std::fabs(b[r] / a[r] - 1.0));
  std::nth_element(dev.begin(), dev.begin() + dev.size() / 2, dev.end());
  return dev[dev.size() / 2];
}

MeasureOptions long_replays(double call_us, int replays, double replay_us) {
  const double calls =
      std::clamp(std::ceil(replay_us / std::max(call_us, 0.1)), 3.0, double(kMaxCallsPerReplay));
  return MeasureOptions{int(calls), replays, 1};
}

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
    for (const Timing& t : short_round)
      if (t.ok) result.short_us[t.tactic.name()] = t.median_us;
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
    result.noise = paired_noise(result.reference, again);
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
