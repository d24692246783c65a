// decide(): one key measured and decided, step by step (docs/tuning.md "Measuring one key"). The
// shape of PyTorch TunableOp's FindFastest: list the candidates, time them at the bucket's edge,
// apply the rule; then the same rule at sampled M values below the edge, and a check of each
// segment's lowest M; the reason says why. Each step is a helper below decide() or in the file
// named for it (candidates, round_plan, point_rule, samples, segment_checks).
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "core/steady_clock.h"
#include "tune/policy/point_rule.h"
#include "tune/policy/decide.h"
#include "tune/policy/below_edge.h"
#include "tune/policy/segment_checks.h"
#include "tune/policy/segments.h"
#include "tune/policy/text.h"

namespace fp8gemm::tuning {

namespace {

// The decision being built, and where the key's time went (Decision::phase_ms, and the timer's
// share of it as "timer_<stage>").
class KeyRecord {
 public:
  KeyRecord(const Problem& problem, const Tactic& default_tactic, const Tactic& floor_tactic, Timer& timer,
            const PolicyOptions& o)
      : timer_(timer), clock_(o.clock_ms ? o.clock_ms : std::function<double()>(steady_ms)),
        start_(clock_()), phase_start_(start_), timer_before_(timer.spent_ms()) {
    d.problem = problem;
    d.key = key_of(problem).to_string();
    d.default_tactic = default_tactic.name();
    d.floor_tactic = floor_tactic.name();
    d.choice = d.default_tactic;
  }

  Decision d;

  // Ends phase `name` (listing, rounds, output_check, samples, low_ends, middles): its time since
  // the last.
  void phase(const char* name) {
    const double now = clock_();
    d.phase_ms[name] += now - phase_start_;
    phase_start_ = now;
  }

  Decision finish(std::string reason) {
    d.reason = std::move(reason);
    d.elapsed_ms = clock_() - start_;
    for (const auto& [stage, ms] : timer_.spent_ms()) {
      auto it = timer_before_.find(stage);
      d.phase_ms["timer_" + stage] = ms - (it == timer_before_.end() ? 0.0 : it->second);
    }
    if (d.segments.empty())
      d.segments.push_back({d.problem.m, d.choice, d.default_tactic, d.choice_us, d.default_us, {}, d.problem.m});
    return d;
  }

  // Nothing was timed: the default stays, with `reason`.
  Decision not_measured(std::string reason) {
    d.candidates.push_back({d.default_tactic, "default", 0, -1, "not measured"});
    return finish(std::move(reason));
  }

