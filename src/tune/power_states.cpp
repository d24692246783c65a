#include "tune/power_states.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "measure/rounds.h"
#include "tune/policy.h"
#include "tune/segment_ends.h"
#include "tune/text.h"

namespace fp8gemm::tuning {

namespace {

// Times of the tactics timed in full where a segment was decided.
std::map<std::string, double> full_round_times(const std::vector<CandidateReport>& rows) {
  std::map<std::string, double> out;
  for (const CandidateReport& c : rows)
    if (timed_in_full(c)) out.emplace(c.tactic, c.time_us);
  return out;
}

// GPU time of one round-robin cycle of tactics whose calls take about `call_us` each: each
// replay lasts >= 20 calls and >= kLongReplayUs (the tuner's timer).
double cycle_us(const std::vector<double>& call_us) {
  double sum = 0;
  for (double t : call_us) sum += std::max(kLongReplayUs, 20 * t);
  return sum;
}

// Adds `text` to the note of `name`'s row (the rows where the segment was decided), if any.
void add_note(std::vector<CandidateReport>& rows, const std::string& name, const std::string& text) {
  for (CandidateReport& c : rows)
    if (c.tactic == name && timed_in_full(c)) c.note += (c.note.empty() ? "" : "; ") + text;
}

// Every timing of a round ran and has a time.
bool all_timed(const std::vector<Timing>& t, size_t expected) {
  return t.size() == expected &&
         std::all_of(t.begin(), t.end(), [](const Timing& x) { return x.ok && x.median_us > 0; });
}

// timer.measure, or nothing where the round failed as a whole.
std::vector<Timing> measure_or_none(Timer& timer, const Problem& q, const std::vector<Tactic>& tactics,
                                    const MeasureOptions& m) {
  try {
    return timer.measure(q, tactics, m);
  } catch (const std::exception&) {
    return {};
  }
}

struct ContestResult {
  size_t winner = 0;           // index into the contenders; 0: the choice stays
  std::vector<double> capped;  // each contender's time under the load (the choice at its better)
  double noise = 0;
  std::string low_note;        // what the segment's lowest M timed, when it was timed
};

// One contest under the load (`lead_us` of it before the round): its loaded times go into the
// notes of the rows where the segment was decided; the winner is the one check_power_states
// applies (power_state_winner, then the segment's ends, then the output check).
ContestResult time_contest(const PowerStateContest& c, Decision& d, double lead_us, Timer& timer,
                           const std::vector<Backend*>& backends, const PolicyOptions& policy,
                           const PowerStateOptions& o) {
  ContestResult r;
  // [choice, others..., choice]: the choice's two timings give this round's noise.
  std::vector<Tactic> round = c.contenders;
  round.push_back(c.contenders.front());
  std::vector<double> calls = c.boost_us;
  calls.push_back(c.boost_us.front());
  MeasureOptions m;
  m.replays = o.replays;
  m.warmup_replays = 1;
  m.settle = false;  // no recovery: the point is the state the load leaves
  m.load_between_us = o.load_per_cycle * cycle_us(calls);
  m.load_lead_us = lead_us;
  const std::vector<Timing> t = measure_or_none(timer, c.problem, round, m);
  if (!all_timed(t, round.size())) return r;
  for (size_t i = 0; i < c.contenders.size(); ++i) r.capped.push_back(t[i].median_us);
  r.capped[0] = std::min(t.front().median_us, t.back().median_us);  // the choice at its best
  r.noise = paired_noise(t.front(), t.back());
  {  // what the loaded round timed, on the rows where the segment was decided (tune --json)
    ChoiceSegment& s = d.segments[c.segment];
    std::vector<CandidateReport>& rows = s.sampled_m == d.problem.m ? d.candidates : s.candidates;
    const double mhz = t.front().clock_mhz;
    const std::string clock = mhz > 0 ? " at " + std::to_string(int(mhz)) + " MHz" : "";
    for (size_t i = 0; i < c.contenders.size(); ++i)
      add_note(rows, c.contenders[i].name(), "under a heavy load: " + us(r.capped[i]) + clock);
  }
  const double threshold = std::max(policy.min_gain, policy.noise_factor * r.noise);
  const size_t w = power_state_winner(c.boost_us, r.capped, threshold);
  if (w == 0) return r;
  // It must hold across the segment: the same M tiles up to its top, and at its lowest M no
  // slower than the choice under the load (the choice may run a fitted tile, narrower there).
  const Tactic& winner = c.contenders[w];
  if (reach_of(c.problem, winner.name(), backends) < c.m_max) return r;
  if (c.low_m < c.problem.m) {
    Problem low = c.problem;
    low.m = c.low_m;
    MeasureOptions lm = m;
    lm.load_lead_us = o.lead_us;
    lm.load_between_us = o.load_per_cycle * cycle_us({c.boost_us[0], c.boost_us[w], c.boost_us[0]});
    const std::vector<Timing> lt = measure_or_none(timer, low, {c.contenders[0], winner, c.contenders[0]}, lm);
    if (!all_timed(lt, 3)) return r;
    const double choice_low = std::min(lt[0].median_us, lt[2].median_us);
    if (!(lt[1].median_us <= choice_low * (1 + policy.min_gain))) return r;
    r.low_note = "; at M=" + std::to_string(c.low_m) + ", the segment's lowest, " + us(lt[1].median_us) +
                 " against " + us(choice_low);
  }
  const Tactic reference = Tactic::parse(c.reference);
  const double diff = reference == winner ? 0.0 : output_diff(timer, c.problem, reference, winner);
  if (diff <= policy.output_tolerance) r.winner = w;  // NaN fails this comparison too
  return r;
}

}  // namespace

std::vector<PowerStateContest> power_state_contests(const Decision& d, size_t index, const PowerStateOptions& o,
                                                    const std::set<std::string>& adaptive) {
  std::vector<PowerStateContest> out;
  if (!d.measured) return out;
  for (size_t j = 0; j < d.segments.size(); ++j) {
    const ChoiceSegment& s = d.segments[j];
    if (s.sampled_m <= 0 || adaptive.count(s.tactic)) continue;
    // The edge's segment was decided with the edge's candidates; a lower one at its sample.
    const bool at_edge = s.sampled_m == d.problem.m;
    std::map<std::string, double> times = full_round_times(at_edge ? d.candidates : s.candidates);
    if (at_edge && s.tactic == d.choice && d.choice_us > 0) times.emplace(d.choice, d.choice_us);
    if (!at_edge && s.us > 0) times.emplace(s.tactic, s.us);
    const auto choice = times.find(s.tactic);
    if (choice == times.end() || !(choice->second < o.max_call_us)) continue;
    std::vector<std::pair<double, std::string>> others;
    for (const auto& [name, t] : times)
      if (name != s.tactic && !adaptive.count(name) && t <= choice->second * (1 + o.margin))
        others.emplace_back(t, name);
    if (others.empty()) continue;
    std::stable_sort(others.begin(), others.end());
    if (others.size() > size_t(o.max_others)) others.resize(size_t(o.max_others));
    PowerStateContest c;
    c.decision = index;
    c.segment = j;
    c.problem = d.problem;
    c.problem.m = s.sampled_m;
    c.low_m = (j == 0 ? bucket_lower(d.problem.m) : d.segments[j - 1].m_max) + 1;
    c.m_max = s.m_max;
    c.reference = s.default_tactic.empty() ? d.default_tactic : s.default_tactic;
    c.contenders.push_back(Tactic::parse(s.tactic));
    c.boost_us.push_back(choice->second);
    for (const auto& [t, name] : others) {
      c.contenders.push_back(Tactic::parse(name));
      c.boost_us.push_back(t);
    }
    out.push_back(std::move(c));
  }
  return out;
}

size_t power_state_winner(const std::vector<double>& boost_us, const std::vector<double>& capped_us, double threshold) {
  const size_t n = std::min(boost_us.size(), capped_us.size());
  double best_boost = INFINITY, best_capped = INFINITY;
  for (size_t i = 0; i < n; ++i)
    if (boost_us[i] > 0 && capped_us[i] > 0) {
      best_boost = std::min(best_boost, boost_us[i]);
      best_capped = std::min(best_capped, capped_us[i]);
    }
  if (n == 0 || !(boost_us[0] > 0 && capped_us[0] > 0)) return 0;
  const auto worse_regret = [&](size_t i) {
    if (!(boost_us[i] > 0 && capped_us[i] > 0)) return double(INFINITY);
    return std::max(boost_us[i] / best_boost, capped_us[i] / best_capped);
  };
  size_t best = 0;
  for (size_t i = 1; i < n; ++i)
    if (worse_regret(i) < worse_regret(best)) best = i;
  if (best != 0 && capped_us[best] < capped_us[0] * (1.0 - threshold)) return best;
  return 0;
}

int check_power_states(std::vector<Decision*>& decisions, const std::vector<Backend*>& backends, Timer& timer,
                       const PolicyOptions& policy, const PowerStateOptions& o,
                       const std::function<double()>& clock_ms) {
  std::set<std::string> adaptive;
  for (Backend* b : backends) {
    try {
      if (const std::optional<Tactic> t = b->adaptive_default()) adaptive.insert(t->name());
    } catch (const std::exception&) {
    }
  }
  std::vector<PowerStateContest> contests;
  for (size_t i = 0; i < decisions.size(); ++i)
    for (PowerStateContest& c : power_state_contests(*decisions[i], i, o, adaptive)) contests.push_back(std::move(c));
  const double start = clock_ms();
  int changed = 0;
  std::vector<char> touched(decisions.size(), 0);
  for (const PowerStateContest& c : contests) {
    const double began = clock_ms();
    if (o.budget_ms > 0 && began - start >= o.budget_ms) break;
    Decision& d = *decisions[c.decision];
    const double lead_us = &c == &contests.front() ? o.first_lead_us : o.lead_us;
    const ContestResult r = time_contest(c, d, lead_us, timer, backends, policy, o);
    d.phase_ms["power_states"] += clock_ms() - began;
    if (r.winner == 0) continue;
    const size_t w = r.winner;
    ChoiceSegment& s = d.segments[c.segment];
    const std::string from = s.tactic, to = c.contenders[w].name();
    s.tactic = to;
    s.us = c.boost_us[w];
    if (c.segment + 1 == d.segments.size()) {
      d.choice = to;
      d.choice_us = c.boost_us[w];
    }
    d.reason += std::string("; ") + kUnderLoad + std::to_string(c.problem.m) + " (the power-capped state), " + to +
                " ran " + us(r.capped[w]) + " against " + us(r.capped[0]) + " for " + from + " (noise " +
                percent(r.noise) + ", " + us(c.boost_us[w]) + " against " + us(c.boost_us[0]) + " unloaded" +
                r.low_note + "): it takes M<=" + std::to_string(s.m_max);
    touched[c.decision] = 1;
    ++changed;
  }
  for (size_t i = 0; i < decisions.size(); ++i)
    if (touched[i]) decisions[i]->segments = merged(std::move(decisions[i]->segments));
  return changed;
}

}  // namespace fp8gemm::tuning
