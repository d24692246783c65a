#include "tune/policy/below_edge.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "tune/policy/point_rule.h"
#include "tune/policy/decide.h"
#include "tune/policy/segments.h"
#include "tune/defaults/default_chain.h"

namespace fp8gemm::tuning {

namespace {

// The edge's finalists, fastest first by the better of two showings: the full round's time, or
// the short round's on the full round's scale (times the default's full / short time). Why: one
// slow full round must not keep from the samples a finalist that is the fastest below the edge.
std::vector<Tactic> edge_finalists_by_time(const RoundResult& edge, const Tactic& default_tactic) {
  const auto short_of = [&](const Timing& t) {
    const auto it = edge.short_us.find(t.tactic.name());
    return it == edge.short_us.end() ? 0.0 : it->second;
  };
  const double short_scale = short_of(edge.reference) > 0 ? edge.reference.median_us / short_of(edge.reference) : 0.0;
  const auto rank = [&](const Timing* t) {
    const double s = short_of(*t) * short_scale;
    return s > 0 ? std::min(t->median_us, s) : t->median_us;
  };
  std::vector<const Timing*> by_time;
  for (const Timing& t : edge.finalists) by_time.push_back(&t);
  std::stable_sort(by_time.begin(), by_time.end(), [&](const Timing* x, const Timing* y) { return rank(x) < rank(y); });
  std::vector<Tactic> out{default_tactic};
  for (const Timing* t : by_time) out.push_back(t->tactic);
  return out;
}

// The candidates the edge's short round pruned that ran, fastest first.
std::vector<Tactic> pruned_by_time(const RoundResult& edge) {
  std::vector<const Timing*> ran;
  for (const Timing& t : edge.pruned)
    if (t.ok) ran.push_back(&t);
  std::stable_sort(ran.begin(), ran.end(), [](const Timing* x, const Timing* y) { return x->median_us < y->median_us; });
  std::vector<Tactic> out;
  for (const Timing* t : ran) out.push_back(t->tactic);
  return out;
}

// Times the reference at `q` (what `auto` runs there untuned), the edge's best finalists and
// tactics listed only at `q` ("newcomers"), as many as the budget allows, and applies the rule
// there. `first_here` (the floor at q, the lower bucket's choice) come right after the reference,
// each while a slot is left for one of the edge's. nullopt when the budget does not allow the
// reference and one challenger.
std::optional<ChoiceSegment> decide_at_sample(const Problem& q, const std::vector<Backend*>& backends,
                                              const Tactic& reference, const std::vector<Tactic>& from_edge,
                                              const std::vector<Tactic>& pruned_at_edge,
                                              const std::set<std::string>& listed_at_edge,
                                              const std::vector<Tactic>& first_here,
                                              const std::optional<Tactic>& lower_choice, double budget_us,
                                              double threshold, double& retime_budget_us, Timer& timer,
                                              const PolicyOptions& o) {
  const size_t fit = size_t(std::floor(budget_us / below_edge_cost_us(q)));
  if (fit < 2) return std::nullopt;

  std::set<std::string> in{reference.name()};
  std::vector<Tactic> floor_part;
  for (const Tactic& t : first_here)
    if (fit > 2 + floor_part.size() && in.insert(t.name()).second) floor_part.push_back(t);
  std::vector<Tactic> edge_part, pruned_part;
  for (const Tactic& e : from_edge)
    if (int(edge_part.size()) < o.sampled_finalists && in.insert(e.name()).second) edge_part.push_back(e);
  for (const Tactic& e : pruned_at_edge)
    if (int(pruned_part.size()) < o.sampled_pruned && in.insert(e.name()).second) pruned_part.push_back(e);
  std::vector<Tactic> new_part;
  if (o.sample_newcomers > 0) {
    std::vector<Tactic> fresh{reference};
    for (const Tactic& c : gather_candidates(q, backends, reference, o.backends).tactics)
      if (!listed_at_edge.count(c.name()) && !in.count(c.name())) fresh.push_back(c);
    fresh = trim_candidates(fresh, size_t(o.sample_newcomers) + 1);
    new_part.assign(fresh.begin() + 1, fresh.end());
  }
  // Over the budget: half the room (at least) for the edge's best, the rest for newcomers,
  // then the fastest of those the edge's short round pruned, as room allows.
  const size_t room = fit - 1 - floor_part.size();
  size_t n_new = std::min(new_part.size(), room / 2);
  const size_t n_edge = std::min(edge_part.size(), room - n_new);
  n_new = std::min(new_part.size(), room - n_edge);
  const size_t n_pruned = std::min(pruned_part.size(), room - n_edge - n_new);
  std::vector<Tactic> list{reference};
  list.insert(list.end(), floor_part.begin(), floor_part.end());
  list.insert(list.end(), edge_part.begin(), edge_part.begin() + long(n_edge));
  list.insert(list.end(), new_part.begin(), new_part.begin() + long(n_new));
  list.insert(list.end(), pruned_part.begin(), pruned_part.begin() + long(n_pruned));
  const std::set<std::string> newcomers = [&] {
    std::set<std::string> n;
    for (size_t i = 0; i < n_new; ++i) n.insert(new_part[i].name());
    return n;
  }();
  if (list.size() < 2) return std::nullopt;

  std::vector<Timing> r;
  try {
    r = timer.measure(q, list, kBelowEdgeRound);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (r.size() != list.size() || !r[0].ok) return std::nullopt;
  std::vector<const Timing*> challengers;
  for (size_t i = 1; i < r.size(); ++i) challengers.push_back(&r[i]);
  PointRule rule = apply_rule(q, r[0], challengers, threshold, o.output_tolerance, timer);
  const auto [retimed, retime_note] = retime_held_back(q, r[0], challengers, rule, retime_budget_us, timer, o);

  ChoiceSegment s;
  s.m_max = s.sampled_m = q.m;
  s.default_tactic = reference.name();
  s.default_us = r[0].median_us;
  s.tactic = rule.winner ? rule.winner->tactic.name() : reference.name();
  s.us = rule.winner ? rule.winner->median_us : r[0].median_us;
  s.candidates.push_back({reference.name(), "default", r[0].median_us, 0, ""});
  for (const Timing* c : challengers)
    s.candidates.push_back(report_of(*c, rule, o.output_tolerance,
                                     c == retimed                        ? retime_note
                                     : newcomers.count(c->tactic.name()) ? "listed at this M, not at the edge"
                                     : lower_choice && c->tactic == *lower_choice ? "the lower bucket's choice"
                                                                                  : ""));
  return s;
}

}  // namespace

// A tactic that wins at the edge may lose a wave or its tile fit lower down. The samples form a
// chain: the next sample is where the previous sample's choice needs another M tile (up to there
// it holds, since it keeps its time and, as a rule, no tactic gets faster as M grows; docs/tuning.md
// names the exception seen), but no lower than its own place in bucket_sample_ms, so the samples
// still spread over the bucket.
std::vector<ChoiceSegment> decide_below_edge(const Problem& problem, const std::vector<Backend*>& backends,
                                             const Tactic& default_tactic, const RoundResult& edge,
                                             const std::vector<Tactic>& listed_at_edge, double threshold,
                                             double& retime_budget_us, Timer& timer, const PolicyOptions& o) {
  std::vector<ChoiceSegment> segments;
  const std::vector<int64_t> ms = bucket_sample_ms(problem.m, o.bucket_samples);
  if (ms.empty()) return segments;
  const std::vector<Tactic> from_edge = edge_finalists_by_time(edge, default_tactic);
  const std::vector<Tactic> pruned_at_edge = pruned_by_time(edge);
  std::set<std::string> listed;
  for (const Tactic& t : listed_at_edge) listed.insert(t.name());
  const std::optional<Tactic> lower_choice = lower_buckets_choice(listed_at_edge, o.preferred, backends);
  const double budget_us = o.key_budget_ms * 1e3 / double(ms.size());
  int64_t covered = 0;
  for (int64_t floor_m : ms) {
    Problem q = problem;
    q.m = std::max(floor_m, covered + 1);
    if (q.m >= problem.m) break;
    const Tactic reference = o.default_at ? o.default_at(q) : default_tactic;
    // The adaptive floor competes for this sample's segment only where the heuristic changes its
    // mind inside it; then its time here (the floor's at q) is needed.
    std::vector<Tactic> first_here;
    const int64_t below = segments.empty() ? bucket_lower(problem.m) : std::max(segments.back().sampled_m, covered);
    const int64_t start = below + 1;  // where this sample's segment starts, about
    const std::string floor_q = fixed_floor(backends, problem, q.m);
    if (!floor_q.empty() && floor_q != fixed_floor(backends, problem, start)) first_here.push_back(Tactic::parse(floor_q));
    // The lowest sample only, just above the lower edge: the lower bucket's choice there, where it
    // is likeliest still to be the best, and the edge may have pruned it (a tile fitted to the
    // lower edge wastes rows at this one).
    const bool lowest = segments.empty() && floor_m == ms.front();
    if (lowest && lower_choice && can_run(backends, q, *lower_choice)) first_here.push_back(*lower_choice);
    if (auto s = decide_at_sample(q, backends, reference, from_edge, pruned_at_edge, listed, first_here,
                                  lowest ? lower_choice : std::nullopt, budget_us, threshold, retime_budget_us,
                                  timer, o)) {
      covered = reach_of(q, s->tactic, backends);
      segments.push_back(std::move(*s));
    }
  }
  return segments;
}

}  // namespace fp8gemm::tuning
