#include "tune/policy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "measure/graph_timer.h"
#include "tune/bucket.h"
#include "tune/tuner.h"

namespace fp8gemm::tuning {

namespace {

double steady_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

std::string percent(double x) {
  std::ostringstream os;
  os.precision(3);
  os << x * 100 << "%";
  return os.str();
}

std::string us(double x) {
  std::ostringstream os;
  os.precision(4);
  os << x << " us";
  return os.str();
}

bool allowed(const std::string& backend, const std::vector<std::string>& only) {
  return only.empty() || std::find(only.begin(), only.end(), backend) != only.end();
}

// Calls per graph replay the GPU timer will use with its default sizing; only for budgeting.
int expected_calls(double call_us) { return calls_per_replay_for(call_us, GraphTimerOptions{}); }

}  // namespace

PolicyOptions policy_options(const TuneOptions& o) {
  PolicyOptions p;
  p.key_budget_ms = o.key_budget_ms;
  p.min_gain = o.min_gain;
  p.noise_factor = o.noise_factor;
  p.output_tolerance = o.output_tolerance;
  p.backends = o.backends;
  p.bucket_samples = o.bucket_samples;
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
        continue;
      }
      // Listing may throw anything (FlashInfer fault 4: cuDNN with two libcudart copies);
      // the backend is then excluded for this problem and tuning carries on.
      for (Tactic& t : b->tactics(p))
        if (seen.insert(t.name()).second) c.tactics.push_back(std::move(t));
    } catch (const std::exception& e) {
      c.excluded_backends.push_back((name.empty() ? "?" : name) + ": listing tactics failed: " + e.what());
    } catch (...) {
      c.excluded_backends.push_back((name.empty() ? "?" : name) + ": listing tactics failed (unknown exception)");
    }
  }
  return c;
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
  // slower (> prune_ratio x best). It may take ~40% of the budget.
  const int short_calls = int(std::clamp(std::ceil(200.0 / t), 1.0, 20.0));
  plan.rounds.short_round = MeasureOptions{short_calls, 1, 1};
  const double short_cost = 2.0 * short_calls * t;
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

std::vector<Tactic> trim_candidates(const std::vector<Tactic>& tactics, size_t keep) {
  if (tactics.size() <= keep) return tactics;
  std::vector<std::string> order;  // backends in first-seen order
  std::map<std::string, std::vector<const Tactic*>> by_backend;
  for (size_t i = 1; i < tactics.size(); ++i) {
    auto& list = by_backend[tactics[i].backend];
    if (list.empty()) order.push_back(tactics[i].backend);
    list.push_back(&tactics[i]);
  }
  std::vector<Tactic> out{tactics[0]};
  for (size_t rank = 0; out.size() < keep; ++rank)
    for (const std::string& b : order)
      if (rank < by_backend[b].size() && out.size() < keep) out.push_back(*by_backend[b][rank]);
  return out;
}

std::vector<int64_t> bucket_sample_ms(int64_t m, int count) {
  const int64_t edge = m_bucket(m);
  const auto& edges = m_bucket_edges();
  int64_t lower = 0;  // the previous edge: the bucket is (lower, edge]
  for (int64_t e : edges)
    if (e < edge) lower = e;
  if (edge > edges.back()) lower = edge / 2;
  std::vector<int64_t> out;
  // The lowest M first (the farthest from the edge), then evenly spaced points up to the edge.
  for (int i = 0; i < count; ++i) {
    const int64_t s = lower + 1 + (edge - lower - 1) * i / count;
    if (s < edge && (out.empty() || out.back() < s)) out.push_back(s);
  }
  return out;
}

