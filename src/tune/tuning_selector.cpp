#include "tune/tuning_selector.h"

#include "fp8gemm/check.h"
#include "tune/cache/warnings.h"
#include "tune/tuning_run.h"

namespace fp8gemm::tuning {

namespace {

bool belongs(const Tactic& t, const std::string& backend) { return backend == "auto" || t.backend == backend; }

}  // namespace

// Holds tune_mutex_; when it lets go, serves a timer release that the last scope's end asked
// for while the mutex was held.
class TuningSelector::TuneLock {
 public:
  explicit TuneLock(TuningSelector& s) : s_(s), lock_(s.tune_mutex_) {}
  ~TuneLock() {
    lock_.unlock();
    s_.release_if_asked();
  }
  TuneLock(const TuneLock&) = delete;
  TuneLock& operator=(const TuneLock&) = delete;

 private:
  TuningSelector& s_;
  std::unique_lock<std::mutex> lock_;
};

bool stream_is_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t err = cudaStreamIsCapturing(stream, &status);
  if (err != cudaSuccess) {
    // e.g. cudaErrorStreamCaptureImplicit (legacy stream while another captures): not safe.
    cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

TuningSelector::TuningSelector(SelectorConfig config) : config_(std::move(config)) {
  if (!config_.is_capturing) config_.is_capturing = stream_is_capturing;
}

std::optional<Tactic> TuningSelector::tuned_gemm_of_layer(const Problem& p) const {
  if (!p.is_layer()) return std::nullopt;
  std::optional<Tactic> t = cache_.find_tactic(key_of(gemm_of(p)), p.m);
  if (t && !can_run(config_.backends, p, *t)) return std::nullopt;
  return t;
}

Tactic TuningSelector::default_for(const Problem& p) {
  if (auto t = tuned_gemm_of_layer(p)) return *t;
  return default_choice(config_.backends, chain(), p);
}

std::string TuningSelector::explain(const Problem& p) {
  const TuneKey key = key_of(p);
  if (auto t = cache_.find_tactic(key, p.m)) return "tuned cache: " + key.to_string();
  if (tuned_gemm_of_layer(p)) return "tuned cache, the layer's GEMM (the layer is not tuned): " + key_of(gemm_of(p)).to_string();
  std::string why;
  chain_choice(config_.backends, chain(), p, &why);
  return why;
}

std::optional<Tactic> TuningSelector::select(const Problem& p, const std::string& backend, cudaStream_t stream) {
  const TuneKey key = key_of(p);  // the same bucket function as tuning (fault 2)
  if (auto t = cache_.find_tactic(key, p.m)) {
    if (belongs(*t, backend)) return t;
    return std::nullopt;  // a named backend other than the tuned choice's: its own default
  }
  // Profiling inside a capture would record the tuner's work into the caller's graph (or break
  // the capture): captured calls use the table / floor, and a later uncaptured call tunes.
  if (backend == "auto" && lazy_active() && config_.make_timer && !config_.is_capturing(stream))
    if (auto t = tune_lazily(p)) return t;
  // A layer without an entry of its own runs what its GEMM was tuned to, else the default chain.
  if (auto t = tuned_gemm_of_layer(p))
    if (belongs(*t, backend)) return t;
  if (auto t = chain_choice(config_.backends, chain(), p))
    if (belongs(*t, backend)) return t;
  return std::nullopt;  // the Context's floor (cuBLASLt's heuristic), or the named backend's default
}

std::optional<Tactic> TuningSelector::tune_lazily(const Problem& p) {
  const TuneKey key = key_of(p);
  const std::string name = key.to_string();
  if (unmeasured_.find(name)) return std::nullopt;  // tried once in this process: the table or floor
  TuneLock lock(*this);
  if (auto t = cache_.find_tactic(key, p.m)) return t;  // another thread tuned it meanwhile
  if (unmeasured_.find(name)) return std::nullopt;
  std::string failure;
  try {
    const Decision d = tune_locked({p}, own_timer(), config_.lazy_options).front();
    if (d.measured) {
      if (!config_.cache_path.empty()) {
        try {
          save(config_.cache_path);
        } catch (const std::exception& e) {
          warn_once("save:" + config_.cache_path, std::string("cannot save the tuning cache: ") + e.what());
        }
      }
      return Tactic::parse(d.choice_for(p.m));
    }
    const auto u = unmeasured_.find(name);  // tune_locked records a failure
    if (!u || !u->failed) {
      unmeasured_.record(name, {d.reason, false});  // nothing to measure: no need to list it again
      return std::nullopt;
    }
    failure = u->reason;
  } catch (const std::exception& e) {
    failure = e.what();
    unmeasured_.record(name, {failure, true});
  }
  timer_.reset();  // after an out-of-memory its buffers are better left to the program
  warn_once("lazy:" + name, "tuning " + name + " failed; the default answers it in this process from now on: " + failure);
  return std::nullopt;
}

std::map<std::string, std::string> TuningSelector::failed_keys() const { return unmeasured_.failed(); }

Timer& TuningSelector::own_timer() {
  if (!timer_) {
    FP8GEMM_REQUIRE(config_.make_timer, kUnsupported, "this tuning selector has no timer to measure with");
    timer_ = config_.make_timer();
  }
  return *timer_;
}

bool TuningSelector::release_timer() {
  std::lock_guard lock(tune_mutex_);
  const bool had = timer_ != nullptr;
  timer_.reset();
  return had;
}

bool TuningSelector::has_timer() const {
  std::lock_guard lock(tune_mutex_);
  return timer_ != nullptr;
}

void TuningSelector::exit_scope() {
  if (scopes_.fetch_sub(1) != 1) return;
  // The last scope: its end must not wait for a measurement another thread is making.
  release_asked_.store(true);
  release_if_asked();
}

void TuningSelector::release_if_asked() {
  if (!release_asked_.load()) return;
  std::unique_lock lock(tune_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // its holder calls this again when it lets go (TuneLock)
  if (release_asked_.exchange(false) && !lazy_active()) timer_.reset();
}

std::vector<Decision> TuningSelector::tune(const std::vector<Problem>& problems, Timer& timer,
                                           const TuneOptions& options) {
  TuneLock lock(*this);
  return tune_locked(problems, timer, options);
}

std::vector<Decision> TuningSelector::tune(const std::vector<Problem>& problems, const TuneOptions& options) {
  TuneLock lock(*this);
  struct ReleaseUnlessLazy {  // however this returns: the buffers go unless lazy tuning reuses them
    TuningSelector& s;
    ~ReleaseUnlessLazy() {
      if (!s.lazy_active()) s.timer_.reset();
    }
  } release{*this};
  return tune_locked(problems, own_timer(), options);
}

std::vector<Decision> TuningSelector::tune_locked(const std::vector<Problem>& problems, Timer& timer,
                                                  const TuneOptions& options) {
  const RunInputs in{config_.backends, cache_, unmeasured_, [this](const Problem& q) { return default_for(q); },
                     config_.clock_ms};
  return TuningRun(in, timer, options).run(problems);
}

size_t TuningSelector::load(const std::string& path) {
  const std::vector<CacheEntry> entries = usable_entries(read_cache_file(path, Validators::of(config_.device)), path, config_.backends);
  cache_.replace(entries);
  return entries.size();
}

size_t TuningSelector::merge(const std::string& path) {
  const std::vector<CacheEntry> entries = usable_entries(read_cache_file(path, Validators::of(config_.device)), path, config_.backends);
  cache_.merge(entries, /*overwrite=*/false);
  return entries.size();
}

void TuningSelector::save(const std::string& path) {
  write_cache_file(path, Validators::of(config_.device), cache_.entries());
}

}  // namespace fp8gemm::tuning
