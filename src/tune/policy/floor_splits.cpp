// The parts of a segment check that move a segment's boundaries where the adaptive floor is
// involved (segment_checks.h): splitting at the heuristic's switch, the low end's kernel keeping
// its tiles, and how far a handed-over segment reaches.
#include <algorithm>
#include <cmath>
#include <utility>

#include "tune/policy/segment_checks.h"
#include "tune/policy/segments.h"

namespace fp8gemm::tuning {

namespace {

// Splits segments[i] below M = m_max + 1: a new segment, inserted before it, runs c[winner] up to
// m_max and is recorded as timed at its lowest M (`low`), where the default was timed too. The
// low-end rows were timed there: they go with it (`note` added to its tactic's row).
// segments[i + 1] is the upper part, as it was.
void split_off_lower(std::vector<ChoiceSegment>& segments, size_t i, int64_t m_max, int64_t low,
                     const std::vector<Contender>& c, size_t winner, const std::string& note) {
  ChoiceSegment& s = segments[i];
  ChoiceSegment lower;
  lower.m_max = m_max;
  lower.sampled_m = low;
  lower.tactic = c[winner].name;
  lower.default_tactic = s.default_tactic;
  lower.us = c[winner].at_low;
  lower.default_us = c[0].at_low;
  for (const Contender& x : c)
    if (x.name == s.default_tactic) lower.default_us = x.at_low;
  for (auto it = s.candidates.begin(); it != s.candidates.end();)
    if (it->status == "low end" || it->status == "failed") {
      if (it->tactic == lower.tactic) it->note += note;
      lower.candidates.push_back(std::move(*it));
      it = s.candidates.erase(it);
    } else {
      ++it;
    }
  segments.insert(segments.begin() + long(i), std::move(lower));
}

// Where the heuristic's answer switches between M = lo and M = hi (lo < hi), to or from `kernel`
// (its answer at lo when kernel_at_lo, at hi otherwise): the largest M on lo's side, found by
// bisection over its answers (host calls only; one switch assumed in between).
int64_t last_on_low_side(const std::vector<Backend*>& backends, const Problem& problem, int64_t lo, int64_t hi,
                         const std::string& kernel, bool kernel_at_lo) {
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    ((fixed_floor(backends, problem, mid) == kernel) == kernel_at_lo ? lo : hi) = mid;
  }
  return lo;
}

// The first of 8 M spread over (low, high], other than `sampled`, where the floor's answer is
// neither `at_low` nor `at_sampled` (the kernels the adaptive floor was timed as), with that
// answer; {0, ""} if there is none.
std::pair<int64_t, std::string> untimed_floor_inside(const std::vector<Backend*>& backends, const Problem& problem,
                                                     int64_t low, int64_t sampled, int64_t high,
                                                     const std::string& at_low, const std::string& at_sampled) {
  constexpr int64_t kProbes = 8;
  for (int64_t i = 1; i <= kProbes; ++i) {
    const int64_t m = low + (high - low) * i / kProbes;
    if (m <= low || m == sampled) continue;
    std::string floor_m = fixed_floor(backends, problem, m);
    if (!floor_m.empty() && floor_m != at_low && floor_m != at_sampled) return {m, std::move(floor_m)};
  }
  return {0, std::string()};
}

}  // namespace

// The rule of extended_upwards for a sampled choice, for the tactic a check gave the segment to.
// Why the adaptive floor's own reach: cut back to the sampled M, the M just above it fell to the
// next segment's choice, although the heuristic still ran there the kernel timed at the sampled M.
int64_t reach_above_sample(const std::vector<ChoiceSegment>& segments, size_t i, const Problem& problem,
                           const std::string& tactic, const std::string& adaptive, const std::string& floor_top,
                           const std::vector<Backend*>& backends) {
  const ChoiceSegment& s = segments[i];
  if (i + 1 >= segments.size()) return s.m_max;
  const bool floor = !adaptive.empty() && tactic == adaptive;
  const std::string& kernel = floor ? floor_top : tactic;
  if (kernel.empty()) return s.sampled_m;
  Problem top = problem;
  top.m = s.sampled_m;
  int64_t reach = std::min(reach_of(top, kernel, backends), segments[i + 1].sampled_m - 1);
  if (floor && reach > s.sampled_m && fixed_floor(backends, problem, reach) != floor_top)
    reach = last_on_low_side(backends, problem, s.sampled_m, reach, floor_top, true);
  return std::max(s.sampled_m, reach);
}

