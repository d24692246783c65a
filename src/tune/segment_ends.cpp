#include "tune/segment_ends.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "tune/tuner.h"

namespace fp8gemm::tuning {

namespace {

// How a segment's lowest M is timed: one warm-up and 3 timed replays. It compares two to four
// tactics whose differences there are the point (the H200's were 3-18%, session 7), and the
// whole-suite tune has ~440 such checks to fit in its 2 minutes.
constexpr MeasureOptions kLowEndRound{0, 3, 1};

// A tactic that may take a segment after its lowest M is timed.
struct Contender {
  std::string name;
  double at_sampled = 0;  // its time at the segment's sampled M
  double at_low = 0;      // at the segment's lowest M (0: not timed or failed there)
};

// Times tactics a and b at q in a low-end round, if its estimated cost fits `budget_us` (which it
// then draws on); empty when over the budget or when either failed. May throw (a round that
// threw).
std::vector<Timing> time_two_within(const Problem& q, const Tactic& a, const Tactic& b, Timer& timer,
                                    double& budget_us) {
  const double cost_us = round_cost_us(q, kLowEndRound, 2);
  if (cost_us > budget_us) return {};
  budget_us -= cost_us;
  std::vector<Timing> r = timer.measure(q, {a, b}, kLowEndRound);
  if (r.size() != 2 || !r[0].ok || !r[1].ok) return {};
  return r;
}

// Splits segments[i] below M = m_max + 1: a new segment, inserted before it, runs c[winner] up to
// m_max and is recorded as timed at its lowest M (`low`), where the default was timed too. The
// low-end rows were timed there: they go with it (`note` added to its tactic's row), then
// `more_rows`. segments[i + 1] is the upper part, as it was.
void split_off_lower(std::vector<ChoiceSegment>& segments, size_t i, int64_t m_max, int64_t low,
                     const std::vector<Contender>& c, size_t winner, const std::string& note,
                     std::vector<CandidateReport> more_rows) {
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
  for (CandidateReport& r : more_rows) lower.candidates.push_back(std::move(r));
  segments.insert(segments.begin() + long(i), std::move(lower));
}

// How far split_segments bisects a segment whose ends disagree: each step halves the M range
// where the two contenders' times cross (3 steps: to 1/8 of the segment, ~8 M of a 64-M bucket).
constexpr int kSplitSteps = 3;

// PolicyOptions::split_segments. Segment i was timed at its lowest M (`low`; its low-end rows are
// the last of its candidates), contenders[0] is its choice. Where another contender is faster at
// the lowest M by more than `threshold` and slower at the sampled M by more than it too, each end
// prefers its own and neither fits the whole segment (H200, 4096x21504: CUTLASS 64x128 won at
// 213 by 13%, lost at 193 by 9%, and at 200 was 1.2x the best in every run). The two are timed
// against each other between the ends, bisecting where their times cross (up to kSplitSteps
// rounds within `budget_us`, which they draw on): the lower part goes to the fastest at the
// lowest M, the upper part stays the choice's. Session 8 split at the middle without timing
// anything, which handed M=213 of that key to the tactic 13% slower there. Returns whether it
// split (segments[i] is then the lower part).
bool split_where_they_cross(std::vector<ChoiceSegment>& segments, size_t i, const Problem& problem, int64_t low,
                            const std::vector<Contender>& c, double threshold, Timer& timer, double& budget_us) {
  ChoiceSegment& s = segments[i];
  if (c.size() < 2 || !(c[0].at_low > 0) || s.sampled_m - low < 2) return false;
  size_t best = 0;
  for (size_t j = 1; j < c.size(); ++j)
    if (c[j].at_low > 0 && c[j].at_low < c[best].at_low) best = j;
  if (best == 0 || c[0].at_low <= c[best].at_low * (1 + threshold) ||
      c[best].at_sampled <= c[0].at_sampled * (1 + threshold))
    return false;
  // The lower contender is faster at `lo`, the choice at `hi`; they cross in between.
  int64_t lo = low, hi = s.sampled_m;
  std::vector<CandidateReport> steps;
  try {
    const Tactic choice = Tactic::parse(c[0].name), lower_tactic = Tactic::parse(c[best].name);
    for (int step = 0; step < kSplitSteps && hi - lo > 1; ++step) {
      Problem q = problem;
      q.m = lo + (hi - lo) / 2;
      const std::vector<Timing> r = time_two_within(q, choice, lower_tactic, timer, budget_us);
      if (r.empty()) break;
      const std::string at = "at M=" + std::to_string(q.m) + ", bisecting where the two ends' choices cross";
      for (const Timing& x : r) steps.push_back({x.tactic.name(), "split", x.median_us, -1, at});
      (r[1].median_us < r[0].median_us ? lo : hi) = q.m;
    }
  } catch (const std::exception&) {
    // A tactic name that no longer parses, or a round that threw: split where the steps got to.
  }
  const int64_t m_max = lo + (hi - lo) / 2;  // the middle of what is still unknown
  split_off_lower(segments, i, m_max, low, c, best, "; takes the lower part, up to M=" + std::to_string(m_max),
                  std::move(steps));
  return true;
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

// How far above its sampled M segment i holds once a low-end check (or split_at_floor_switch, for
// the upper part) has given it to `tactic`: as
// far as that tactic's own M tiles reach, below the next segment's sampled M (extended_upwards'
// rule for a sampled choice). The adaptive floor (`adaptive`) runs the heuristic's answer at
// each M: it reaches as far as its kernel at the sampled M (`floor_top`) does while the heuristic
// still answers that kernel (bisected over its answers, host calls only). Why (H200 session 23,
// 22656x4480, the segment of M=299): its kept 128x152 tile reached 304, the check gave the segment
// to the adaptive floor and cut it back to 299, and M=300 then fell to the next segment's 176xM/3
// tile, 13% slower at 299 and 1.20x the best at 300 in bench, while the heuristic ran 128x152 there.
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

// PolicyOptions::split_at_floor_switch. The adaptive floor (`adaptive`) is a contender only where
// the heuristic answers one kernel at the segment's lowest M (`low`) and another at its top
// (`floor_top`). Where it is the fastest at the lowest M and slower at the top than the fastest
// fixed contender there, each by more than `threshold`, each end prefers its own, and the
// worse-regret rule hands one of them a loss beyond the threshold. Why (H200 session 22,
// 4480x15680, the edge's segment (3840, 4096]): the adaptive floor 5.8% faster at 3841, its
// 192x192 tile 4.9% slower than the default's 128x160 at 4096; it took the segment, and bench
// timed M=4096 1.049x the best in every run (59 of the suite's 460 edges went to the adaptive
// floor that way, a dozen of them 1.02-1.12x the best at the edge in the tune's own times). The
// segment is split where the heuristic's answer turns into `floor_top`, found by bisection over
// its answers (cheap host calls, nothing timed): below, the adaptive floor, which runs there what
// it was timed as at the lowest M (or what the heuristic prefers nearer to it); above, the
// contender fastest at the top, as a sampled M chooses, among c[0, compared): those whose output
// was compared with the default's where they were timed (a low-end tie comes after them; its
// output is compared only where it takes the whole segment). Returns whether it split.
bool split_at_floor_switch(std::vector<ChoiceSegment>& segments, size_t i, const Problem& problem, int64_t low,
                           const std::vector<Contender>& c, size_t compared, const std::string& adaptive,
                           const std::string& floor_top, double threshold, const std::vector<Backend*>& backends,
                           bool edge) {
  size_t floor = c.size(), top = c.size();
  double others_low = INFINITY;
  for (size_t j = 0; j < c.size(); ++j) {
    if (c[j].name == adaptive) {
      floor = j;
      continue;
    }
    if (c[j].at_low > 0) others_low = std::min(others_low, c[j].at_low);
    if (j < compared && c[j].at_sampled > 0 && (top == c.size() || c[j].at_sampled < c[top].at_sampled)) top = j;
  }
  if (floor == c.size() || top == c.size() || !(c[floor].at_low > 0) || !std::isfinite(others_low)) return false;
  if (!(c[floor].at_low * (1 + threshold) < others_low) ||
      !(c[top].at_sampled * (1 + threshold) < c[floor].at_sampled))
    return false;
  // The heuristic answers floor_top at the sampled M and another kernel at `low`.
  const int64_t lo = last_on_low_side(backends, problem, low, segments[i].sampled_m, floor_top, false);
  split_off_lower(segments, i, lo, low, c, floor,
                  "; takes the lower part, up to M=" + std::to_string(lo) +
                      ", where the heuristic still answers another kernel than " + floor_top,
                  {});
  ChoiceSegment& upper = segments[i + 1];
  if (upper.tactic != c[top].name && !edge)  // as the rule's winner below
    upper.m_max = reach_above_sample(segments, i + 1, problem, c[top].name, adaptive, floor_top, backends);
  upper.tactic = c[top].name;
  upper.us = c[top].at_sampled;
  return true;
}

// PolicyOptions::adaptive_floor_interior: the first of 8 M spread over (low, high], other than
// `sampled`, where the floor's answer is neither `at_low` nor `at_sampled` (the kernels the
// adaptive floor was timed as), with that answer; {0, ""} if there is none.
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

// The time of `name` among what was timed at one M (`rows`), on the scale of the round that timed
// the default there; 0 when it was not timed there. A row the short round pruned holds its
// short-round time, and the short and full rounds run in different states (heavy calls: one-call
// replays, unsettled), so it is scaled by the default's full / short time: an estimate only, which
// check_low_ends replaces with a timing where the budget allows (time_again_at_top). Why: H200
// session 19, 10240x8192 at M=4096: the floor's 320x128 tile, pruned at 536 us against the
// default's 534 us full-round time (508 us in the short round), took the edge's segment as the
// adaptive floor and ran 1.06x the best in bench, which timed it at 562 us; scaled, 564 us.
double timed_us(const std::vector<CandidateReport>& rows, const std::string& name) {
  for (const CandidateReport& c : rows) {
    if (c.tactic != name || !(c.time_us > 0)) continue;
    if (c.status == "default" || c.status == "finalist" || c.status == "mismatch") return c.time_us;
    if (c.status != "pruned") continue;
    for (const CandidateReport& d : rows)
      if (d.status == "default" && d.time_us > 0 && d.short_us > 0) return c.time_us * d.time_us / d.short_us;
    return 0;  // no short-round time of the default to scale by
  }
  return 0;
}

bool pruned_in(const std::vector<CandidateReport>& rows, const std::string& name) {
  for (const CandidateReport& c : rows)
    if (c.tactic == name) return c.status == "pruned";
  return false;
}

// The floor's time at the segment's top (its sampled M, `top`) where the short round pruned it
// there: timed again with the segment's choice in a round like the lowest M's, and put on the
// scale of the choice's time there (`s.us`, from the round that chose it); `estimate_us` (the
// scaled short-round time) when the round is over `budget_us` or fails. The two rows join the
// segment's candidates with status "top". Why: session 20 (H200), with the scaled estimate
// the same 10240x8192 key at M=4096 weighed the 320x128 tile at 532 us against the choice's 513
// (1.036x), and gave it the segment by 0.2% of regret; bench timed it 1.065x the best: the
// floor's tile lost more to the power cap than the default's between the two rounds.
double time_again_at_top(ChoiceSegment& s, const Problem& top, const std::string& floor, double estimate_us,
                         Timer& timer, double& budget_us) {
  try {
    const std::vector<Timing> r = time_two_within(top, Tactic::parse(s.tactic), Tactic::parse(floor), timer, budget_us);
    if (r.empty() || !(r[0].median_us > 0) || !(r[1].median_us > 0)) return estimate_us;
    const std::string at =
        "at M=" + std::to_string(top.m) + ", the segment's top: pruned there by the short round, timed again";
    for (const Timing& x : r) s.candidates.push_back({x.tactic.name(), "top", x.median_us, -1, at});
    return s.us * r[1].median_us / r[0].median_us;
  } catch (const std::exception&) {
    return estimate_us;
  }
}

}  // namespace

bool timed_in_full(const CandidateReport& c) {
  return (c.status == "default" || c.status == "finalist") && c.time_us > 0;
}

int64_t reach_of(const Problem& q, const std::string& tactic, const std::vector<Backend*>& backends) {
  try {
    const Tactic t = Tactic::parse(tactic);
    if (Backend* b = find_backend(backends, t.backend)) return std::max(q.m, b->same_tiles_up_to(q, t));
  } catch (const std::exception&) {
  }
  return q.m;
}

std::string fixed_floor(const std::vector<Backend*>& backends, const Problem& problem, int64_t m) {
  Problem q = problem;
  q.m = m;
  try {
    return floor_choice(backends, q).name();
  } catch (const std::exception&) {
    return std::string();
  }
}


// PolicyOptions::floor_keeps_low_kernel. The adaptive floor (c[floor]) has taken segment i on its
// time at the segment's lowest M (`low`), where it ran the heuristic's answer there, `floor_low`:
// a fixed kernel, timed and the fastest there, which keeps that time while it needs no more M
// tiles. Where the heuristic answers a third kernel before that reach (neither floor_low nor
// `floor_top`, its answer at the sampled M: timed nowhere), the segment is split: floor_low itself
// up to its reach (at most `top`), the adaptive floor above; where that reach covers the whole
// segment, floor_low takes it. Elsewhere the two run kernels that were timed, and nothing changes.
// `top`: the sampled M less one for a segment the adaptive floor took whole, the lower part's top
// for the lower part of split_at_floor_switch. Why (H200 sessions 19-30, 6144x4096, the segment
// (192, 223] of m<=256): the heuristic answers 64x200 at 193-196 (the best there), 128x104 at
// 200-208 (3.3% slower than 64x200 at 200) and 192x56 at the sampled 213 (the best there): both
// timed ends were right, and M=200 ran 1.037x the best in every bench; and 1.034x in session 30's
// call 4, whose tune split that segment at the heuristic's switch to 192x56 and gave the adaptive
// floor the lower part, up to 208. Returns whether it split (segments[i] is then the lower part).
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
  split_off_lower(segments, i, reach, low, with_low, with_low.size() - 1, "", {});
  return true;
}

// PolicyOptions::check_segment_low_ends (off in PolicyOptions{}, on through TuneOptions{} since
// session 6: docs/tuning.md "Checking a segment's lowest M"). A segment whose choice is a
// challenger is timed again at its lowest M, with its default (and the default there); the
// segment goes to whichever regrets less over the two ends (at the lowest M, and at the sampled
// M where the challenger won). Why: a tactic's time can fall as M grows within one tile count
// (H200, 4096x8192: CUTLASS 64x128 18.2 us at M=193, 15.0 at 213, cuBLASLt's best 15.6), so a
// choice measured at a segment's top can be the slowest at its bottom.
// With PolicyOptions::adaptive_floor the adaptive floor (`cublaslt:heuristic`: the heuristic's
// first at each M) is a third contender, timed at the lowest M and known at the sampled M (the
// floor there was timed), and the edge's own segment is checked too: a fixed tactic chosen at one
// M can lose to what the heuristic picks a few M lower (H200 session 6: M=3000 of 1280x8192 ran
// the 256x128 tile chosen at 3072, 1.107x the best, while the heuristic's choice at 3000 was the
// best). It competes only where the heuristic's choice at the lowest M differs from its choice
// at the sampled M: elsewhere it is one fixed tactic, already weighed there (and the check would
// cost ~17 s more of the whole-suite tune, session 7).
void check_low_ends(std::vector<ChoiceSegment>& segments, const Problem& problem,
                    const std::vector<Backend*>& backends, const std::vector<CandidateReport>& edge_rows,
                    double threshold, Timer& timer, const PolicyOptions& o) {
  // A quarter of the key budget for the edge's segment, and a quarter for all the others
  // together (at large M, where a check costs most, that is one of them).
  const double budget_us = 0.25 * o.key_budget_ms * 1e3;
  double spent_below_edge_us = 0;
  double top_budget_us = budget_us;  // time_again_at_top's, for all of the key's segments
  const std::optional<Tactic> adaptive = o.adaptive_floor ? adaptive_floor(backends, problem) : std::nullopt;
  int64_t previous = bucket_lower(problem.m);
  for (size_t i = 0; i < segments.size(); previous = segments[i].m_max, ++i) {
    ChoiceSegment& s = segments[i];
    const bool edge = i + 1 == segments.size();
    if (edge && !adaptive) break;  // without the adaptive floor the edge's segment stays the edge's
    Problem q = problem;
    q.m = previous + 1;
    if (q.m >= s.sampled_m || !(s.us > 0) || !(s.default_us > 0)) continue;

    std::vector<Contender> contenders{{s.tactic, s.us}};
    if (s.default_tactic != s.tactic) contenders.push_back({s.default_tactic, s.default_us});
    // Only where the heuristic changes its mind inside the segment is the adaptive floor more
    // than one fixed tactic, which the rule at the sampled M has already weighed.
    std::string floor_low;  // the floor's kernel at the lowest M: what the adaptive floor runs there
    std::string floor_top;  // and at the sampled M
    if (adaptive) {
      floor_low = fixed_floor(backends, problem, q.m);
      floor_top = fixed_floor(backends, problem, s.sampled_m);
      const std::vector<CandidateReport>& top_rows = edge ? edge_rows : s.candidates;
      double at_top = floor_top.empty() ? 0 : timed_us(top_rows, floor_top);
      if (at_top > 0 && !floor_low.empty() && floor_low != floor_top) {
        const auto [untimed_m, untimed] =
            o.adaptive_floor_interior
                ? untimed_floor_inside(backends, problem, q.m, s.sampled_m, s.m_max, floor_low, floor_top)
                : std::pair<int64_t, std::string>{0, std::string()};
        if (untimed_m == 0 && pruned_in(top_rows, floor_top) && floor_top != s.tactic) {
          Problem top = problem;
          top.m = s.sampled_m;
          at_top = time_again_at_top(s, top, floor_top, at_top, timer, top_budget_us);
        }
        if (untimed_m == 0)
          contenders.push_back({adaptive->name(), at_top});
        else
          s.candidates.push_back({adaptive->name(), "skipped", 0, -1,
                                  "not a contender: at M=" + std::to_string(untimed_m) + " the heuristic answers " +
                                      untimed + ", timed at neither end of the segment"});
      }
    }
    // PolicyOptions::low_end_ties: the fastest other tactic that tied with the choice where the
    // segment was timed (within the threshold: the rule there could not tell them apart).
    size_t tied = contenders.size();
    if (o.low_end_ties) {
      const CandidateReport* best_tie = nullptr;
      for (const CandidateReport& c : edge ? edge_rows : s.candidates) {
        const bool timed = timed_in_full(c);
        const bool known = std::any_of(contenders.begin(), contenders.end(),
                                       [&](const Contender& x) { return x.name == c.tactic; });
        if (timed && !known && c.time_us <= s.us * (1 + threshold) && (!best_tie || c.time_us < best_tie->time_us))
          best_tie = &c;
      }
      if (best_tie) contenders.push_back({best_tie->tactic, best_tie->time_us});
    }
    if (contenders.size() < 2) continue;

    std::vector<Tactic> list;
    auto add = [&](const Tactic& x) {
      if (std::find(list.begin(), list.end(), x) == list.end()) list.push_back(x);
    };
    std::vector<Timing> r;
    try {
      for (const Contender& c : contenders) add(Tactic::parse(c.name));
      // The default there: what `auto` runs at q untuned (unless the adaptive floor runs it).
      if (o.default_at) {
        const Tactic there = o.default_at(q);
        if (!(adaptive && there.name() == floor_low)) add(there);
      }
      // Costed as a sampled M's round (5 replays), although a check runs 3: with its own cost
      // more checks fit and the H200 result got worse (session 11, docs/tuning.md).
      const double cost_us = double(list.size()) * below_edge_cost_us(q);
      if (cost_us > budget_us - (edge ? 0 : spent_below_edge_us)) continue;
      if (!edge) spent_below_edge_us += cost_us;
      r = timer.measure(q, list, kLowEndRound);
    } catch (const std::exception&) {
      continue;
    }
    if (r.size() != list.size() || !r[0].ok) continue;
    double best_low = INFINITY, best_top = INFINITY;
    for (const Timing& x : r)
      if (x.ok) best_low = std::min(best_low, x.median_us);
    for (size_t j = 0; j < contenders.size(); ++j) {
      contenders[j].at_low = r[j].ok ? r[j].median_us : 0;
      best_top = std::min(best_top, contenders[j].at_sampled);
    }
    // Worse regret over the two ends; on a tie the earlier contender (the segment's choice first)
    // keeps it, unless a later one is no slower at either end and faster at one. Why the
    // exception (H200 session 20, 8192x1024, the segment (341, 384]): the default and the adaptive
    // floor run the same kernel at the top, so their worse regret, the top's, was the same, and
    // the default kept the segment although the heuristic's own kernel was 4% faster at M=342.
    const auto regret_of = [&](const Contender& c) {
      return c.at_low > 0 ? std::max(c.at_low / best_low, c.at_sampled / best_top) : INFINITY;
    };
    const auto dominates = [](const Contender& a, const Contender& b) {
      return a.at_low > 0 && b.at_low > 0 && a.at_low <= b.at_low && a.at_sampled <= b.at_sampled &&
             (a.at_low < b.at_low || a.at_sampled < b.at_sampled);
    };
    const auto least_regret = [&] {
      size_t w = 0;
      for (size_t j = 1; j < contenders.size(); ++j) {
        const double rj = regret_of(contenders[j]), rw = regret_of(contenders[w]);
        if (rj < rw || (rj == rw && dominates(contenders[j], contenders[w]))) w = j;
      }
      return w;
    };
    size_t winner = least_regret();
    // A tied tactic's output was never compared with the default's: it is, at both ends of the
    // segment, before it may take the segment or (split_segments) its lower half.
    if (tied < contenders.size() && (winner == tied || o.split_segments)) {
      Problem top = problem;
      top.m = s.sampled_m;
      const Tactic reference = Tactic::parse(s.default_tactic), challenger = Tactic::parse(contenders[tied].name);
      const bool matches = output_diff(timer, q, reference, challenger) <= o.output_tolerance &&
                           output_diff(timer, top, reference, challenger) <= o.output_tolerance;  // NaN fails too
      if (!matches) {
        contenders[tied].at_low = 0;  // out of the running
        winner = least_regret();
      }
    }
    const std::string at = "at M=" + std::to_string(q.m) + ", the segment's lowest";
    const size_t first_row = s.candidates.size();
    for (const Timing& x : r)
      s.candidates.push_back({x.tactic.name(), x.ok ? "low end" : "failed", x.median_us, -1, x.ok ? at : x.error});
    if (o.split_at_floor_switch && adaptive &&
        split_at_floor_switch(segments, i, problem, q.m, contenders, tied, adaptive->name(), floor_top, threshold,
                              backends, edge)) {
      // The lower part runs the heuristic's answers up to its top, which may include a kernel
      // timed nowhere between the one timed at the lowest M and floor_top.
      if (o.floor_keeps_low_kernel && low_kernel_holds(segments, i, problem, q.m, segments[i].m_max, contenders,
                                                       adaptive->name(), floor_low, floor_top, backends))
        ++i;  // the adaptive floor's part of the lower part
      ++i;    // the upper part
      continue;
    }
    // The bisection has a budget of its own, as large as the check's: it runs at few keys (where
    // the two ends disagree beyond the threshold), and there a wrong part costs 7-17%.
    double split_budget_us = budget_us;
    if (o.split_segments &&
        split_where_they_cross(segments, i, problem, q.m, contenders, threshold, timer, split_budget_us)) {
      ++i;  // the upper part, still the choice's
      continue;
    }
    if (winner == 0) continue;
    const bool floor_won = adaptive && contenders[winner].name == adaptive->name();
    s.candidates[first_row + winner].note += floor_won ? "; the adaptive floor takes the segment"
                                             : winner == tied
                                                 ? "; tied with the choice where the segment was timed, it takes the segment"
                                                 : "; the default takes the segment";
    // The upward extension was the old choice's tile count; the winner's own holds instead, and
    // the next segment then starts right above it (the loop's `previous`).
    if (!edge)
      s.m_max = reach_above_sample(segments, i, problem, contenders[winner].name,
                                   adaptive ? adaptive->name() : std::string(), floor_top, backends);
    s.tactic = contenders[winner].name;
    s.us = contenders[winner].at_sampled;
    if (floor_won && o.floor_keeps_low_kernel &&
        low_kernel_holds(segments, i, problem, q.m, s.sampled_m - 1, contenders, adaptive->name(), floor_low,
                         floor_top, backends))
      ++i;  // the upper part, the adaptive floor's
  }
}

// Why (H200, session 9, llama70b.down): the sample at M=341 kept its default, the heuristic's
// answer there (a 128x176 tile: two M tiles), and its segment began at 300, where that tile wastes
// 16% of its rows: 1.15x the best tactic, which the heuristic itself picks at 300 (128x152). The
// segment's low-end check, which weighs the adaptive floor, had no budget left at that M. A kept
// default that is the floor's fixed answer was never chosen over the floor, only not beaten; the
// adaptive floor runs that kernel at the sampled M and what untuned `auto` runs elsewhere.
void adapt_kept_floors(std::vector<ChoiceSegment>& segments, const Problem& problem,
                       const std::vector<Backend*>& backends) {
  const std::optional<Tactic> adaptive = adaptive_floor(backends, problem);
  if (!adaptive) return;
  for (ChoiceSegment& s : segments) {
    if (s.tactic != s.default_tactic) continue;  // a challenger won, or a check chose
    // Timed at its lowest M, or kept from the adaptive floor by adaptive_floor_interior (a
    // kernel inside that was timed nowhere).
    const bool checked = std::any_of(s.candidates.begin(), s.candidates.end(), [&](const CandidateReport& c) {
      return c.status == "low end" || (c.status == "skipped" && c.tactic == adaptive->name());
    });
    if (checked || s.tactic != fixed_floor(backends, problem, s.sampled_m)) continue;  // a table rule is kept
    s.tactic = adaptive->name();
  }
}

std::vector<ChoiceSegment> merged(std::vector<ChoiceSegment> in) {
  std::vector<ChoiceSegment> out;
  for (ChoiceSegment& s : in) {
    if (!out.empty() && out.back().tactic == s.tactic) {
      // The lower one's low-end timings stay visible (each row names its M).
      std::vector<CandidateReport> low_ends;
      for (CandidateReport& c : out.back().candidates)
        if (c.status == "low end") low_ends.push_back(std::move(c));
      s.candidates.insert(s.candidates.begin(), low_ends.begin(), low_ends.end());
      out.pop_back();
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fp8gemm::tuning