 private:
  Timer& timer_;
  std::function<double()> clock_;
  double start_, phase_start_;
  std::map<std::string, double> timer_before_;
};

// The rule at the edge over the full round, with the retime of a challenger held back by the
// noise floor alone.
struct EdgeRule {
  PointRule rule;
  const Timing* retimed = nullptr;  // the challenger timed again, if one was
  std::string retime_note;
};

// Times the candidates at the edge within the key's budget (round_plan.h): those that fit, in a
// short round that prunes the clearly slower and a full round of the finalists and the default
// twice (the noise floor). Records what the rounds found: the noise floor and the threshold it
// sets, the default's time, and a row for the default, each pruned candidate and each candidate
// the budget left out. Throws where measuring fails.
RoundResult rounds_at_edge(const Problem& problem, const std::vector<Tactic>& listed, Timer& timer,
                           const PolicyOptions& o, Decision& d);

// Applies the rule at the edge; the finalists' rows join the report (with their short-round
// times, and a note where a neighbouring bucket brought them), and the winner becomes the choice.
EdgeRule rule_at_edge(const Problem& problem, const RoundResult& rr, const std::vector<std::string>& unlisted,
                      double& retime_budget_us, Timer& timer, const PolicyOptions& o, Decision& d);

// The segment checks: the edge's segment joins the sampled ones, each reaches up as far as its
// tiles, each is checked at its lowest M, kept floors adapt, and equal neighbours merge into
// d.segments. The edge's choice follows its segment. Returns what happened to the edge's segment,
// for the reason.
std::string check_segments(std::vector<ChoiceSegment> segments, const Problem& problem,
                           const std::vector<Backend*>& backends, Timer& timer, const PolicyOptions& o,
                           KeyRecord& key);

// Why d.choice, in one sentence: the rule at the edge, then what the checks did to the edge's
// segment (`edge_note`), then each segment below the edge.
std::string reason_for(const Decision& d, const RoundResult& rr, const EdgeRule& edge, const PolicyOptions& o,
                       const std::string& edge_note);

}  // namespace

PolicyOptions policy_options(const TuneOptions& o) {
  PolicyOptions p;
  p.key_budget_ms = o.key_budget_ms;
  p.backends = o.backends;
  return p;
}

std::optional<Tactic> untuned_at(const PolicyOptions& o, const Problem& q) {
  try {
    if (o.default_at) return o.default_at(q);
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

Decision decide(const Problem& problem, const std::vector<Backend*>& backends, const Tactic& default_tactic,
                const Tactic& floor_tactic, Timer& timer, const PolicyOptions& o) {
  KeyRecord key(problem, default_tactic, floor_tactic, timer, o);
  Decision& d = key.d;

  // The candidates: the default first, every backend's tactics, a neighbouring bucket's best.
  Candidates all = gather_candidates(problem, backends, default_tactic, o.backends);
  const std::vector<std::string> unlisted = add_unlisted_preferred(all, problem, backends, o.preferred, o.backends);
  d.excluded_backends = all.excluded_backends;
  key.phase("listing");
  if (all.tactics.size() < 2) return key.not_measured("kept the default: no other tactic can run this problem");

  // Rounds at the edge, within the key's budget: a short round prunes the clearly slower, a full
  // round times the finalists and the default twice (the noise floor).
  RoundResult rr;
  try {
    rr = rounds_at_edge(problem, all.tactics, timer, o, d);
  } catch (const std::exception& e) {
    return key.not_measured(std::string("kept the default: measuring failed: ") + e.what());
  }
  key.phase("rounds");
  if (!rr.reference.ok)
    return key.finish("kept the default: it failed to run (" + rr.reference.error +
                      "), so no challenger's output can be checked against it");

  // The rule at the edge: the fastest finalist beyond the threshold whose output matches the
  // default's. Retimes, at the edge and below it, share a quarter of the key budget.
  double retime_budget_us = 0.25 * o.key_budget_ms * 1e3;
  const EdgeRule edge = rule_at_edge(problem, rr, unlisted, retime_budget_us, timer, o, d);
  key.phase("output_check");

  // Below the edge: the same rule at sampled M values; each choice covers its part of the bucket.
  std::vector<ChoiceSegment> segments = decide_below_edge(problem, backends, default_tactic, rr, all.tactics,
                                                          d.threshold, retime_budget_us, timer, o);
  for (const ChoiceSegment& s : segments) d.sampled_ms.push_back(s.sampled_m);
  key.phase("samples");

  // The segment checks: each segment's lowest M, where another contender may fit it better.
  const std::string edge_note = check_segments(std::move(segments), problem, backends, timer, o, key);

  return key.finish(reason_for(d, rr, edge, o, edge_note));
}

namespace {

RoundResult rounds_at_edge(const Problem& problem, const std::vector<Tactic>& listed, Timer& timer,
                           const PolicyOptions& o, Decision& d) {
  const RoundPlan plan = plan_rounds(problem, listed.size(), o);
  const std::vector<Tactic> measured = trim_candidates(listed, plan.keep, o.preferred);
  RoundResult rr = measure_in_rounds(timer, problem, measured, plan.rounds);
  d.measured = true;
  d.noise = rr.noise;
  d.threshold = tuning_threshold(rr.noise, o.min_gain, o.noise_factor);
  d.default_us = rr.reference.median_us;
  d.choice_us = d.default_us;
  d.candidates.push_back({d.default_tactic, "default", rr.reference.median_us, 0,
                          rr.reference.ok ? "" : rr.reference.error});
  for (const Timing& t : rr.pruned)
    d.candidates.push_back({t.tactic.name(), t.ok ? "pruned" : "failed", t.median_us, -1, t.error});
  std::set<std::string> kept;
  for (const Tactic& t : measured) kept.insert(t.name());
  for (const Tactic& t : listed)
    if (!kept.count(t.name())) d.candidates.push_back({t.name(), "skipped", 0, -1, "over the key's time budget"});
  return rr;
}

EdgeRule rule_at_edge(const Problem& problem, const RoundResult& rr, const std::vector<std::string>& unlisted,
                      double& retime_budget_us, Timer& timer, const PolicyOptions& o, Decision& d) {
  std::vector<const Timing*> finalists;
  for (const Timing& t : rr.finalists) finalists.push_back(&t);
  EdgeRule e;
  e.rule = apply_rule(problem, rr.reference, finalists, d.threshold, o.output_tolerance, timer);
  std::tie(e.retimed, e.retime_note) =
      retime_held_back(problem, rr.reference, finalists, e.rule, retime_budget_us, timer, o);
  for (const Timing& t : rr.finalists)
    d.candidates.push_back(report_of(t, e.rule, o.output_tolerance, &t == e.retimed ? e.retime_note : ""));
  for (CandidateReport& c : d.candidates)  // how far the short round's ranking can be trusted
    if (c.status != "pruned" && c.status != "skipped" && rr.short_us.count(c.tactic)) c.short_us = rr.short_us.at(c.tactic);
  for (CandidateReport& c : d.candidates)
    if (std::find(unlisted.begin(), unlisted.end(), c.tactic) != unlisted.end())
      c.note += std::string(c.note.empty() ? "" : "; ") + "not listed at this M: a neighbouring bucket's best";
  if (e.rule.winner) {
    d.choice = e.rule.winner->tactic.name();
    d.choice_us = e.rule.winner->median_us;
  }
  return e;
}

std::string check_segments(std::vector<ChoiceSegment> segments, const Problem& problem,
                           const std::vector<Backend*>& backends, Timer& timer, const PolicyOptions& o,
                           KeyRecord& key) {
  Decision& d = key.d;
  segments.push_back({problem.m, d.choice, d.default_tactic, d.choice_us, d.default_us, {}, problem.m});
  segments = extended_upwards(std::move(segments), problem, backends);
  check_low_ends(segments, problem, backends, d.candidates, d.threshold, timer, o);
  key.phase("low_ends");
  std::string note;
  if (segments.back().tactic != d.choice) {
    note = "; timed at the lowest M of the edge's segment, " + segments.back().tactic +
           " regrets less over it and takes it (" + us(segments.back().us) + " at the edge)";
    d.choice = segments.back().tactic;
    d.choice_us = segments.back().us;
  }
  adapt_kept_floors(segments, problem, backends);
  if (segments.back().tactic != d.choice) {
    note += "; the edge kept the floor's answer there and runs the adaptive floor";
    d.choice = segments.back().tactic;  // the same kernel at the edge
  }
  check_middles(segments, problem, backends, d.threshold, timer, o);
  key.phase("middles");
  check_untimed_defaults(segments, problem, backends, d.threshold, timer, o);
  key.phase("untimed_defaults");
  d.segments = merged(std::move(segments));
  return note;
}

std::string reason_for(const Decision& d, const RoundResult& rr, const EdgeRule& edge, const PolicyOptions& o,
                       const std::string& edge_note) {
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
  const Timing* winner = edge.rule.winner;
  const auto faster_than_default = [&](const Timing* t) {
    return t->tactic.name() + " is " + percent(1.0 - t->median_us / d.default_us) + " faster than the default (" +
           us(t->median_us) + " vs " + us(d.default_us) + "), ";
  };
  if (winner && winner == edge.retimed)
    return faster_than_default(winner) + "within " + rule + "; " + edge.retime_note + below;
  if (winner) return faster_than_default(winner) + "beyond " + rule + ", and its output matches the default's" + below;
  if (!edge.rule.faster.empty())
    return "kept the default: every challenger faster by more than " + rule + " produced a different output" + below;
  const Timing* best = nullptr;
  for (const Timing& t : rr.finalists)
    if (t.ok && (!best || t.median_us < best->median_us)) best = &t;
  if (!best) return "kept the default: no challenger survived the short round" + below;
  return "kept the default: the best challenger " + best->tactic.name() + " (" + us(best->median_us) +
         ") is not faster by more than " + rule + (edge.retimed ? "; " + edge.retime_note : std::string()) + below;
}

}  // namespace

}  // namespace fp8gemm::tuning