// The adaptive floor is a contender only where the heuristic answers one kernel at the segment's
// lowest M and another (`floor_top`) at its top. Where each end prefers its own contender, the
// worse-regret rule hands one of them a loss beyond the threshold at the other end (given whole
// to the adaptive floor, the edge ran the heuristic's kernel there, slower than the default's).
// The split point is found by bisection over the heuristic's answers (cheap host calls, nothing
// timed): below, the adaptive floor, which runs there what it was timed as at the lowest M (or
// what the heuristic prefers nearer to it); above, the contender fastest at the top, as a sampled
// M chooses.
bool split_at_floor_switch(std::vector<ChoiceSegment>& segments, size_t i, const Problem& problem, int64_t low,
                           const std::vector<Contender>& c, const std::string& adaptive, const std::string& floor_top,
                           double threshold, const std::vector<Backend*>& backends, bool edge) {
  size_t floor = c.size(), top = c.size();
  double others_low = INFINITY;
  for (size_t j = 0; j < c.size(); ++j) {
    if (c[j].name == adaptive) {
      floor = j;
      continue;
    }
    if (c[j].at_low > 0) others_low = std::min(others_low, c[j].at_low);
    if (c[j].at_sampled > 0 && (top == c.size() || c[j].at_sampled < c[top].at_sampled)) top = j;
  }
  if (floor == c.size() || top == c.size() || !(c[floor].at_low > 0) || !std::isfinite(others_low)) return false;
  if (!(c[floor].at_low * (1 + threshold) < others_low) ||
      !(c[top].at_sampled * (1 + threshold) < c[floor].at_sampled))
    return false;
  // The heuristic answers floor_top at the sampled M and another kernel at `low`.
  const int64_t lo = last_on_low_side(backends, problem, low, segments[i].sampled_m, floor_top, false);
  split_off_lower(segments, i, lo, low, c, floor,
                  "; takes the lower part, up to M=" + std::to_string(lo) +
                      ", where the heuristic still answers another kernel than " + floor_top);
  ChoiceSegment& upper = segments[i + 1];
  if (upper.tactic != c[top].name && !edge)  // as the rule's winner below
    upper.m_max = reach_above_sample(segments, i + 1, problem, c[top].name, adaptive, floor_top, backends);
  upper.tactic = c[top].name;
  upper.us = c[top].at_sampled;
  return true;
}

// floor_low is a fixed kernel, timed and the fastest at the lowest M, which keeps that time while
// it needs no more M tiles. Where the heuristic answers a third kernel before that reach (neither
// floor_low nor floor_top: timed nowhere), the segment is split: floor_low itself up to its reach,
// the adaptive floor above; where that reach covers the whole segment, floor_low takes it.
// Elsewhere the two run kernels that were timed, and nothing changes. Why: both timed ends can be
// right while the heuristic runs a slower kernel in between. `top`: the sampled M less one for a
// segment the adaptive floor took whole, the lower part's top for the lower part of
// split_at_floor_switch.
bool low_kernel_holds(std::vector<ChoiceSegment>& segments, size_t i, const Problem& problem, int64_t low,
                      int64_t top, const std::vector<Contender>& c, const std::string& adaptive,
                      const std::string& floor_low, const std::string& floor_top,
                      const std::vector<Backend*>& backends) {
  if (floor_low.empty()) return false;
  Problem q = problem;
  q.m = low;
  const int64_t reach = std::min(reach_of(q, floor_low, backends), top);
  const auto [other_m, other] =
      untimed_floor_inside(backends, problem, low, segments[i].sampled_m, reach, floor_low, floor_top);
  if (other_m == 0) return false;
  // The adaptive floor's low-end row is floor_low's timing: the note goes there.
  std::vector<CandidateReport>& rows = segments[i].candidates;
  const auto row = std::find_if(rows.rbegin(), rows.rend(), [&](const CandidateReport& c) {
    return c.tactic == adaptive && c.status == "low end";
  });
  if (row == rows.rend()) return false;
  row->note += "; its kernel here, " + floor_low + ", keeps the M up to " + std::to_string(reach) +
               " (the same M tiles), where the heuristic answers " + other + " at M=" + std::to_string(other_m);
  if (reach >= segments[i].m_max) {
    segments[i].tactic = floor_low;
    return false;
  }
  std::vector<Contender> with_low = c;
  with_low.push_back({floor_low, 0, row->time_us});
  split_off_lower(segments, i, reach, low, with_low, with_low.size() - 1, "");
  return true;
}

}  // namespace fp8gemm::tuning