namespace {

// Times over the bucket: the edge (index 0) and each sampled M below it, per tactic.
struct BucketTimes {
  std::vector<int64_t> ms;                              // the sampled M values (edge excluded)
  std::map<std::string, std::vector<double>> times;     // tactic -> [edge, ms...] (INFINITY: failed)
  std::vector<Timing> newcomers;                        // at the edge, scaled to the main round
  std::map<std::string, std::string> newcomer_note;     // why each newcomer was added
};

// Measures `tactics` at `q` together with the default (first) and returns each one's median,
// scaled so that the default's time equals `default_us` (the reference of an earlier round at
// the same M): separate rounds then compare as if they were one, despite clock drift.
std::vector<double> measure_scaled(Timer& timer, const Problem& q, const Tactic& def,
                                   const std::vector<Tactic>& tactics, double default_us) {
  std::vector<Tactic> list{def};
  list.insert(list.end(), tactics.begin(), tactics.end());
  std::vector<double> out(tactics.size(), INFINITY);
  std::vector<Timing> r;
  try {
    r = timer.measure(q, list, MeasureOptions{0, 5, 1});
  } catch (const std::exception&) {
    return out;
  }
  const double scale = r.size() == list.size() && r[0].ok && r[0].median_us > 0 && std::isfinite(default_us)
                           ? default_us / r[0].median_us
                           : 1.0;
  for (size_t i = 0; i < tactics.size() && i + 1 < r.size(); ++i)
    if (r[i + 1].ok) out[i] = r[i + 1].median_us * scale;
  return out;
}

// The finalists (best first, with the default) timed at the sampled M values of the bucket.
// Backends may list other tactics at those M (cuBLASLt's heuristic answers per M): the ones
// not listed at the edge are timed there too, and those that beat every sampled tactic at
// their M ("newcomers", at most two per M) are then timed at the edge and the other M values,
// so that a tactic that only the lower M's list holds can still be chosen for the bucket.
BucketTimes time_over_bucket(const Problem& problem, const std::vector<Backend*>& backends, const Tactic& def,
                             const RoundResult& rr, const std::vector<Tactic>& listed_at_edge, Timer& timer,
                             const PolicyOptions& o) {
  BucketTimes bt;
  std::vector<const Timing*> sampled{&rr.reference};
  std::vector<const Timing*> by_time;
  for (const Timing& t : rr.finalists)
    if (t.ok) by_time.push_back(&t);
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const Timing* x, const Timing* y) { return x->median_us < y->median_us; });
  for (const Timing* t : by_time)
    if (int(sampled.size()) <= o.sampled_finalists) sampled.push_back(t);
  for (const Timing* t : sampled) bt.times[t->tactic.name()].push_back(t->median_us);
  std::vector<int64_t> ms = bucket_sample_ms(problem.m, o.bucket_samples);
  if (sampled.size() < 2 || !rr.reference.ok) return bt;

  std::set<std::string> known;
  for (const Tactic& t : listed_at_edge) known.insert(t.name());
  std::vector<Tactic> promoted;          // newcomers, in the order found
  std::vector<std::map<std::string, double>> promoted_at;  // per sampled M: newcomer -> time
  for (int64_t m : ms) {
    Problem q = problem;
    q.m = m;
    std::vector<Tactic> tactics;
    for (const Timing* t : sampled) tactics.push_back(t->tactic);
    const size_t n_sampled = tactics.size();
    if (o.sample_newcomers > 0) {
      std::vector<Tactic> fresh;
      for (const Tactic& t : gather_candidates(q, backends, def, o.backends).tactics)
        if (!known.count(t.name()) && can_run(backends, problem, t)) fresh.push_back(t);  // runs at the edge
      fresh.insert(fresh.begin(), def);  // trim_candidates keeps the first entry
      fresh = trim_candidates(fresh, size_t(o.sample_newcomers) + 1);
      tactics.insert(tactics.end(), fresh.begin() + 1, fresh.end());
    }
    std::vector<Timing> r;
    try {
      r = timer.measure(q, tactics, MeasureOptions{0, 5, 1});
    } catch (const std::exception&) {
      r.clear();
    }
    auto time_of = [&](size_t i) { return i < r.size() && r[i].ok ? r[i].median_us : INFINITY; };
    double best_sampled = INFINITY;
    for (size_t i = 0; i < n_sampled; ++i) {
      bt.times[sampled[i]->tactic.name()].push_back(time_of(i));
      best_sampled = std::min(best_sampled, time_of(i));
    }
    std::vector<std::pair<double, size_t>> better;  // newcomers faster than every sampled tactic
    for (size_t i = n_sampled; i < tactics.size(); ++i) {
      known.insert(tactics[i].name());
      if (time_of(i) < best_sampled) better.push_back({time_of(i), i});
    }
    std::stable_sort(better.begin(), better.end());
    promoted_at.emplace_back();
    for (size_t j = 0; j < better.size() && j < 2; ++j) {
      const Tactic& t = tactics[better[j].second];
      promoted.push_back(t);
      promoted_at.back()[t.name()] = better[j].first;
      bt.newcomer_note[t.name()] = "listed at M=" + std::to_string(m) + ", not at the edge";
    }
    bt.ms.push_back(m);
  }
  if (promoted.empty()) return bt;

  // The newcomers at the edge (scaled to the main round's default) and at every sampled M
  // where they were not timed yet (scaled to that M's default time).
  const std::vector<double> edge = measure_scaled(timer, problem, def, promoted, rr.reference.median_us);
  for (size_t i = 0; i < promoted.size(); ++i) {
    bt.times[promoted[i].name()] = {edge[i]};
    Timing t;
    t.tactic = promoted[i];
    t.ok = std::isfinite(edge[i]);
    t.median_us = edge[i];
    if (!t.ok) t.error = "failed at the bucket edge";
    bt.newcomers.push_back(t);
  }
  for (size_t s = 0; s < bt.ms.size(); ++s) {
    Problem q = problem;
    q.m = bt.ms[s];
    std::vector<Tactic> missing;
    for (const Tactic& t : promoted)
      if (!promoted_at[s].count(t.name())) missing.push_back(t);
    const std::vector<double> r = measure_scaled(timer, q, def, missing, bt.times[def.name()][s + 1]);
    for (size_t i = 0; i < missing.size(); ++i) promoted_at[s][missing[i].name()] = r[i];
    for (const Tactic& t : promoted) bt.times[t.name()].push_back(promoted_at[s].at(t.name()));
  }
  return bt;
}

