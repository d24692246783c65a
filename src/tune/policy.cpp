#include "tune/policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/steady_clock.h"
#include "measure/graph_timer.h"
#include "tune/bucket.h"
#include "tune/retime.h"
#include "tune/segment_ends.h"
#include "tune/text.h"
#include "tune/tuner.h"

namespace fp8gemm::tuning {

namespace {

bool allowed(const std::string& backend, const std::vector<std::string>& only) {
  return only.empty() || std::find(only.begin(), only.end(), backend) != only.end();
}

// Calls per graph replay the GPU timer will use with its default sizing; only for budgeting.
int expected_calls(double call_us) { return calls_per_replay_for(call_us, GraphTimerOptions{}); }

// How tactics are timed at a sampled M below the edge: one warm-up and 5 timed replays each, in
// one round-robin. (A segment's lowest M: segment_ends.cpp.)
constexpr MeasureOptions kBelowEdgeRound{0, 5, 1};

}  // namespace

double round_cost_us(const Problem& q, const MeasureOptions& round, int tactics) {
  const double t = estimate_call_us(q);
  return double(tactics) * (round.replays + round.warmup_replays) * expected_calls(t) * t;
}

double below_edge_cost_us(const Problem& q) { return round_cost_us(q, kBelowEdgeRound); }

double output_diff(Timer& timer, const Problem& p, const Tactic& reference, const Tactic& challenger) {
  try {
    return timer.compare_outputs(p, reference, {challenger}).at(0);
  } catch (const std::exception&) {
    return INFINITY;
  }
}

PolicyOptions policy_options(const TuneOptions& o) {
  PolicyOptions p;
  p.key_budget_ms = o.key_budget_ms;
  p.min_gain = o.min_gain;
  p.noise_factor = o.noise_factor;
  p.output_tolerance = o.output_tolerance;
  p.backends = o.backends;
  p.bucket_samples = o.bucket_samples;
  p.lower_choice_at_first_sample = o.lower_choice_at_first_sample;
  p.check_segment_low_ends = o.check_segment_ends;
  p.adaptive_floor = o.adaptive_floor;
  p.split_segments = o.split_segments;
  p.split_at_floor_switch = o.split_at_floor_switch;
  p.floor_keeps_low_kernel = o.floor_keeps_low_kernel;
  p.samples_follow_edge = o.samples_follow_edge;
  p.kept_floor_adapts = o.kept_floor_adapts;
  p.low_end_ties = o.low_end_ties;
  p.retime_close_calls = o.retime_close_calls;
  p.adaptive_floor_interior = o.adaptive_floor_interior;
  p.retime_in_noise = o.retime_in_noise;
  return p;
}

Candidates gather_candidates(const Problem& p, const std::vector<Backend*>& backends,
                             const Tactic& default_tactic, const std::vector<std::string>& only) {
  Candidates c;
  c.tactics.push_back(default_tactic);
  std::set<std::string> seen{default_tactic.name()};
  for (Backend* b : backends) {
    std::string name;
    try {
      name = b->name();
      if (!allowed(name, only)) continue;
      const Verdict v = b->available();
      if (!v.ok) {
        c.excluded_backends.push_back(name + ": not available: " + v.reason);
        c.excluded_names.insert(name);
        continue;
      }
      // Listing may throw anything (FlashInfer fault 4: cuDNN with two libcudart copies);
      // the backend is then excluded for this problem and tuning carries on.
      for (Tactic& t : b->tactics(p))
        if (seen.insert(t.name()).second) c.tactics.push_back(std::move(t));
    } catch (const std::exception& e) {
      c.excluded_backends.push_back((name.empty() ? "?" : name) + ": listing tactics failed: " + e.what());
      c.excluded_names.insert(name);
    } catch (...) {
      c.excluded_backends.push_back((name.empty() ? "?" : name) + ": listing tactics failed (unknown exception)");
      c.excluded_names.insert(name);
    }
  }
  return c;
}

std::vector<std::string> add_unlisted_preferred(Candidates& c, const Problem& p, const std::vector<Backend*>& backends,
                                                const std::vector<std::string>& preferred,
                                                const std::vector<std::string>& only) {
  std::vector<std::string> added;
  std::set<std::string> seen;
  for (const Tactic& t : c.tactics) seen.insert(t.name());
  for (const std::string& name : preferred) {
    if (seen.count(name)) continue;
    try {
      Tactic t = Tactic::parse(name);
      Backend* b = find_backend(backends, t.backend);
      // excluded_names holds the backends gather_candidates found unavailable or failing to list.
      if (!b || !allowed(t.backend, only) || c.excluded_names.count(t.backend)) continue;
      // The adaptive tactic runs the backend's default here, which the backend lists already.
      if (const auto a = b->adaptive_default(); a && a->name() == name) continue;
      if (!b->can_implement(p, t).ok) continue;
      seen.insert(name);
      c.tactics.push_back(std::move(t));
      added.push_back(name);
    } catch (const std::exception&) {
      // A name that no longer parses, or a backend that throws: not a candidate, nothing else.
    }
  }
  return added;
}

double estimate_call_us(const Problem& p) {
  // Deliberately optimistic about neither: ~3 TB/s and ~1000 TFLOP/s are below H200 ceilings
  // (4.5 TB/s, ~1430 TFLOP/s measured), so budgets err on the side of measuring less.
  const double bytes_s = p.min_bytes() / 3.0e12;
  const double flops_s = p.flops() / 1.0e15;
  return std::max(bytes_s, flops_s) * 1e6 + 4.0;
}

RoundPlan plan_rounds(const Problem& p, size_t n_candidates, const PolicyOptions& o) {
  RoundPlan plan;
  plan.rounds = o.rounds;
  const double t = estimate_call_us(p);
  const double budget_us = o.key_budget_ms * 1e3;

  // Short round: one warm-up and one timed replay of a few calls; enough to drop the clearly
  // slower (> prune_ratio x best). It may take ~40% of the budget. Calls of >= 150 us get one
  // call per replay, and one such replay scatters by ~5% (H200 tune, M >= 1024: short-round /
  // full-round time had a 5-7% spread, against 1.5-2.5% at M <= 128), which decides the few
  // finalists a large key can afford; so they get the median of three replays and no warm-up
  // (a slow first replay is outvoted), 1.5x the time of warm-up + one.
  // Replays of ~150 us (session 7; 200 before): enough to prune at 1.3x, and at small M, where
  // 50-90 candidates take the short round, it is ~4% of the whole-suite tune.
  // Calls of < ~40 us (>= 4 per replay) get no warm-up replay: their graphs are uploaded when
  // captured, a replay of 4-20 calls is too long for one cold call to move it by the 30% that
  // prunes, and the warm-up round was a third of the GPU time of a light key (session 8 tune:
  // ~25 ms per key at M <= 64). They are far below the settle threshold either way.
  const int short_calls = int(std::clamp(std::ceil(150.0 / t), 1.0, 20.0));
  plan.rounds.short_round = short_calls == 1   ? MeasureOptions{1, 3, 0}
                            : short_calls >= 4 ? MeasureOptions{short_calls, 1, 0, false}
                                               : MeasureOptions{short_calls, 1, 1};
  const double short_cost =
      double(plan.rounds.short_round.replays + plan.rounds.short_round.warmup_replays) * short_calls * t;
  const size_t fit = size_t(std::max(2.0, std::floor(0.4 * budget_us / short_cost)));
  plan.keep = std::min(n_candidates, fit);

  // Full round: the reference twice plus the finalists, median of 7 replays (5 when tight,
  // never fewer: DESIGN "median of >= 5 replays").
  const double left_us = std::max(0.0, budget_us - short_cost * double(plan.keep));
  const int calls = expected_calls(t);
  for (int replays : {7, 5}) {
    const double per = double(replays + 1) * calls * t;
    const int finalists = int(std::floor(left_us / per)) - 2;
    plan.rounds.full_round = MeasureOptions{0, replays, 1};
    if (finalists >= 1) {
      plan.rounds.max_finalists = std::min(o.rounds.max_finalists, finalists);
      return plan;
    }
  }
  plan.rounds.max_finalists = 1;  // over budget: still compare the best challenger, at minimum cost
  return plan;
}

std::vector<Tactic> trim_candidates(const std::vector<Tactic>& tactics, size_t keep,
                                    const std::vector<std::string>& preferred) {
  if (tactics.size() <= keep) return tactics;
  std::vector<Tactic> out{tactics[0]};
  std::set<std::string> taken{tactics[0].name()};
  for (const std::string& name : preferred)
    for (size_t i = 1; i < tactics.size() && out.size() < keep; ++i)
      if (tactics[i].name() == name && taken.insert(name).second) out.push_back(tactics[i]);
  std::vector<std::string> order;  // backends in first-seen order
  std::map<std::string, std::vector<const Tactic*>> by_backend;
  for (size_t i = 1; i < tactics.size(); ++i) {
    if (taken.count(tactics[i].name())) continue;
    auto& list = by_backend[tactics[i].backend];
    if (list.empty()) order.push_back(tactics[i].backend);
    list.push_back(&tactics[i]);
  }
  for (size_t rank = 0; out.size() < keep && out.size() < tactics.size(); ++rank)
    for (const std::string& b : order)
      if (rank < by_backend[b].size() && out.size() < keep) out.push_back(*by_backend[b][rank]);
  return out;
}

int64_t bucket_lower(int64_t m) {
  const int64_t edge = m_bucket(m);
  const auto& edges = m_bucket_edges();
  int64_t lower = 0;
  for (int64_t e : edges)
    if (e < edge) lower = e;
  if (edge > edges.back()) lower = edge / 2;
  return lower;
}

std::vector<int64_t> bucket_sample_ms(int64_t m, int count) {
  const int64_t edge = m_bucket(m);
  const int64_t lower = bucket_lower(m);
  std::vector<int64_t> out;
  // Equal parts: each sample's choice covers the part that ends at it, and the edge's the last.
  // (Session 5 measured the bucket's lowest M + the middle instead: M=200 gained, M=300 and 700
  // lost more; docs/tuning.md "Where the samples go".)
  for (int i = 1; i <= count; ++i) {
    const int64_t s = lower + std::max<int64_t>(1, std::llround(double(edge - lower) * i / (count + 1)));
    if (s < edge && (out.empty() || out.back() < s)) out.push_back(s);
  }
  return out;
}

namespace {

// The rule at one M: the fastest challenger that beats the reference by more than `threshold`
// and whose output matches the reference's at that M; none when no challenger does.
struct PointRule {
  const Timing* winner = nullptr;
  std::vector<const Timing*> faster;     // beat the reference by more than the threshold, best first
  std::map<std::string, double> diffs;   // output differences of `faster` (INFINITY: failed)
};

PointRule apply_rule(const Problem& q, const Timing& reference, const std::vector<const Timing*>& challengers,
                     double threshold, double tolerance, Timer& timer) {
  PointRule r;
  if (!reference.ok) return r;
  // Ties keep candidate order (stable sort), so a tie never depends on timing order.
  for (const Timing* t : challengers)
    if (t->ok && t->median_us < reference.median_us * (1.0 - threshold)) r.faster.push_back(t);
  std::stable_sort(r.faster.begin(), r.faster.end(),
                   [](const Timing* x, const Timing* y) { return x->median_us < y->median_us; });
  if (r.faster.empty()) return r;
  std::vector<Tactic> to_compare;
  for (const Timing* t : r.faster) to_compare.push_back(t->tactic);
  try {
    const std::vector<double> d = timer.compare_outputs(q, reference.tactic, to_compare);
    for (size_t i = 0; i < to_compare.size() && i < d.size(); ++i) r.diffs[to_compare[i].name()] = d[i];
  } catch (const std::exception&) {
  }
  for (const Timing* t : r.faster) {
    auto it = r.diffs.find(t->tactic.name());
    if (it != r.diffs.end() && it->second <= tolerance) {  // NaN fails this comparison too
      r.winner = t;
      break;
    }
  }
  return r;
}

CandidateReport report_of(const Timing& t, const PointRule& rule, double tolerance, const std::string& note) {
  auto it = rule.diffs.find(t.tactic.name());
  const bool mismatch = it != rule.diffs.end() && !(it->second <= tolerance);
  if (!t.ok) return {t.tactic.name(), "failed", 0, -1, t.error};
  return {t.tactic.name(), mismatch ? "mismatch" : "finalist", t.median_us, it == rule.diffs.end() ? -1 : it->second,
          mismatch ? "output differs from the default's by " + std::to_string(it->second) + " (tolerance " +
                         std::to_string(tolerance) + ")"
                   : note};
}

// PolicyOptions::retime_in_noise: where `rule` found no winner and no challenger beyond the
// threshold, the fastest one beyond min_gain is timed again with the reference (tune/retime.h),
// within what is left of `budget_us` (spent here). If it wins, it becomes rule.winner. Returns
// the challenger timed again (nullptr: none) and what happened, for its report.
std::pair<const Timing*, std::string> retime_held_back(const Problem& q, const Timing& reference,
                                                       const std::vector<const Timing*>& challengers,
                                                       PointRule& rule, double& budget_us, Timer& timer,
                                                       const PolicyOptions& o) {
  if (!o.retime_in_noise || rule.winner || !rule.faster.empty()) return {nullptr, ""};
  const Timing* held = held_back_by_noise(reference, challengers, o.min_gain);
  if (!held) return {nullptr, ""};
  const double cost = retime_cost_us(reference.median_us);
  if (cost > budget_us) return {held, "held back by the noise floor; not timed again: over the key's budget"};
  budget_us -= cost;
  const Retime r = retime(q, reference.tactic, held->tactic, reference.median_us, timer, o);
  if (r.output_diff >= 0) rule.diffs[held->tactic.name()] = r.output_diff;
  if (r.wins) rule.winner = held;
  return {held, "held back by the noise floor; " + r.note};
}

// PolicyOptions::retime_close_calls: at calls under kCloseCallUs, the rule's choice (its winner,
// or the reference) and the fastest other tactic of the round within close_margin of it are timed
// again (tune/retime.h, the choice as the reference there), within what is left of `budget_us`.
// If the other is faster beyond that round's threshold it takes the point: the reference by
// clearing rule.winner, a challenger once its output matches the reference's. Returns the
// challenger the note belongs to (the other, or the winner the reference took the point back
// from; nullptr: nothing retimed) and the note.
std::pair<const Timing*, std::string> retime_close_call(const Problem& q, const Timing& reference,
                                                        const std::vector<const Timing*>& challengers,
                                                        PointRule& rule, double& budget_us, Timer& timer,
                                                        const PolicyOptions& o) {
  if (!o.retime_in_noise || !o.retime_close_calls || !reference.ok || !(reference.median_us < kCloseCallUs))
    return {nullptr, ""};
  const Timing* choice = rule.winner ? rule.winner : &reference;
  const Timing* other = nullptr;
  auto consider = [&](const Timing* t) {
    auto d = rule.diffs.find(t->tactic.name());
    const bool mismatch = d != rule.diffs.end() && !(d->second <= o.output_tolerance);
    if (t != choice && t->ok && !mismatch && (!other || t->median_us < other->median_us)) other = t;
  };
  consider(&reference);
  for (const Timing* t : challengers) consider(t);
  if (!other || other->median_us > choice->median_us * (1 + o.close_margin)) return {nullptr, ""};
  const Timing* subject = other == &reference ? choice : other;
  const double cost = retime_cost_us(choice->median_us);
  if (cost > budget_us) return {subject, "a close call; not timed again: over the key's budget"};
  budget_us -= cost;
  const std::string against = choice == &reference ? "the default" : "the choice";
  const Retime r = retime(q, choice->tactic, other->tactic, choice->median_us, timer, o, against);
  std::string note = "a close call (" + percent(other->median_us / choice->median_us - 1) + " from " + against +
                     " in the round); " + r.note;
  if (!r.wins) return {subject, note};
  if (other == &reference) {
    rule.winner = nullptr;
    return {subject, note + "; the default takes the point back"};
  }
  if (choice != &reference) {  // its output was compared with the winner's: now with the default's
    const double diff = output_diff(timer, q, reference.tactic, other->tactic);
    rule.diffs[other->tactic.name()] = diff;
    if (!(diff <= o.output_tolerance)) return {subject, note + ", but its output differs from the default's"};
  } else {
    rule.diffs[other->tactic.name()] = r.output_diff;
  }
  rule.winner = other;
  return {subject, note};
}

// The lower bucket's choice at its edge: the first of `preferred` (best_of: the neighbour's
// segments, top first) that is a fixed tactic among the edge's candidates (so its backend is
// allowed and listed), or nullopt. An adaptive tactic is not one: the floor covers it.
std::optional<Tactic> lower_buckets_choice(const std::vector<Tactic>& at_edge, const std::vector<std::string>& preferred,
                                           const std::vector<Backend*>& backends) {
  for (const std::string& name : preferred) {
    const auto it = std::find_if(at_edge.begin(), at_edge.end(), [&](const Tactic& t) { return t.name() == name; });
    if (it == at_edge.end()) continue;
    const Backend* b = find_backend(backends, it->backend);
    const std::optional<Tactic> adaptive = b ? b->adaptive_default() : std::nullopt;
    if (!adaptive || !(*adaptive == *it)) return *it;
  }
  return std::nullopt;
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
                                              const std::optional<Tactic>& lower_choice,
                                              const std::string& edge_choice, double budget_us,
                                              double threshold, double& retime_budget_us, Timer& timer,
                                              const PolicyOptions& o) {
  const size_t fit = size_t(std::floor(budget_us / below_edge_cost_us(q)));
  if (fit < 2) return std::nullopt;

  std::set<std::string> in{reference.name()};
  // The floor at q (cuBLASLt's heuristic there) when asked for: the adaptive floor's time at q,
  // which the segment's low-end check compares (PolicyOptions::adaptive_floor); then the lower
  // bucket's choice (PolicyOptions::lower_choice_at_first_sample).
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
  auto [retimed, retime_note] = retime_held_back(q, r[0], challengers, rule, retime_budget_us, timer, o);
  if (!retimed) std::tie(retimed, retime_note) = retime_close_call(q, r[0], challengers, rule, retime_budget_us, timer, o);
  // A tie here goes to the edge's choice (PolicyOptions::samples_follow_edge): the edge measured
  // it faster beyond the threshold; here it is within the threshold but not slower.
  const Timing* follow = nullptr;
  if (!rule.winner && o.samples_follow_edge && !edge_choice.empty() && edge_choice != reference.name())
    for (const Timing* c : challengers)
      if (c->ok && c->tactic.name() == edge_choice && c->median_us <= r[0].median_us) {
        const double diff = output_diff(timer, q, reference, c->tactic);
        rule.diffs[edge_choice] = diff;
        if (diff <= o.output_tolerance) follow = c;  // NaN fails this comparison too
        break;
      }
  const Timing* chosen = rule.winner ? rule.winner : follow;

  ChoiceSegment s;
  s.m_max = s.sampled_m = q.m;
  s.default_tactic = reference.name();
  s.default_us = r[0].median_us;
  s.tactic = chosen ? chosen->tactic.name() : reference.name();
  s.us = chosen ? chosen->median_us : r[0].median_us;
  s.candidates.push_back({reference.name(), "default", r[0].median_us, 0, ""});
  for (const Timing* c : challengers)
    s.candidates.push_back(report_of(*c, rule, o.output_tolerance,
                                     c == retimed ? retime_note
                                     : c == follow ? "within the threshold of the default here; the edge's choice"
                                     : newcomers.count(c->tactic.name()) ? "listed at this M, not at the edge"
                                     : lower_choice && c->tactic == *lower_choice ? "the lower bucket's choice"
                                                                                  : ""));
  return s;
}

// A sampled M's choice also holds a little above it, while it needs no more M tiles there
// (Backend::same_tiles_up_to): the boundary to the next segment moves up to that M. On the
// H200, M=300 and 700, just above the samples at 299 and 683, ran 299's two 152-row tiles and
// 683's four 176-row tiles best, while the choices of the next segment up were 5-28% slower.
std::vector<ChoiceSegment> extended_upwards(std::vector<ChoiceSegment> segments, const Problem& problem,
                                            const std::vector<Backend*>& backends) {
  // Before merging: each segment still ends at its own sampled M, so the cap is the next
  // sampled M (a choice never reaches an M where another one was measured better).
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    ChoiceSegment& s = segments[i];
    Problem q = problem;
    q.m = s.sampled_m;
    s.m_max = std::max(s.m_max, std::min(reach_of(q, s.tactic, backends), segments[i + 1].sampled_m - 1));
  }
  return segments;
}


}  // namespace

