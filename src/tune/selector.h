// The Selector behind `auto`: tuned cache, then the per-arch default table, then nothing (the
// Context's floor, runtime/floor.h). Tunes lazily only when asked (FP8GEMM_TUNE=1 or an
// AutotuneScope), never while the call's stream is being captured. Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "fp8gemm/selector.h"
#include "fp8gemm/tune.h"
#include "tune/cache.h"
#include "tune/policy.h"
#include "tune/tuner.h"

namespace fp8gemm::tuning {

struct SelectorConfig {
  std::vector<Backend*> backends;
  DeviceInfo device;
  std::vector<DefaultRule> rules;   // default_rules(device.compute_capability())
  TimerFactory make_timer;          // for lazy tuning; empty: lazy tuning never happens
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

  // What `auto` runs for `p` without a tuned entry: table entry or floor.
  Tactic default_for(const Problem& p);

  // Tunes each problem's key with `timer` (keys already cached are reported from the cache
  // unless options.retune), stores the measured choices, and returns one Decision per problem.
  std::vector<Decision> tune(const std::vector<Problem>& problems, Timer& timer, const TuneOptions& options);

  // Cache files (see tune.h). Entries whose tactic no longer parses or passes can_implement
  // are dropped with a warning; an unusable file is warned about once and ignored.
  size_t load(const std::string& path);
  size_t merge(const std::string& path);
  void save(const std::string& path);
  TuneCache& cache() { return cache_; }
  const SelectorConfig& config() const { return config_; }

  // AutotuneScope support: while the count is > 0, "auto" calls tune missing keys.
  void enter_scope() { scopes_.fetch_add(1); }
  void exit_scope() { scopes_.fetch_sub(1); }
  bool lazy_active() const { return config_.lazy || scopes_.load() > 0; }

 private:
  std::vector<Decision> tune_locked(const std::vector<Problem>& problems, Timer& timer, const TuneOptions& options);
  std::vector<CacheEntry> valid_entries(const CacheFile& file, const std::string& path);
  std::optional<Tactic> tune_lazily(const Problem& p);

  SelectorConfig config_;
  TuneCache cache_;
  std::atomic<int> scopes_{0};
  // One measurement at a time, explicit or lazy: concurrent timings would disturb each other,
  // and the lazy timer owns GPU buffers.
  std::mutex tune_mutex_;
  std::unique_ptr<Timer> lazy_timer_;
  std::set<std::string> failed_keys_;  // lazy tuning that threw: not retried in this process
};

}  // namespace fp8gemm::tuning
