#include "tools/common/confirm.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <stdexcept>
#include <string>

#include "fp8gemm/measure.h"

namespace fp8gemm {

double AutoConfirm::regret() const { return ran ? auto_us / std::min(auto_us, best_us) : NAN; }

double AutoConfirm::untuned_ratio() const {
  std::vector<double> timed;
  for (double r : untuned_ratios)
    if (r > 0) timed.push_back(r);
  if (timed.empty()) return NAN;
  std::sort(timed.begin(), timed.end());
  return timed[timed.size() / 2];
}

double AutoConfirm::first_round_regret() const {
  const double r = round_ratios.empty() ? NAN : round_ratios.front();
  return r > 0 ? std::max(1.0, r) : NAN;
}

const BenchEntry* fastest_other_than_auto(const BenchPoint& point) {
  const BenchEntry* auto_entry = find_entry(point, "auto");
  if (!auto_entry) return nullptr;
  const BenchEntry* best = nullptr;
  for (const BenchEntry& e : point.entries) {
    if (e.label == "auto" || e.label.rfind("named_", 0) == 0 || !e.ok || !(e.us > 0)) continue;
    if (e.tactic == auto_entry->tactic) continue;
    if (!best || e.us < best->us) best = &e;
  }
  return best;
}

namespace {

// " 1.012": one round's auto / best in print_confirm_line.
std::string format_ratio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, " %.3f", r);
  return buf;
}

// The timing of the tactic named `name` among the point's, or nullptr.
const Timing* timing_named(const BenchPoint& point, const std::string& name) {
  for (const Timing& t : point.timings)
    if (t.tactic.name() == name) return &t;
  return nullptr;
}

}  // namespace

std::vector<std::string> confirm_opponents(const BenchPoint& point) {
  const BenchEntry* auto_entry = find_entry(point, "auto");
  const BenchEntry* best = fastest_other_than_auto(point);
  if (!auto_entry || !best) return {};
  std::vector<std::string> out{best->tactic};
  // Untuned auto, where auto ran another (a tuned) choice: the tuned-never-slower count is judged
  // on these rounds.
  const BenchEntry* untuned = find_entry(point, kUntunedAutoLabel);
  if (untuned && untuned->ok && untuned->us > 0 && untuned->tactic != auto_entry->tactic &&
      untuned->tactic != best->tactic && timing_named(point, untuned->tactic))
    out.push_back(untuned->tactic);
  for (const std::string& name : point.contenders) {
    if (int(out.size()) >= kConfirmOpponents) break;
    if (name == auto_entry->tactic || std::find(out.begin(), out.end(), name) != out.end()) continue;
    const Timing* t = timing_named(point, name);
    if (t && t->ok && t->median_us > 0 && t->median_us <= best->us * (1 + kConfirmOpponentMargin)) out.push_back(name);
  }
  return out;
}

AutoConfirm confirm_auto(Timer& timer, const BenchPoint& point, bool best_first) {
  AutoConfirm c;
  c.round_ratios = {NAN};
  c.untuned_ratios = {NAN};
  const BenchEntry* auto_entry = find_entry(point, "auto");
  const Timing* auto_timing = auto_entry && auto_entry->ok ? timing_named(point, auto_entry->tactic) : nullptr;
  if (!auto_timing) {
    c.note = "auto was not timed";
    return c;
  }
  c.opponents = confirm_opponents(point);
  if (c.opponents.empty()) {
    c.note = "no other tactic was timed";
    return c;
  }
  c.best_tactic = c.opponents.front();
  std::vector<Tactic> others;
  for (const std::string& name : c.opponents) {
    const Timing* t = timing_named(point, name);
    if (!t) {
      c.note = "the best's tactic has no timing";
      return c;
    }
    others.push_back(t->tactic);
  }
  const MeasureOptions round = long_replays(auto_entry->us, kConfirmReplays);
  c.calls_per_replay = round.calls_per_replay;
  c.replays = round.replays;
  // Positions in the round: auto's two, then each opponent's two.
  const size_t k = others.size();
  std::vector<Tactic> list(2 * k + 2, auto_timing->tactic);
  std::pair<size_t, size_t> at_auto = best_first ? std::pair{k, k + 1} : std::pair{size_t(0), 2 * k + 1};
  std::vector<std::pair<size_t, size_t>> at(k);
  for (size_t j = 0; j < k; ++j) {
    at[j] = best_first ? std::pair{j, 2 * k + 1 - j} : std::pair{1 + j, 2 * k - j};
    list[at[j].first] = list[at[j].second] = others[j];
  }
  std::vector<Timing> t;
  try {
    t = timer.measure(point.problem, list, round);
  } catch (const std::exception& e) {
    c.note = std::string("the round failed: ") + e.what();
    return c;
  }
  if (t.size() != list.size() ||
      !std::all_of(t.begin(), t.end(), [](const Timing& x) { return x.ok && x.median_us > 0; })) {
    c.note = "a tactic failed in the round";
    return c;
  }
  auto mean_of = [&](std::pair<size_t, size_t> p) { return 0.5 * (t[p.first].median_us + t[p.second].median_us); };
  c.ran = true;
  c.auto_us = mean_of(at_auto);
  c.noise = paired_noise(t[at_auto.first], t[at_auto.second]);
  const BenchEntry* untuned = find_entry(point, kUntunedAutoLabel);
  for (size_t j = 0; j < k; ++j) {
    c.noise = std::max(c.noise, paired_noise(t[at[j].first], t[at[j].second]));
    if (j == 0 || mean_of(at[j]) < c.best_us) {
      c.best_us = mean_of(at[j]);
      c.best_tactic = c.opponents[j];
    }
    if (untuned && c.opponents[j] == untuned->tactic) c.untuned_us = mean_of(at[j]);
  }
  c.round_ratios = {c.auto_us / c.best_us};
  c.untuned_ratios = {c.untuned_us > 0 ? c.auto_us / c.untuned_us : NAN};
  return c;
}

