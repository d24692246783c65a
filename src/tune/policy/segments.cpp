#include "tune/policy/segments.h"

#include <algorithm>
#include <optional>

#include "tune/defaults/default_chain.h"

namespace fp8gemm::tuning {

std::string fixed_floor(const std::vector<Backend*>& backends, const Problem& problem, int64_t m) {
  Problem q = problem;
  q.m = m;
  try {
    return floor_choice(backends, q).name();
  } catch (const std::exception&) {
    return std::string();
  }
}

int64_t reach_of(const Problem& q, const std::string& tactic, const std::vector<Backend*>& backends) {
  try {
    const Tactic t = Tactic::parse(tactic);
    if (Backend* b = find_backend(backends, t.backend)) return std::max(q.m, b->same_tiles_up_to(q, t));
  } catch (const std::exception&) {
  }
  return q.m;
}

// Why: just above a sample the sampled choice's tiles are often still the best fit (a tile count
// chosen at M=299 still fits M=300), while the next segment's choice, measured higher up, can be
// much slower there.
std::vector<ChoiceSegment> extended_upwards(std::vector<ChoiceSegment> segments, const Problem& problem,
                                            const std::vector<Backend*>& backends) {
  // The cap is the next sampled M: a choice never reaches an M where another one was measured better.
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    ChoiceSegment& s = segments[i];
    Problem q = problem;
    q.m = s.sampled_m;
    s.m_max = std::max(s.m_max, std::min(reach_of(q, s.tactic, backends), segments[i + 1].sampled_m - 1));
  }
  return segments;
}

// Why: a kept default that is the floor's fixed answer was never chosen over the floor, only not
// beaten; elsewhere in its segment the heuristic may answer a better-fitting kernel that nobody
// timed (a tile answered at the sampled M can waste many rows at the segment's lowest M). The
// adaptive floor runs that kernel at the sampled M and what untuned `auto` runs elsewhere.
void adapt_kept_floors(std::vector<ChoiceSegment>& segments, const Problem& problem,
                       const std::vector<Backend*>& backends) {
  const std::optional<Tactic> adaptive = adaptive_floor(backends, problem);
  if (!adaptive) return;
  for (ChoiceSegment& s : segments) {
    if (s.tactic != s.default_tactic) continue;  // a challenger won, or a check chose
    const bool checked = std::any_of(s.candidates.begin(), s.candidates.end(),
                                     [](const CandidateReport& c) { return c.status == "low end"; });
    if (checked || s.tactic != fixed_floor(backends, problem, s.sampled_m)) continue;  // a table rule is kept
    s.tactic = adaptive->name();
  }
}

std::vector<ChoiceSegment> merged(std::vector<ChoiceSegment> in) {
  std::vector<ChoiceSegment> out;
  for (ChoiceSegment& s : in) {
    if (!out.empty() && out.back().tactic == s.tactic) {
      // The lower one's low-end and middle timings stay visible (each row names its M).
      std::vector<CandidateReport> low_ends;
      for (CandidateReport& c : out.back().candidates)
        if (c.status == "low end" || c.status == "middle") low_ends.push_back(std::move(c));
      s.candidates.insert(s.candidates.begin(), low_ends.begin(), low_ends.end());
      out.pop_back();
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fp8gemm::tuning
