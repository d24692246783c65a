#include "tune/policy/round_plan.h"

#include <algorithm>
#include <cmath>

#include "fp8gemm/measure.h"
#include "tune/policy/decide.h"

namespace fp8gemm::tuning {

namespace {

// Calls per graph replay the GPU timer will use with its default sizing; only for budgeting.
int expected_calls(double call_us) { return calls_per_replay_for(call_us, GraphTimerOptions{}); }

}  // namespace

double estimate_call_us(const Problem& p) {
  // Deliberately optimistic about neither: ~3 TB/s and ~1000 TFLOP/s are below Hopper's
  // ceilings, so budgets err on the side of measuring less.
  const double bytes_s = p.min_bytes() / 3.0e12;
  const double flops_s = p.flops() / 1.0e15;
  return std::max(bytes_s, flops_s) * 1e6 + 4.0;
}

RoundPlan plan_rounds(const Problem& p, size_t n_candidates, const PolicyOptions& o) {
  RoundPlan plan;
  plan.rounds = o.rounds;
  const double t = estimate_call_us(p);
  const double budget_us = o.key_budget_ms * 1e3;

  // Short round: enough to drop the clearly slower (> prune_ratio x best); it may take ~40% of
  // the budget. Replays of ~150 us are enough to prune at 1.3x and keep the short round a small
  // share of the tune at small M, where most candidates take it. Calls of >= 150 us get one call
  // per replay, and one such replay scatters by several percent, which decides the few finalists
  // a large key can afford: they get the median of three replays and no warm-up (a slow first
  // replay is outvoted). Calls short enough for >= 4 per replay get no warm-up replay: their
  // graphs are uploaded when captured, one cold call cannot move a replay of 4-20 calls by the
  // 30% that prunes, and a warm-up round would be a third of a light key's GPU time. They are far
  // below the settle threshold either way.
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

double round_cost_us(const Problem& q, const MeasureOptions& round, int tactics) {
  const double t = estimate_call_us(q);
  return double(tactics) * (round.replays + round.warmup_replays) * expected_calls(t) * t;
}

double below_edge_cost_us(const Problem& q) { return round_cost_us(q, kBelowEdgeRound); }

std::optional<std::array<Timing, 2>> time_pair(Timer& timer, const Problem& q, const std::string& a,
                                               const std::string& b) {
  std::vector<Timing> r;
  try {
    r = timer.measure(q, {Tactic::parse(a), Tactic::parse(b)}, kCheckRound);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (r.size() != 2 || !r[0].ok || !r[1].ok || !(r[0].median_us > 0) || !(r[1].median_us > 0)) return std::nullopt;
  return std::array<Timing, 2>{std::move(r[0]), std::move(r[1])};
}

}  // namespace fp8gemm::tuning
