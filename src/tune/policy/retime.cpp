#include "tune/policy/retime.h"

#include <algorithm>
#include <cmath>

#include "tune/policy/point_rule.h"
#include "tune/policy/decide.h"
#include "tune/policy/text.h"

namespace fp8gemm::tuning {

namespace {

// Longer replays than a round's (long_replays: >= 300 us each): at calls of a few microseconds a
// round's replays are short and their noise floor holds back challengers a few percent faster.
// Seven of them: three retimes of short calls (the edge and two samples) fit the quarter of the
// default key budget that retimes may take.
constexpr int kReplays = 7;

MeasureOptions retime_round(double call_us) { return long_replays(call_us, kReplays); }

}  // namespace

const Timing* held_back_by_noise(const Timing& reference, const std::vector<const Timing*>& challengers,
                                 double min_gain) {
  if (!reference.ok) return nullptr;
  const Timing* best = nullptr;
  for (const Timing* t : challengers)
    if (t->ok && t->median_us < reference.median_us * (1.0 - min_gain) && (!best || t->median_us < best->median_us))
      best = t;
  return best;
}

double retime_cost_us(double call_us) {
  const MeasureOptions r = retime_round(call_us);
  return 3.0 * double(r.replays + r.warmup_replays) * r.calls_per_replay * call_us;
}

Retime retime(const Problem& q, const Tactic& reference, const Tactic& challenger, double call_us, Timer& timer,
              const PolicyOptions& o) {
  Retime r;
  const MeasureOptions round = retime_round(call_us);
  std::vector<Timing> t;
  try {
    t = timer.measure(q, {reference, challenger, reference}, round);
  } catch (const std::exception&) {
    r.note = "timed again: the round failed";
    return r;
  }
  if (t.size() != 3 || !t[0].ok || !t[1].ok || !t[2].ok || !(t[0].median_us > 0)) {
    r.note = "timed again: a tactic failed";
    return r;
  }
  r.ran = true;
  // The faster of the default's two timings: the challenger must beat the default's best.
  r.reference_us = std::min(t[0].median_us, t[2].median_us);
  r.challenger_us = t[1].median_us;
  r.noise = paired_noise(t[0], t[2]);
  r.threshold = tuning_threshold(r.noise, o.min_gain, o.noise_factor);
  const std::string head = "timed again with the default, " + std::to_string(round.replays) + " replays of " +
                           std::to_string(round.calls_per_replay) + " calls: ";
  const std::string times = us(r.challenger_us) + " against " + us(r.reference_us) + ", " +
                            percent(1 - r.challenger_us / r.reference_us) + " faster; noise " + percent(r.noise);
  if (!(r.challenger_us < r.reference_us * (1.0 - r.threshold))) {
    r.note = head + times + ", not beyond " + percent(r.threshold);
    return r;
  }
  r.output_diff = output_diff(timer, q, reference, challenger);
  r.wins = r.output_diff <= o.output_tolerance;  // NaN fails this comparison too
  r.note = head + times + ", beyond " + percent(r.threshold) +
           (r.wins ? "; output matches: it wins" : "; its output differs from the default's");
  return r;
}

}  // namespace fp8gemm::tuning
