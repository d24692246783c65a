// The Selector behind `auto`: tuned cache, then the per-arch default chain (the exact table, the
// selector rules: defaults/default_chain.h DefaultChain), then nothing (the Context's floor, runtime/floor.h).
// Tunes lazily only when asked (FP8GEMM_TUNE=1 or an AutotuneScope), never while the call's
// stream is being captured. Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fp8gemm/selector.h"
#include "fp8gemm/tune.h"
#include "tune/cache/tune_cache.h"
#include "tune/policy/decide.h"
#include "tune/defaults/default_chain.h"
#include "tune/unmeasured_keys.h"

namespace fp8gemm::tuning {

struct SelectorConfig {
  std::vector<Backend*> backends;
  DeviceInfo device;
  std::vector<ExactRow> exact_table;    // decision_tables(device.compute_capability()).exact
  std::vector<BoxRule> selector_rules;  // decision_tables(...).selector
  // The selector's own timer, for lazy tuning and tune(problems, options); empty: lazy tuning
  // never happens.
  TimerFactory make_timer;
  // Whether `stream` is being captured (cudaStreamIsCapturing; a failed query counts as yes).
  std::function<bool(cudaStream_t)> is_capturing;
  bool lazy = false;                // FP8GEMM_TUNE=1
  std::string cache_path;           // FP8GEMM_CACHE: lazy tuning saves each new entry here
  TuneOptions lazy_options;
  std::function<double()> clock_ms; // for budgets (tests); empty: steady_clock
};

bool stream_is_capturing(cudaStream_t stream);

class TuningSelector : public Selector {
 public:
  explicit TuningSelector(SelectorConfig config);

  std::optional<Tactic> select(const Problem& p, const std::string& backend, cudaStream_t stream) override;
  // The cache's generation; volatile while lazy tuning is on (a call may tune its key).
  uint64_t generation() const override { return lazy_active() ? kVolatile : cache_.generation(); }

  // What `auto` runs for `p` without a tuned entry: for a layer its GEMM's tuned choice; else the
  // default chain's answer, else the floor.
  Tactic default_for(const Problem& p);
  // Where `auto`'s answer for `p` comes from, in a sentence: the tuned cache, or the step of the
  // default chain that decided (which table rule or selector rule, and why). Never throws.
  std::string explain(const Problem& p);

  // Tunes each problem's key with `timer` (keys already cached, and keys whose tuning failed in
  // this process, are reported without measuring unless options.retune), stores the measured
  // choices, and returns one Decision per problem.
  std::vector<Decision> tune(const std::vector<Problem>& problems, Timer& timer, const TuneOptions& options);
  // The same with the selector's own timer (made on first use), which is released when this
  // returns unless lazy tuning is active (an AutotuneScope or FP8GEMM_TUNE=1) and may reuse it.
  std::vector<Decision> tune(const std::vector<Problem>& problems, const TuneOptions& options);

  // Keys whose measurement failed in this process (the timer threw, or could not be made), with
  // the reason: "auto" answers them from the default and tune() reports them unmeasured, until a
  // tune with retune measures them again.
  std::map<std::string, std::string> failed_keys() const;

  // Cache files (see tune.h). Entries whose tactic no longer parses or passes can_implement
  // are dropped with a warning; an unusable file is warned about once and ignored.
  size_t load(const std::string& path);
  size_t merge(const std::string& path);
  void save(const std::string& path);
  TuneCache& cache() { return cache_; }
  const SelectorConfig& config() const { return config_; }

  // AutotuneScope support: while the count is > 0, "auto" calls tune missing keys. The last
  // scope to end releases the timer (unless FP8GEMM_TUNE=1 keeps lazy tuning on), at once or,
  // when a measurement is in progress, as soon as it ends.
  void enter_scope() { scopes_.fetch_add(1); }
  void exit_scope();
  bool lazy_active() const { return config_.lazy || scopes_.load() > 0; }

  // Destroys the selector's timer and with it its GPU buffers (weight copies, activations,
  // outputs, its stream and that stream's workspace); the next tuning makes a new one. Waits
  // for a measurement in progress. Returns whether there was a timer.
  bool release_timer();
  bool has_timer() const;

 private:
  // A layer problem's GEMM's tuned tactic at p.m, where it runs p; nullopt for a GEMM problem.
  std::optional<Tactic> tuned_gemm_of_layer(const Problem& p) const;
  DefaultChain chain() const { return {&config_.exact_table, &config_.selector_rules, config_.device.sm_count}; }
  std::vector<Decision> tune_locked(const std::vector<Problem>& problems, Timer& timer, const TuneOptions& options);
  std::optional<Tactic> tune_lazily(const Problem& p);
  class TuneLock;      // holds tune_mutex_ (tuning_selector.cpp)
  Timer& own_timer();  // under tune_mutex_
  // Releases the timer if a scope end asked for it and lazy tuning is no longer active; called
  // by whoever holds tune_mutex_ when it lets go (see exit_scope).
  void release_if_asked();

  SelectorConfig config_;
  TuneCache cache_;
  std::atomic<int> scopes_{0};
  // One measurement at a time, explicit or lazy: concurrent timings would disturb each other,
  // and the timer owns GPU buffers.
  mutable std::mutex tune_mutex_;
  std::unique_ptr<Timer> timer_;
  std::atomic<bool> release_asked_{false};  // by the last scope's end, while tune_mutex_ was held
  UnmeasuredKeys unmeasured_;  // written under tune_mutex_ too
};

}  // namespace fp8gemm::tuning