// Each tactic's regret over the bucket: its time over the fastest tactic's at each M, averaged
// geometrically with the edge weighted as much as all sampled M together (the edge is the M
// that tuning and the suite use; the samples stand for the M values between edges). A mean,
// not the worst case: where no single tactic is near the best at every M of a bucket (cuBLASLt's
// tiles are cut to M), the worst case picked tactics that were 15-25% slow at the edge on the
// H200 to save a sampled M; the mean is what the geomean targets measure.
std::map<std::string, double> bucket_regrets(const BucketTimes& bt) {
  std::map<std::string, double> log_sum;
  const size_t n_ms = 1 + bt.ms.size();
  const double edge_weight = std::max<double>(1.0, double(bt.ms.size()));
  for (size_t s = 0; s < n_ms; ++s) {
    double best = INFINITY;
    for (auto& [name, v] : bt.times)
      if (s < v.size()) best = std::min(best, v[s]);
    const double w = s == 0 ? edge_weight : 1.0;
    for (auto& [name, v] : bt.times)
      log_sum[name] += w * (s < v.size() ? std::log(v[s] / best) : INFINITY);
  }
  std::map<std::string, double> regret;
  for (auto& [name, l] : log_sum) regret[name] = std::exp(l / (edge_weight + double(bt.ms.size())));
  return regret;
}

}  // namespace

