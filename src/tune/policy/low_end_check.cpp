// Checking a segment's lowest M (docs/tuning.md "Checking a segment's lowest M", "The adaptive
// floor"): segment_checks.h check_low_ends.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>

#include "tune/policy/decide.h"
#include "tune/policy/round_plan.h"
#include "tune/policy/segment_checks.h"
#include "tune/policy/segments.h"
#include "tune/defaults/default_chain.h"

namespace fp8gemm::tuning {

namespace {

// The time of `name` among what was timed at one M (`rows`), on the scale of the round that timed
// the default there; 0 when it was not timed there. A row the short round pruned holds its
// short-round time, and the short and full rounds run in different states (heavy calls: one-call
// replays, unsettled), so it is scaled by the default's full / short time: an estimate only, which
// check_low_ends replaces with a timing where the budget allows (time_again_at_top). Why: compared
// unscaled with full-round times, a pruned floor kernel looked faster than the default and took
// the edge's segment, where bench then timed it slower.
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
// there: timed again with the segment's choice in a round like the lowest M's, if its estimated
// cost fits `budget_us` (which it then draws on), and put on the scale of the choice's time there
// (`s.us`, from the round that chose it); `estimate_us` (the scaled short-round time) when the
// round is over the budget or fails. The two rows join the segment's candidates with status
// "top". Why: even scaled, the estimate gave such a kernel a segment by a fraction of a percent
// of regret, and it lost more to the power cap than the default between the two rounds.
double time_again_at_top(ChoiceSegment& s, const Problem& top, const std::string& floor, double estimate_us,
                         Timer& timer, double& budget_us) {
  const double cost_us = round_cost_us(top, kCheckRound, 2);
  if (cost_us > budget_us) return estimate_us;
  budget_us -= cost_us;
  const std::optional<std::array<Timing, 2>> r = time_pair(timer, top, s.tactic, floor);
  if (!r) return estimate_us;
  const std::string at =
      "at M=" + std::to_string(top.m) + ", the segment's top: pruned there by the short round, timed again";
  for (const Timing& x : *r) s.candidates.push_back({x.tactic.name(), "top", x.median_us, -1, at, 0, top.m});
  return s.us * (*r)[1].median_us / (*r)[0].median_us;
}

// Worse regret over the two ends; on a tie the earlier contender (the segment's choice first)
// keeps it, unless a later one is no slower at either end and faster at one. Why the exception:
// where the default and the adaptive floor run the same kernel at the top, their worse regret is
// the top's for both, and the default kept the segment although the heuristic's own kernel was
// faster at the lowest M.
// Contenders not `allowed` never win; returns contenders.size() when none is allowed.
size_t least_regret(const std::vector<Contender>& contenders, const std::vector<bool>& allowed, double best_low,
                    double best_top) {
  const auto regret_of = [&](size_t j) {
    const Contender& c = contenders[j];
    return allowed[j] && c.at_low > 0 ? std::max(c.at_low / best_low, c.at_sampled / best_top) : INFINITY;
  };
  const auto dominates = [](const Contender& a, const Contender& b) {
    return a.at_low > 0 && b.at_low > 0 && a.at_low <= b.at_low && a.at_sampled <= b.at_sampled &&
           (a.at_low < b.at_low || a.at_sampled < b.at_sampled);
  };
  size_t w = 0;
  for (size_t j = 1; j < contenders.size(); ++j) {
    const double rj = regret_of(j), rw = regret_of(w);
    if (rj < rw || (rj == rw && dominates(contenders[j], contenders[w]))) w = j;
  }
  return std::isinf(regret_of(w)) ? contenders.size() : w;
}

// Whether each contender is no slower than untuned `auto` at both ends of the segment, beyond
// `threshold` (the gain a challenger needed: the key's noise): at the lowest M than `default_low`
// (what `auto` runs there untuned, timed in the same round; 0 when it was not), at the sampled M
// than the segment's default there. Why: tuning must never make an M slower than not tuning,
// and a choice measured at one end can be the slower one at the other (docs/tuning.md "Never
// slower than the default").
std::vector<bool> no_slower_than_default(const std::vector<Contender>& contenders, const ChoiceSegment& s,
                                         double default_low, double threshold) {
  std::vector<bool> out;
  for (const Contender& c : contenders)
    out.push_back(c.at_low > 0 && (!(default_low > 0) || c.at_low <= default_low * (1 + threshold)) &&
                  c.at_sampled <= s.default_us * (1 + threshold));
  return out;
}

// Where a segment whose choice is not its default could not be checked at its lowest M (over the
// budget, or the round failed), or where no contender is as fast as untuned `auto` at both ends:
// the part below the sampled M, where nothing vouches for the choice, goes to `below` (untuned
// auto there, untuned_parts: the first part holds the lowest M `low`, where the check timed it in
// `below_us`, else 0), and the choice keeps the part it was measured at. Returns how many parts
// went in before segments[i], which is then the upper part, as it was.
size_t keep_only_the_measured_part(std::vector<ChoiceSegment>& segments, size_t i, std::vector<ChoiceSegment> below,
                                   int64_t low, double below_us) {
  ChoiceSegment& s = segments[i];
  ChoiceSegment& first = below.front();
  first.sampled_m = low;
  first.us = first.default_us = below_us;
  for (auto it = s.candidates.begin(); it != s.candidates.end();)
    if (it->status == "low end" || it->status == "failed") {
      first.candidates.push_back(std::move(*it));
      it = s.candidates.erase(it);
    } else {
      ++it;
    }
  const size_t n = below.size();
  segments.insert(segments.begin() + long(i), std::make_move_iterator(below.begin()),
                  std::make_move_iterator(below.end()));
  return n;
}

}  // namespace

// A segment whose choice is a challenger is timed again at its lowest M, with its default (and
// the default there); the segment goes to whichever regrets less over the two ends (at the lowest
// M, and at the sampled M where the challenger won). Why: a tactic's time can fall as M grows
// within one tile count, so a choice measured at a segment's top can be the slowest at its bottom.
// The adaptive floor (`cublaslt:heuristic`: the heuristic's first at each M) is a third
// contender, timed at the lowest M and known at the sampled M (the floor there was timed), and
// the edge's own segment is checked too: a fixed tactic chosen at one M can lose to what the
// heuristic picks a few M lower. It competes only where the heuristic's choice at the lowest M
// differs from its choice at the sampled M: elsewhere it is one fixed tactic, already weighed
// there, and checking every segment would cost much more of the tune.
void check_low_ends(std::vector<ChoiceSegment>& segments, const Problem& problem,
                    const std::vector<Backend*>& backends, const std::vector<CandidateReport>& edge_rows,
                    double threshold, Timer& timer, const PolicyOptions& o) {
  // A quarter of the key budget for the edge's segment, and a quarter for all the others
  // together (at large M, where a check costs most, that is one of them).
  const double budget_us = 0.25 * o.key_budget_ms * 1e3;
  double spent_below_edge_us = 0;
  double top_budget_us = budget_us;  // time_again_at_top's, for all of the key's segments
  const std::optional<Tactic> adaptive = adaptive_floor(backends, problem);
  int64_t previous = bucket_lower(problem.m);
  for (size_t i = 0; i < segments.size(); previous = segments[i].m_max, ++i) {
    ChoiceSegment& s = segments[i];
    const bool edge = i + 1 == segments.size();
    // Without the adaptive floor the edge's segment is checked only where its choice is not its default.
    if (edge && !adaptive && s.tactic == s.default_tactic) break;
    Problem q = problem;
    q.m = previous + 1;
    if (q.m >= s.sampled_m || !(s.us > 0) || !(s.default_us > 0)) continue;
    // What `auto` runs at the lowest M untuned: the guarantee's reference there (the segment's
    // default when that cannot be asked).
    const std::optional<Tactic> there = untuned_at(o, q);
    const std::string default_low = there ? there->name() : s.default_tactic;
    // A choice other than the default that goes unchecked keeps only the part it was measured at.
    const auto unchecked = [&](const std::string& why, double default_low_us = 0) {
      if (s.tactic == s.default_tactic) return;
      std::vector<ChoiceSegment> below = untuned_parts(problem, backends, q.m, s.sampled_m - 1, default_low,
                                                       "below M=" + std::to_string(s.sampled_m) + ": " + why, o);
      i += keep_only_the_measured_part(segments, i, std::move(below), q.m, default_low_us);  // to the choice's
    };

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
        if (pruned_in(top_rows, floor_top) && floor_top != s.tactic) {
          Problem top = problem;
          top.m = s.sampled_m;
          at_top = time_again_at_top(s, top, floor_top, at_top, timer, top_budget_us);
        }
        contenders.push_back({adaptive->name(), at_top});
      }
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
      if (there && !(adaptive && default_low == floor_low)) add(*there);
      // Costed as a sampled M's round (5 replays), although a check runs 3: with its own, lower
      // cost more checks fit the budget, and the whole-suite result was worse.
      const double cost_us = double(list.size()) * below_edge_cost_us(q);
      if (cost_us > budget_us - (edge ? 0 : spent_below_edge_us)) {
        unchecked("its lowest M could not be checked within the key budget");
        continue;
      }
      if (!edge) spent_below_edge_us += cost_us;
      r = timer.measure(q, list, kCheckRound);
    } catch (const std::exception& e) {
      unchecked(std::string("checking its lowest M failed: ") + e.what());
      continue;
    }
    if (r.size() != list.size() || !r[0].ok) {
      unchecked("the choice did not run at its lowest M");
      continue;
    }
    double best_low = INFINITY, best_top = INFINITY;
    for (const Timing& x : r)
      if (x.ok) best_low = std::min(best_low, x.median_us);
    for (size_t j = 0; j < contenders.size(); ++j) {
      contenders[j].at_low = r[j].ok ? r[j].median_us : 0;
      best_top = std::min(best_top, contenders[j].at_sampled);
    }
    double default_low_us = 0;  // untuned auto's time at the lowest M
    for (const Timing& x : r)
      if (x.ok && x.tactic.name() == default_low) default_low_us = x.median_us;
    if (!(default_low_us > 0) && adaptive && default_low == floor_low)  // the adaptive floor ran it there
      for (const Contender& c : contenders)
        if (c.name == adaptive->name()) default_low_us = c.at_low;
    const std::vector<bool> allowed = no_slower_than_default(contenders, s, default_low_us, threshold);
    const size_t winner = least_regret(contenders, allowed, best_low, best_top);
    const std::string at = "at M=" + std::to_string(q.m) + ", the segment's lowest";
    const size_t first_row = s.candidates.size();
    for (const Timing& x : r)
      s.candidates.push_back(
          {x.tactic.name(), x.ok ? "low end" : "failed", x.median_us, -1, x.ok ? at : x.error, 0, q.m});
    if (adaptive && split_at_floor_switch(segments, i, problem, q.m, contenders, adaptive->name(), floor_top,
                                          threshold, backends, edge)) {
      // The lower part runs the heuristic's answers up to its top, which may include a kernel
      // timed nowhere between the one timed at the lowest M and floor_top.
      if (low_kernel_holds(segments, i, problem, q.m, segments[i].m_max, contenders, adaptive->name(), floor_low,
                           floor_top, backends))
        ++i;  // the adaptive floor's part of the lower part
      ++i;    // the upper part
      continue;
    }
    // The choice slower than untuned auto at the lowest M, and the default the best of the rest:
    // rather than the default taking the whole segment, the choice keeps the part it was
    // measured at and the default runs below it.
    if (winner == contenders.size() || (!allowed[0] && contenders[winner].name == s.default_tactic)) {
      char why[160];
      std::snprintf(why, sizeof why, "%s took %.4g us at M=%lld, untuned auto %.4g", s.tactic.c_str(),
                    contenders[0].at_low, (long long)q.m, default_low_us);
      unchecked(std::string("slower than the default at the segment's lowest M (") + why + ")", default_low_us);
      continue;
    }
    if (winner == 0) continue;
    const bool floor_won = adaptive && contenders[winner].name == adaptive->name();
    s.candidates[first_row + winner].note +=
        floor_won ? "; the adaptive floor takes the segment" : "; the default takes the segment";
    // The upward extension was the old choice's tile count; the winner's own holds instead, and
    // the next segment then starts right above it (the loop's `previous`).
    if (!edge)
      s.m_max = reach_above_sample(segments, i, problem, contenders[winner].name,
                                   adaptive ? adaptive->name() : std::string(), floor_top, backends);
    s.tactic = contenders[winner].name;
    s.us = contenders[winner].at_sampled;
    if (floor_won && low_kernel_holds(segments, i, problem, q.m, s.sampled_m - 1, contenders, adaptive->name(),
                                      floor_low, floor_top, backends))
      ++i;  // the upper part, the adaptive floor's
  }
}

}  // namespace fp8gemm::tuning
