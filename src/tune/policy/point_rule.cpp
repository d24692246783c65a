#include "tune/policy/point_rule.h"

#include <algorithm>
#include <cmath>

#include "tune/policy/decide.h"
#include "tune/policy/retime.h"

namespace fp8gemm::tuning {

PointRule apply_rule(const Problem& q, const Timing& reference, const std::vector<const Timing*>& challengers,
                     double threshold, double tolerance, Timer& timer) {
  PointRule r;
  if (!reference.ok) return r;
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

std::pair<const Timing*, std::string> retime_held_back(const Problem& q, const Timing& reference,
                                                       const std::vector<const Timing*>& challengers,
                                                       PointRule& rule, double& budget_us, Timer& timer,
                                                       const PolicyOptions& o) {
  if (rule.winner || !rule.faster.empty()) return {nullptr, ""};
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

CandidateReport report_of(const Timing& t, const PointRule& rule, double tolerance, const std::string& note) {
  auto it = rule.diffs.find(t.tactic.name());
  const bool mismatch = it != rule.diffs.end() && !(it->second <= tolerance);
  if (!t.ok) return {t.tactic.name(), "failed", 0, -1, t.error};
  return {t.tactic.name(), mismatch ? "mismatch" : "finalist", t.median_us, it == rule.diffs.end() ? -1 : it->second,
          mismatch ? "output differs from the default's by " + std::to_string(it->second) + " (tolerance " +
                         std::to_string(tolerance) + ")"
                   : note};
}

double output_diff(Timer& timer, const Problem& p, const Tactic& reference, const Tactic& challenger) {
  try {
    return timer.compare_outputs(p, reference, {challenger}).at(0);
  } catch (const std::exception&) {
    return INFINITY;
  }
}

}  // namespace fp8gemm::tuning