Decision decide(const Problem& problem, const std::vector<Backend*>& backends,
                const Tactic& default_tactic, const Tactic& floor_tactic, Timer& timer,
                const PolicyOptions& o) {
  const auto clock = o.clock_ms ? o.clock_ms : std::function<double()>(steady_ms);
  const double start = clock();
  Decision d;
  d.problem = problem;
  d.key = key_of(problem).to_string();
  d.default_tactic = default_tactic.name();
  d.floor_tactic = floor_tactic.name();
  d.choice = d.default_tactic;
  auto finish = [&](std::string reason) {
    d.reason = std::move(reason);
    d.elapsed_ms = clock() - start;
    return d;
  };

  Candidates all = gather_candidates(problem, backends, default_tactic, o.backends);
  d.excluded_backends = all.excluded_backends;
  if (all.tactics.size() < 2) {
    d.candidates.push_back({d.default_tactic, "default", 0, -1, "not measured"});
    return finish("kept the default: no other tactic can run this problem");
  }

  const RoundPlan plan = plan_rounds(problem, all.tactics.size(), o);
  const std::vector<Tactic> measured = trim_candidates(all.tactics, plan.keep);
  std::set<std::string> kept;
  for (const Tactic& t : measured) kept.insert(t.name());

  RoundResult rr;
  try {
    rr = measure_in_rounds(timer, problem, measured, plan.rounds);
  } catch (const std::exception& e) {
    d.candidates.push_back({d.default_tactic, "default", 0, -1, "not measured"});
    return finish(std::string("kept the default: measuring failed: ") + e.what());
  }
  d.measured = true;
  d.noise = rr.noise;
  d.threshold = std::max(o.min_gain, o.noise_factor * rr.noise);
  d.default_us = rr.reference.median_us;
  d.candidates.push_back({d.default_tactic, "default", rr.reference.median_us, 0,
                          rr.reference.ok ? "" : rr.reference.error});
  for (const Timing& t : rr.pruned)
    d.candidates.push_back({t.tactic.name(), t.ok ? "pruned" : "failed", t.median_us, -1, t.error});
  for (const Tactic& t : all.tactics)
    if (!kept.count(t.name())) d.candidates.push_back({t.name(), "skipped", 0, -1, "over the key's time budget"});

  if (!rr.reference.ok)
    return finish("kept the default: it failed to run (" + rr.reference.error +
                  "), so no challenger's output can be checked against it");

  // Regret over the bucket: each candidate's time over the fastest time at the edge and at the
  // sampled M values below it (bucket_regrets). Without samples this orders exactly as the edge
  // times do, so the rule below is then the plain one.
  BucketTimes bt = time_over_bucket(problem, backends, default_tactic, rr, all.tactics, timer, o);
  d.sampled_ms = bt.ms;
  std::map<std::string, double> regret = bucket_regrets(bt);
  for (const Timing& t : rr.finalists)  // finalists not sampled: judged at the edge only
    if (t.ok && !regret.count(t.tactic.name())) regret[t.tactic.name()] = INFINITY;
  // Newcomers (listed only below the edge) compete with the edge's finalists.
  std::vector<Timing> contenders = rr.finalists;
  for (const Timing& t : bt.newcomers) contenders.push_back(t);
  const double default_regret = regret[d.default_tactic];

  // Challengers whose regret over the bucket beats the default's by more than the threshold, best first;
  // ties keep candidate order (stable sort), so a tie never depends on timing order.
  std::vector<const Timing*> faster;
  for (const Timing& t : contenders)
    if (t.ok && regret[t.tactic.name()] < default_regret * (1.0 - d.threshold)) faster.push_back(&t);
  std::stable_sort(faster.begin(), faster.end(), [&](const Timing* x, const Timing* y) {
    return regret[x->tactic.name()] < regret[y->tactic.name()];
  });

  std::map<std::string, double> diffs;
  if (!faster.empty()) {
    std::vector<Tactic> to_compare;
    for (const Timing* t : faster) to_compare.push_back(t->tactic);
    try {
      const std::vector<double> r = timer.compare_outputs(problem, default_tactic, to_compare);
      for (size_t i = 0; i < to_compare.size() && i < r.size(); ++i) diffs[to_compare[i].name()] = r[i];
    } catch (const std::exception& e) {
      for (const Tactic& t : to_compare) diffs[t.name()] = INFINITY;
    }
  }

  const Timing* winner = nullptr;
  for (const Timing* t : faster) {
    const double diff = diffs.count(t->tactic.name()) ? diffs[t->tactic.name()] : INFINITY;
    if (diff <= o.output_tolerance) {  // NaN fails this comparison too
      winner = t;
      break;
    }
  }
  for (const Timing& t : contenders) {
    auto it = diffs.find(t.tactic.name());
    const double diff = it == diffs.end() ? -1 : it->second;
    const bool mismatch = it != diffs.end() && !(diff <= o.output_tolerance);
    const bool newcomer = bt.newcomer_note.count(t.tactic.name()) > 0;
    d.candidates.push_back({t.tactic.name(), mismatch ? "mismatch" : "finalist", t.median_us, diff,
                            mismatch ? "output differs from the default's by " + std::to_string(diff) +
                                           " (tolerance " + std::to_string(o.output_tolerance) + ")"
                                     : newcomer ? bt.newcomer_note.at(t.tactic.name()) : ""});
  }

  const std::string rule = "max(" + percent(o.min_gain) + ", " + std::to_string(o.noise_factor).substr(0, 3) +
                           "x noise " + percent(rr.noise) + ") = " + percent(d.threshold);
  std::string over;
  for (int64_t m : d.sampled_ms) over += (over.empty() ? " (also timed at M=" : ",") + std::to_string(m);
  if (!over.empty()) over += ")";
  if (winner) {
    d.choice = winner->tactic.name();
    d.choice_us = winner->median_us;
    return finish(d.choice + " is " + percent(1.0 - winner->median_us / d.default_us) +
                  " faster than the default at the bucket edge (" + us(winner->median_us) + " vs " +
                  us(d.default_us) + "); its mean ratio to the best over the bucket" + over + " is " +
                  std::to_string(regret[d.choice]).substr(0, 5) + " against the default's " +
                  std::to_string(default_regret).substr(0, 5) + ", beyond " + rule +
                  ", and its output matches the default's");
  }
  d.choice_us = d.default_us;
  if (!faster.empty())
    return finish("kept the default: every challenger faster by more than " + rule +
                  " produced a different output");
  const Timing* best = nullptr;
  for (const Timing& t : contenders)
    if (t.ok && (!best || t.median_us < best->median_us)) best = &t;
  if (!best) return finish("kept the default: no challenger survived the short round");
  return finish("kept the default: the best challenger " + best->tactic.name() + " (" + us(best->median_us) +
                ") is not faster by more than " + rule);
}

}  // namespace fp8gemm::tuning