Decision decide(const Problem& problem, const std::vector<Backend*>& backends,
                const Tactic& default_tactic, const Tactic& floor_tactic, Timer& timer,
                const PolicyOptions& o) {
  const auto clock = o.clock_ms ? o.clock_ms : std::function<double()>(steady_ms);
  const double start = clock();
  double phase_start = start;
  Decision d;
  auto phase = [&](const char* name) {
    const double now = clock();
    d.phase_ms[name] += now - phase_start;
    phase_start = now;
  };
  d.problem = problem;
  d.key = key_of(problem).to_string();
  d.default_tactic = default_tactic.name();
  d.floor_tactic = floor_tactic.name();
  d.choice = d.default_tactic;
  // Where the timer's share of this key's time went ("timer_capture", "timer_settle", ...).
  const std::map<std::string, double> timer_before = timer.spent_ms();
  auto finish = [&](std::string reason) {
    d.reason = std::move(reason);
    d.elapsed_ms = clock() - start;
    for (const auto& [stage, ms] : timer.spent_ms()) {
      auto it = timer_before.find(stage);
      d.phase_ms["timer_" + stage] = ms - (it == timer_before.end() ? 0.0 : it->second);
    }
    if (d.segments.empty())
      d.segments.push_back({problem.m, d.choice, d.default_tactic, d.choice_us, d.default_us, {}, problem.m});
    return d;
  };

  Candidates all = gather_candidates(problem, backends, default_tactic, o.backends);
  const std::vector<std::string> unlisted = add_unlisted_preferred(all, problem, backends, o.preferred, o.backends);
  d.excluded_backends = all.excluded_backends;
  phase("listing");
  if (all.tactics.size() < 2) {
    d.candidates.push_back({d.default_tactic, "default", 0, -1, "not measured"});
    return finish("kept the default: no other tactic can run this problem");
  }

  const RoundPlan plan = plan_rounds(problem, all.tactics.size(), o);
  const std::vector<Tactic> measured = trim_candidates(all.tactics, plan.keep, o.preferred);
  std::set<std::string> kept;
  for (const Tactic& t : measured) kept.insert(t.name());

  RoundResult rr;
  try {
    rr = measure_in_rounds(timer, problem, measured, plan.rounds);
  } catch (const std::exception& e) {
    d.candidates.push_back({d.default_tactic, "default", 0, -1, "not measured"});
    return finish(std::string("kept the default: measuring failed: ") + e.what());
  }
  phase("rounds");
  d.measured = true;
  d.noise = rr.noise;
  d.threshold = std::max(o.min_gain, o.noise_factor * rr.noise);
  d.default_us = rr.reference.median_us;
  d.choice_us = d.default_us;
  d.clock_mhz = rr.reference.clock_mhz;
  d.candidates.push_back({d.default_tactic, "default", rr.reference.median_us, 0,
                          rr.reference.ok ? "" : rr.reference.error});
  for (const Timing& t : rr.pruned)
    d.candidates.push_back({t.tactic.name(), t.ok ? "pruned" : "failed", t.median_us, -1, t.error});
  for (const Tactic& t : all.tactics)
    if (!kept.count(t.name())) d.candidates.push_back({t.name(), "skipped", 0, -1, "over the key's time budget"});

  if (!rr.reference.ok)
    return finish("kept the default: it failed to run (" + rr.reference.error +
                  "), so no challenger's output can be checked against it");

  // The edge: the plain rule over the full round.
  std::vector<const Timing*> finalists;
  for (const Timing& t : rr.finalists) finalists.push_back(&t);
  PointRule edge = apply_rule(problem, rr.reference, finalists, d.threshold, o.output_tolerance, timer);
  // Retimes (PolicyOptions::retime_in_noise) at the edge and the samples share a quarter of the
  // key budget.
  double retime_budget_us = 0.25 * o.key_budget_ms * 1e3;
  auto [retimed, retime_note] = retime_held_back(problem, rr.reference, finalists, edge, retime_budget_us, timer, o);
  const Timing* round_winner = edge.winner;
  bool close_call = false;  // whether `retimed` is a close call's (else held back by noise, or none)
  if (!retimed) {
    std::tie(retimed, retime_note) = retime_close_call(problem, rr.reference, finalists, edge, retime_budget_us, timer, o);
    close_call = retimed != nullptr;
  }
  for (const Timing& t : rr.finalists)
    d.candidates.push_back(report_of(t, edge, o.output_tolerance, &t == retimed ? retime_note : ""));
  for (CandidateReport& c : d.candidates)  // how far the short round's ranking can be trusted
    if (c.status != "pruned" && c.status != "skipped" && rr.short_us.count(c.tactic)) c.short_us = rr.short_us.at(c.tactic);
  for (CandidateReport& c : d.candidates)
    if (std::find(unlisted.begin(), unlisted.end(), c.tactic) != unlisted.end())
      c.note += std::string(c.note.empty() ? "" : "; ") + "not listed at this M: a neighbouring bucket's best";
  if (edge.winner) {
    d.choice = edge.winner->tactic.name();
    d.choice_us = edge.winner->median_us;
  }
  phase("output_check");

  // Below the edge: each sampled M gets the rule too, over the edge's best finalists (fastest
  // first), the edge's default and what the backends list only there; its choice covers the
  // part of the bucket that ends at it. A tactic that wins at the edge may lose a wave or its
  // tile fit lower down (H200: 1.26x at M=300 of llama70b.gate_up with one choice per bucket).
  std::vector<ChoiceSegment> segments;
  const std::vector<int64_t> ms = bucket_sample_ms(problem.m, o.bucket_samples);
  if (!ms.empty()) {
    // Ranked by the better of two showings: the full round's time, or the short round's on the
    // full round's scale (times the default's full / short time), so one slow full round keeps no
    // finalist from the samples. Why (H200 session 24, 8192x1024, m<=48): CUTLASS 64x128 PDL took
    // 4.46 us in the short round and 5.04 in the full round, ranked last of 9 finalists and was
    // timed at neither sample; bench timed it the fastest at every M from 37 to 48 (4.38-4.47 us,
    // four runs), and M=40 ran the heuristic's 64x40 tile, 1.07x the best.
    const auto short_of = [&](const Timing& t) {
      const auto it = rr.short_us.find(t.tactic.name());
      return it == rr.short_us.end() ? 0.0 : it->second;
    };
    const double short_scale = short_of(rr.reference) > 0 ? rr.reference.median_us / short_of(rr.reference) : 0.0;
    const auto rank = [&](const Timing* t) {
      const double s = short_of(*t) * short_scale;
      return s > 0 ? std::min(t->median_us, s) : t->median_us;
    };
    std::vector<const Timing*> by_time(finalists);
    std::stable_sort(by_time.begin(), by_time.end(), [&](const Timing* x, const Timing* y) { return rank(x) < rank(y); });
    std::vector<Tactic> from_edge{default_tactic};
    for (const Timing* t : by_time) from_edge.push_back(t->tactic);
    std::vector<const Timing*> pruned_by_time;
    for (const Timing& t : rr.pruned)
      if (t.ok) pruned_by_time.push_back(&t);
    std::stable_sort(pruned_by_time.begin(), pruned_by_time.end(),
                     [](const Timing* x, const Timing* y) { return x->median_us < y->median_us; });
    std::vector<Tactic> pruned_at_edge;
    for (const Timing* t : pruned_by_time) pruned_at_edge.push_back(t->tactic);
    std::set<std::string> listed_at_edge;
    for (const Tactic& t : all.tactics) listed_at_edge.insert(t.name());
    const std::optional<Tactic> lower_choice =
        o.lower_choice_at_first_sample ? lower_buckets_choice(all.tactics, o.preferred, backends) : std::nullopt;
    const double budget_us = o.key_budget_ms * 1e3 / double(ms.size());
    // A chain: the next sample is where the previous sample's choice needs another M tile (up
    // to there it holds, since it keeps its time and, as a rule, no tactic gets faster as M
    // grows; docs/tuning.md names the exception seen), but no lower than its own place in `ms`,
    // so the samples still spread over the bucket.
    int64_t covered = 0;
    for (int64_t floor_m : ms) {
      Problem q = problem;
      q.m = std::max(floor_m, covered + 1);
      if (q.m >= problem.m) break;
      const Tactic reference = o.default_at ? o.default_at(q) : default_tactic;
      // The adaptive floor competes for this sample's segment only where the heuristic changes
      // its mind inside it; then its time here (the floor's at q) is needed.
      std::vector<Tactic> first_here;
      if (o.adaptive_floor && o.check_segment_low_ends) {
        const int64_t below = d.sampled_ms.empty() ? bucket_lower(problem.m) : std::max(d.sampled_ms.back(), covered);
        const int64_t start = below + 1;  // where this sample's segment starts, about
        const std::string floor_q = fixed_floor(backends, problem, q.m);
        if (!floor_q.empty() && floor_q != fixed_floor(backends, problem, start)) first_here.push_back(Tactic::parse(floor_q));
      }
      // The lowest sample only: just above the lower edge (PolicyOptions::lower_choice_at_first_sample).
      const bool lowest = segments.empty() && floor_m == ms.front();
      if (lowest && lower_choice && can_run(backends, q, *lower_choice)) first_here.push_back(*lower_choice);
      if (auto s = decide_at_sample(q, backends, reference, from_edge, pruned_at_edge, listed_at_edge, first_here,
                                    lowest ? lower_choice : std::nullopt, edge.winner ? d.choice : std::string(),
                                    budget_us, d.threshold, retime_budget_us, timer, o)) {
        d.sampled_ms.push_back(q.m);
        covered = reach_of(q, s->tactic, backends);
        segments.push_back(std::move(*s));
      }
    }
  }
  phase("samples");
  segments.push_back({problem.m, d.choice, d.default_tactic, d.choice_us, d.default_us, {}, problem.m});
  segments = extended_upwards(std::move(segments), problem, backends);
  std::string edge_note;
  if (o.check_segment_low_ends) {
    check_low_ends(segments, problem, backends, d.candidates, d.threshold, timer, o);
    phase("low_ends");
    if (segments.back().tactic != d.choice) {
      edge_note = "; timed at the lowest M of the edge's segment, " + segments.back().tactic +
                  " regrets less over it and takes it (" + us(segments.back().us) + " at the edge)";
      d.choice = segments.back().tactic;
      d.choice_us = segments.back().us;
    }
  }
  if (o.adaptive_floor && o.kept_floor_adapts) {
    adapt_kept_floors(segments, problem, backends);
    if (segments.back().tactic != d.choice) {
      edge_note += "; the edge kept the floor's answer there and runs the adaptive floor";
      d.choice = segments.back().tactic;  // the same kernel at the edge
    }
  }
  d.segments = merged(std::move(segments));

  const std::string rule = "max(" + percent(o.min_gain) + ", " + std::to_string(o.noise_factor).substr(0, 3) +
                           "x noise " + percent(rr.noise) + ") = " + percent(d.threshold);
  std::string below;
  for (size_t i = 0; i + 1 < d.segments.size(); ++i) {
    const ChoiceSegment& s = d.segments[i];
    below += (below.empty() ? "; below the edge, " : ", ") + std::string("M<=") + std::to_string(s.m_max) + ": " +
             (s.tactic == s.default_tactic ? "the default at M=" + std::to_string(s.sampled_m)
                                           : s.tactic + " (" + percent(1.0 - s.us / s.default_us) + " faster at M=" +
                                                 std::to_string(s.sampled_m) + ")");
  }
  below = edge_note + below;
  if (close_call && edge.winner == retimed && edge.winner != round_winner)
    return finish(retimed->tactic.name() + " takes the point: " + retime_note + below);
  if (close_call && round_winner && !edge.winner)
    return finish("kept the default: " + round_winner->tactic.name() + " beat it in the round, beyond " + rule + "; " +
                  retime_note + below);
  if (edge.winner && edge.winner == retimed && !close_call)
    return finish(retimed->tactic.name() + " is " + percent(1.0 - retimed->median_us / d.default_us) +
                  " faster than the default (" + us(retimed->median_us) + " vs " + us(d.default_us) + "), within " +
                  rule + "; " + retime_note + below);
  if (edge.winner)
    return finish(edge.winner->tactic.name() + " is " + percent(1.0 - edge.winner->median_us / d.default_us) +
                  " faster than the default (" + us(edge.winner->median_us) + " vs " + us(d.default_us) + "), beyond " +
                  rule + ", and its output matches the default's" + (close_call ? "; " + retime_note : std::string()) +
                  below);
  if (!edge.faster.empty())
    return finish("kept the default: every challenger faster by more than " + rule + " produced a different output" +
                  below);
  const Timing* best = nullptr;
  for (const Timing& t : rr.finalists)
    if (t.ok && (!best || t.median_us < best->median_us)) best = &t;
  if (!best) return finish("kept the default: no challenger survived the short round" + below);
  return finish("kept the default: the best challenger " + best->tactic.name() + " (" + us(best->median_us) +
                ") is not faster by more than " + rule + (retimed ? "; " + retime_note : std::string()) + below);
}

}  // namespace fp8gemm::tuning
