// Checking inside a segment (docs/tuning.md "Never slower than the default"): segment_checks.h
// check_middles.
#include <array>
#include <cstdio>
#include <iterator>
#include <optional>

#include "tune/defaults/default_chain.h"
#include "tune/keys/tune_key.h"
#include "tune/policy/decide.h"
#include "tune/policy/round_plan.h"
#include "tune/policy/segment_checks.h"
#include "tune/policy/segments.h"

namespace fp8gemm::tuning {

// Each side of a segment's sampled M that spans more than the M already timed is timed once more
// in its middle, the segment's choice against what `auto` runs there untuned; where the choice is
// slower beyond `threshold`, untuned `auto` takes that side: at each M of it the kernel it runs
// there untuned (untuned_parts). Why: a choice that wins at a segment's ends can still lose inside
// it, where the tile counts fall differently (bench between bucket edges found such points).
// Checks that do not fit a quarter of the key budget, or fail, leave the segment as it is.
void check_middles(std::vector<ChoiceSegment>& segments, const Problem& problem,
                   const std::vector<Backend*>& backends, double threshold, Timer& timer, const PolicyOptions& o) {
  double budget_us = 0.25 * o.key_budget_ms * 1e3;
  const std::optional<Tactic> adaptive = adaptive_floor(backends, problem);
  int64_t previous = bucket_lower(problem.m);
  for (size_t i = 0; i < segments.size(); previous = segments[i].m_max, ++i) {
    for (const bool below : {true, false}) {
      ChoiceSegment& s = segments[i];
      // Below the sampled M its lowest M is timed already (check_low_ends): the middle is of the rest.
      const int64_t lo = below ? previous + 2 : s.sampled_m + 1;
      const int64_t hi = below ? s.sampled_m - 1 : s.m_max;
      if (hi < lo || !(s.us > 0)) continue;
      Problem q = problem;
      q.m = lo + (hi - lo) / 2;
      // What `auto` runs at q untuned, the guarantee's reference there (the segment's default
      // where that cannot be asked).
      std::optional<Tactic> there = untuned_at(o, q);
      if (!there) {
        try {
          there = Tactic::parse(s.default_tactic);
        } catch (const std::exception&) {
          continue;
        }
      }
      if (there->name() == s.tactic) continue;
      // The adaptive floor runs the heuristic's answer at q: where that is untuned auto's, the
      // same kernel.
      if (adaptive && s.tactic == adaptive->name() && fixed_floor(backends, problem, q.m) == there->name())
        continue;
      const double cost_us = 2 * below_edge_cost_us(q);
      if (cost_us > budget_us) continue;
      budget_us -= cost_us;
      const std::optional<std::array<Timing, 2>> timed = time_pair(timer, q, s.tactic, there->name());
      if (!timed) continue;
      const std::array<Timing, 2>& r = *timed;
      const std::string at = "at M=" + std::to_string(q.m) + ", inside the segment";
      for (const Timing& x : r) s.candidates.push_back({x.tactic.name(), "middle", x.median_us, -1, at, 0, q.m});
      if (r[0].median_us <= r[1].median_us * (1 + threshold)) continue;
      char why[200];
      std::snprintf(why, sizeof why, "%s M=%lld-%lld: %s took %.4g us at M=%lld, untuned auto %.4g",
                    below ? "below the sampled M," : "above the sampled M,", (long long)(below ? previous + 1 : lo),
                    (long long)hi, s.tactic.c_str(), r[0].median_us, (long long)q.m, r[1].median_us);
      // Untuned auto's kernels over the side, each where it runs; the one timed at q with its time.
      std::vector<ChoiceSegment> parts =
          untuned_parts(problem, backends, below ? previous + 1 : lo, hi, there->name(),
                        std::string("slower than the default inside the segment (") + why + ")", o);
      int64_t part_lo = below ? previous + 1 : lo;
      for (ChoiceSegment& part : parts) {
        if (part_lo <= q.m && q.m <= part.m_max) {
          part.sampled_m = q.m;
          part.us = part.default_us = r[1].median_us;
        }
        part_lo = part.m_max + 1;
      }
      const long n = long(parts.size());
      if (below) {
        segments.insert(segments.begin() + long(i), std::make_move_iterator(parts.begin()),
                        std::make_move_iterator(parts.end()));  // `s` is not used after it
        i += n;  // the choice's part, whose other side is checked next
      } else {
        s.m_max = s.sampled_m;  // before the insertion, which may move `s`
        segments.insert(segments.begin() + long(i) + 1, std::make_move_iterator(parts.begin()),
                        std::make_move_iterator(parts.end()));
        i += n;  // the parts just handed over, checked as they were timed
      }
    }
  }
}

}  // namespace fp8gemm::tuning