AutoConfirm median_round(const std::vector<AutoConfirm>& rounds) {
  if (rounds.empty()) throw std::invalid_argument("median_round: no rounds");
  // Each round holds its own auto / best (confirm_auto; NaN where it failed).
  std::vector<double> ratios;
  std::vector<size_t> ran;
  for (const AutoConfirm& r : rounds) {
    ratios.push_back(r.ran && !r.round_ratios.empty() ? r.round_ratios.front() : NAN);
    if (ratios.back() > 0) ran.push_back(ratios.size() - 1);
  }
  AutoConfirm verdict = rounds.front();
  if (!ran.empty()) {
    std::sort(ran.begin(), ran.end(), [&](size_t x, size_t y) { return ratios[x] < ratios[y]; });
    verdict = rounds[ran[ran.size() / 2]];
    if (ran.size() < rounds.size())
      verdict.note = std::to_string(rounds.size() - ran.size()) + " of " + std::to_string(rounds.size()) +
                     " rounds failed";
  }
  verdict.round_ratios = ratios;
  verdict.untuned_ratios.clear();
  for (const AutoConfirm& r : rounds)
    verdict.untuned_ratios.push_back(r.ran && !r.untuned_ratios.empty() ? r.untuned_ratios.front() : NAN);
  return verdict;
}

std::vector<size_t> confirm_order(const std::vector<BenchPoint>& points) {
  auto weight = [&](size_t i) {
    const BenchEntry* a = find_entry(points[i], "auto");
    return a && a->ok && a->us > 0 ? a->us : INFINITY;
  };
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return weight(x) < weight(y); });
  return order;
}

void print_confirm_line(std::ostream& os, const BenchPoint& point) {
  const AutoConfirm& c = point.confirm;
  char line[512];
  if (c.ran) {
    std::snprintf(line, sizeof line,
                  "%s M=%lld: auto against the best, timed again (%d replays of %d calls): %.3f (%.2f us against "
                  "%.2f us, noise %.1f%%; best %s",
                  point.shape.c_str(), (long long)point.problem.m, c.replays, c.calls_per_replay, c.regret(),
                  c.auto_us, c.best_us, 100.0 * c.noise, c.best_tactic.c_str());
    os << line;
    if (c.opponents.size() > 1) os << ", the fastest of " << c.opponents.size() << " timed";
    os << ")";
    if (c.round_ratios.size() > 1) {
      os << "; median of " << c.round_ratios.size() << " rounds, auto / best";
      for (double r : c.round_ratios) os << (r > 0 ? format_ratio(r) : std::string(" failed"));
    }
    if (!c.note.empty()) os << " (" << c.note << ")";
    os << "\n";
  } else if (!c.note.empty()) {
    os << point.shape << " M=" << point.problem.m << ": auto against the best, not timed again: " << c.note << "\n";
  }
}

double first_pass_regret(const BenchPoint& point) {
  const BenchEntry* auto_entry = find_entry(point, "auto");
  if (!auto_entry || !auto_entry->ok || !(auto_entry->us > 0)) return NAN;
  const BenchEntry* other = fastest_other_than_auto(point);
  return other ? auto_entry->us / std::min(auto_entry->us, other->us) : 1.0;
}

void print_confirm_summary(std::ostream& os, const std::vector<BenchPoint>& points) {
  struct Sum {
    int n = 0, within = 0;
    double log_sum = 0, max = 0;
    void add(double r) {
      ++n;
      within += r <= 1.03;
      log_sum += std::log(r);
      max = std::max(max, r);
    }
  } first, again, first_round;
  int timed_again = 0;
  bool several_rounds = false;
  for (const BenchPoint& p : points) {
    const double r = first_pass_regret(p);
    if (!(r > 0)) continue;
    first.add(r);
    again.add(p.confirm.ran ? p.confirm.regret() : r);
    const double r1 = p.confirm.first_round_regret();
    first_round.add(r1 > 0 ? r1 : r);
    timed_again += p.confirm.ran;
    several_rounds = several_rounds || (p.confirm.ran && p.confirm.round_ratios.size() > 1);
  }
  if (!first.n) return;
  char line[256];
  auto row = [&](const char* what, const Sum& s) {
    std::snprintf(line, sizeof line, "  %-34s geomean %.3f, max %.3f, %d of %d within 1.03\n", what,
                  std::exp(s.log_sum / s.n), s.max, s.within, s.n);
    os << line;
  };
  os << "auto / the fastest other tactic (regret):\n";
  row("first pass", first);
  if (timed_again) {
    char what[64];
    std::snprintf(what, sizeof what, "timed again head to head (%d points)", timed_again);
    if (several_rounds) {
      row("timed again, the first round alone", first_round);
      std::snprintf(what, sizeof what, "timed again, median round (%d points)", timed_again);
    }
    row(what, again);
  }
}

}  // namespace fp8gemm
