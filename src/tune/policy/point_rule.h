// The rule at one M (docs/tuning.md "The rule"): the fastest challenger that beats the reference
// by more than the threshold and whose output matches the reference's wins; a challenger held
// back by the noise floor alone is timed again in a longer round first.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fp8gemm/tune.h"
#include "fp8gemm/measure.h"

namespace fp8gemm::tuning {

struct PolicyOptions;

struct PointRule {
  const Timing* winner = nullptr;        // none when no challenger beat the reference
  std::vector<const Timing*> faster;     // beat the reference by more than the threshold, best first
  std::map<std::string, double> diffs;   // output differences of `faster` (INFINITY: failed)
};

// Applies the rule at q: `reference` against `challengers`, with `threshold` (a fraction) and the
// output `tolerance`. Ties keep candidate order, so a tie never depends on timing order.
PointRule apply_rule(const Problem& q, const Timing& reference, const std::vector<const Timing*>& challengers,
                     double threshold, double tolerance, Timer& timer);

// Where `rule` found no winner and no challenger beyond the threshold, the fastest one beyond
// min_gain is timed again with the reference (tune/policy/retime.h), within what is left of `budget_us`
// (spent here). If it wins, it becomes rule.winner. Returns the challenger timed again (nullptr:
// none) and what happened, for its report.
std::pair<const Timing*, std::string> retime_held_back(const Problem& q, const Timing& reference,
                                                       const std::vector<const Timing*>& challengers,
                                                       PointRule& rule, double& budget_us, Timer& timer,
                                                       const PolicyOptions& o);

// A challenger's row in the report: "finalist", "mismatch" (its output differs) or "failed".
CandidateReport report_of(const Timing& t, const PointRule& rule, double tolerance, const std::string& note);

// How far `challenger`'s output is from `reference`'s on the same inputs (Timer::compare_outputs);
// INFINITY when the comparison itself fails. A challenger matches when this is <= the output
// tolerance, which a NaN fails too.
double output_diff(Timer& timer, const Problem& p, const Tactic& reference, const Tactic& challenger);

}  // namespace fp8gemm::tuning
