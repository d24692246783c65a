// Checking a segment against every kernel untuned `auto` runs inside it (docs/tuning.md "Never
// slower than the default"): segment_checks.h check_untimed_defaults.
#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>
#include <optional>

#include "tune/defaults/default_chain.h"
#include "tune/policy/decide.h"
#include "tune/policy/round_plan.h"
#include "tune/policy/segment_checks.h"
#include "tune/policy/segments.h"

namespace fp8gemm::tuning {

namespace {

// Segment `s` (lowest M `first`) with [lo, hi] replaced by `handed_back`: the choice keeps the
// parts below and above that range (either may be empty). Each part still names the M where the
// choice was timed (sampled_m), and only the part that holds it keeps the rows timed there.
std::vector<ChoiceSegment> around(const ChoiceSegment& s, int64_t first, int64_t lo, int64_t hi,
                                  std::vector<ChoiceSegment> handed_back) {
  std::vector<ChoiceSegment> out;
  const auto part = [&](int64_t from, int64_t to) {
    ChoiceSegment p = s;
    p.m_max = to;
    if (s.sampled_m < from || s.sampled_m > to) p.candidates.clear();
    return p;
  };
  if (lo > first) out.push_back(part(first, lo - 1));
  out.insert(out.end(), std::make_move_iterator(handed_back.begin()), std::make_move_iterator(handed_back.end()));
  if (hi < s.m_max) out.push_back(part(hi + 1, s.m_max));
  return out;
}

// The piece (lowest M `first`) that holds M `sampled`, where a segment's rows are kept; the last
// piece if none does.
ChoiceSegment& with_sample(std::vector<ChoiceSegment>& pieces, int64_t first, int64_t sampled) {
  for (ChoiceSegment& p : pieces) {
    if (first <= sampled && sampled <= p.m_max) return p;
    first = p.m_max + 1;
  }
  return pieces.back();
}

}  // namespace

void check_untimed_defaults(std::vector<ChoiceSegment>& segments, const Problem& problem,
                            const std::vector<Backend*>& backends, double threshold, Timer& timer,
                            const PolicyOptions& o) {
  if (!o.default_at) return;
  double budget_us = 0.25 * o.key_budget_ms * 1e3;
  const std::optional<Tactic> adaptive = adaptive_floor(backends, problem);
  int64_t first = bucket_lower(problem.m) + 1;
  std::vector<ChoiceSegment> out;
  for (size_t i = 0; i < segments.size(); first = segments[i].m_max + 1, ++i) {
    ChoiceSegment s = segments[i];
    // The adaptive floor runs the heuristic's answer at each M, so its own kernel can change
    // inside the segment as untuned auto's can.
    const bool adapts = adaptive && s.tactic == adaptive->name();
    // Whether the choice was timed against `untuned` (untuned auto's kernel over `run`) at an M of
    // `run`: at the sampled M (against the default there), or by a check whose row holds an M
    // inside it.
    const auto timed_in = [&s](const AnswerRun& run, const std::string& untuned) {
      if (untuned == s.tactic || (run.first <= s.sampled_m && s.sampled_m <= run.last)) return true;
      return std::any_of(s.candidates.begin(), s.candidates.end(), [&](const CandidateReport& c) {
        return c.tactic == untuned && c.m != 0 && run.first <= c.m && c.m <= run.last;
      });
    };
    // The pair of kernels at m, untuned auto's and (for the adaptive floor) the choice's, one line
    // each: a run is a range of M where neither changes.
    const auto kernels_at = [&](int64_t m) {
      Problem q = problem;
      q.m = m;
      const std::optional<Tactic> t = untuned_at(o, q);
      if (!t) return std::string();
      return adapts ? t->name() + '\n' + fixed_floor(backends, problem, m) : t->name();
    };
    std::vector<ChoiceSegment> pieces{s};  // the segment as the runs below cut it
    for (const AnswerRun& run : answer_runs(first, s.m_max, kernels_at)) {
      const size_t line = run.answer.find('\n');
      const std::string untuned = run.answer.substr(0, line);
      // Where the adaptive floor runs untuned auto's own kernel, the two are the same.
      const bool same_kernel = line != std::string::npos && run.answer.substr(line + 1) == untuned;
      if (untuned.empty() || same_kernel || timed_in(run, untuned)) continue;
      Problem q = problem;
      q.m = run.first + (run.last - run.first) / 2;
      const double cost_us = 2 * below_edge_cost_us(q);
      if (cost_us > budget_us) continue;
      budget_us -= cost_us;
      const std::optional<std::array<Timing, 2>> timed = time_pair(timer, q, s.tactic, untuned);
      if (!timed) continue;
      const std::array<Timing, 2>& r = *timed;
      const std::string at = "at M=" + std::to_string(q.m) + (adapts ? ", where the adaptive floor or untuned auto"
                                                                          : ", where untuned auto") +
                             " runs another kernel";
      ChoiceSegment& home = with_sample(pieces, first, s.sampled_m);
      for (const Timing& x : r) home.candidates.push_back({x.tactic.name(), "middle", x.median_us, -1, at, 0, q.m});
      if (r[0].median_us <= r[1].median_us * (1 + threshold)) continue;
      char why[240];
      std::snprintf(why, sizeof why, "M=%lld-%lld: %s took %.4g us at M=%lld, untuned auto's %s %.4g",
                    (long long)run.first, (long long)run.last, s.tactic.c_str(), r[0].median_us, (long long)q.m,
                    untuned.c_str(), r[1].median_us);
      std::vector<ChoiceSegment> parts =
          untuned_parts(problem, backends, run.first, run.last, untuned,
                        std::string("slower than untuned auto's kernel there (") + why + ")", o);
      // The runs come in order of M, each inside the last piece (the choice's part above the
      // runs cut so far).
      ChoiceSegment last = std::move(pieces.back());
      pieces.pop_back();
      const int64_t last_first = pieces.empty() ? first : pieces.back().m_max + 1;
      for (ChoiceSegment& p : around(last, last_first, run.first, run.last, std::move(parts)))
        pieces.push_back(std::move(p));
    }
    out.insert(out.end(), std::make_move_iterator(pieces.begin()), std::make_move_iterator(pieces.end()));
  }
  segments = std::move(out);
}

}  // namespace fp8gemm::tuning
