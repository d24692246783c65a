#include "tune/tuning_run.h"

#include <algorithm>
#include <numeric>

#include "core/steady_clock.h"
#include "runtime/floor.h"

namespace fp8gemm::tuning {

namespace {

// A decision's choices (segments, edge last first) and its fastest finalists at the edge.
std::vector<std::string> best_of(const Decision& d) {
  std::vector<std::string> out;
  auto add = [&](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (auto it = d.segments.rbegin(); it != d.segments.rend(); ++it) add(it->tactic);
  std::vector<const CandidateReport*> finalists;
  for (const CandidateReport& c : d.candidates)
    if (c.status == "finalist") finalists.push_back(&c);
  std::stable_sort(finalists.begin(), finalists.end(),
                   [](const CandidateReport* x, const CandidateReport* y) { return x->time_us < y->time_us; });
  for (size_t i = 0; i < finalists.size() && i < 4; ++i) add(finalists[i]->tactic);
  return out;
}

// The cache entry of a measured decision under `key`.
CacheEntry entry_of(const TuneKey& key, const Decision& d) {
  return {key, d.choice, d.choice_us, d.default_tactic, d.default_us, cache_segments(d.segments)};
}

// Passes a Timer through and keeps what the first exception from it said: decide() keeps the
// default when measuring throws, and the selector tells that failure apart from a key with
// nothing to measure.
class FailureWatch : public Timer {
 public:
  explicit FailureWatch(Timer& timer) : timer_(timer) {}

  std::vector<Timing> measure(const Problem& p, const std::vector<Tactic>& candidates,
                              const MeasureOptions& options) override {
    try {
      return timer_.measure(p, candidates, options);
    } catch (const std::exception& e) {
      note(e);
      throw;
    }
  }
  std::vector<double> compare_outputs(const Problem& p, const Tactic& reference,
                                      const std::vector<Tactic>& candidates) override {
    try {
      return timer_.compare_outputs(p, reference, candidates);
    } catch (const std::exception& e) {
      note(e);
      throw;
    }
  }
  std::map<std::string, double> spent_ms() const override { return timer_.spent_ms(); }

  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }

 private:
  void note(const std::exception& e) {
    if (failed_) return;
    failed_ = true;
    error_ = e.what();
  }
  Timer& timer_;
  bool failed_ = false;
  std::string error_;
};

}  // namespace

TuningRun::TuningRun(const RunInputs& in, Timer& timer, const TuneOptions& options)
    : in_(in), timer_(timer), options_(options) {
  clock_ms_ = in.clock_ms ? in.clock_ms : std::function<double()>(steady_ms);
  policy_ = policy_options(options);
  policy_.clock_ms = clock_ms_;
  policy_.default_at = in.default_for;
}

std::vector<Decision> TuningRun::run(const std::vector<Problem>& problems) {
  start_ms_ = clock_ms_();
  // Lightest keys first, by estimated call time (a shape's buckets stay in M order, so
  // neighbour_best_ still follows them): a light key timed right after a heavy one would run
  // while the SM clock comes back from the power cap (docs/tuning.md "Light after heavy").
  std::vector<double> estimate_us(problems.size());
  for (size_t i = 0; i < problems.size(); ++i) estimate_us[i] = estimate_call_us(key_of(problems[i]).representative());
  std::vector<size_t> order(problems.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return estimate_us[a] < estimate_us[b]; });
  std::vector<Decision> out(problems.size());
  size_t done = 0;
  for (const size_t i : order) {
    const TuneKey key = key_of(problems[i]);
    const Decision d = decision_for(key, key.representative());
    by_key_.emplace(key.to_string(), d);
    out[i] = d;
    if (options_.progress) options_.progress(++done, problems.size(), d);
  }
  return out;
}

Decision TuningRun::decision_for(const TuneKey& key, const Problem& rep) {
  if (auto it = by_key_.find(key.to_string()); it != by_key_.end()) return it->second;
  if (auto e = in_.cache.find(key); e && !options_.retune) {
    Decision d;
    d.problem = rep;
    d.key = key.to_string();
    d.default_tactic = e->default_tactic;
    d.choice = e->tactic;
    d.choice_us = e->us;
    d.default_us = e->default_us;
    for (const CacheSegment& s : e->segments) d.segments.push_back({s.m_max, s.tactic, "", 0, 0, {}, 0});
    d.reason = "already in the cache (use retune to measure again)";
    return d;
  }
  if (auto u = in_.unmeasured.find(key.to_string()); u && u->failed && !options_.retune)
    return kept_default(key, rep, "kept the default: measuring this key failed earlier in this process (" +
                                      u->reason + "); use retune to measure again");
  if (options_.run_budget_ms > 0 && clock_ms_() - start_ms_ >= options_.run_budget_ms)
    return kept_default(key, rep, "kept the default: the run's time budget was spent before this key");
  return measured(key, rep);
}

Decision TuningRun::kept_default(const TuneKey& key, const Problem& rep, const std::string& reason) {
  Decision d;
  d.problem = rep;
  d.key = key.to_string();
  d.default_tactic = d.choice = in_.default_for(rep).name();
  d.floor_tactic = floor_choice(in_.backends, rep).name();
  d.reason = reason;
  return d;
}

Decision TuningRun::measured(const TuneKey& key, const Problem& rep) {
  const std::vector<Backend*>& backends = in_.backends;
  const Tactic def = in_.default_for(rep);
  TuneKey shape = key;
  shape.m_bucket = 0;
  policy_.preferred = neighbour_best_[shape.to_string()];
  FailureWatch watch(timer_);
  const Decision d = decide(rep, backends, def, floor_choice(backends, rep), watch, policy_);
  if (d.measured) {
    in_.cache.put(entry_of(key, d));
    neighbour_best_[shape.to_string()] = best_of(d);
  }
  if (!d.measured && watch.failed())
    in_.unmeasured.record(key.to_string(), {watch.error(), true});
  else
    in_.unmeasured.forget(key.to_string());  // measured now, or nothing to measure
  return d;
}

}  // namespace fp8gemm::tuning
