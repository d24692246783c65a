#include "tune/selector.h"

#include <algorithm>
#include <numeric>

#include "core/steady_clock.h"
#include "tune/warnings.h"

namespace fp8gemm::tuning {

namespace {

bool belongs(const Tactic& t, const std::string& backend) { return backend == "auto" || t.backend == backend; }

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

}  // namespace

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

Tactic TuningSelector::default_for(const Problem& p) {
  return default_choice(config_.backends, config_.rules, p);
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
  if (auto t = checked_table_choice(config_.backends, config_.rules, p))
    if (belongs(*t, backend)) return t;
  return std::nullopt;  // the Context's floor: cuBLASLt's heuristic
}

std::optional<Tactic> TuningSelector::tune_lazily(const Problem& p) {
  const TuneKey key = key_of(p);
  std::lock_guard lock(tune_mutex_);
  if (auto t = cache_.find_tactic(key, p.m)) return t;  // another thread tuned it meanwhile
  if (failed_keys_.count(key.to_string())) return std::nullopt;
  try {
    if (!lazy_timer_) lazy_timer_ = config_.make_timer();
    const Decision d = tune_locked({p}, *lazy_timer_, config_.lazy_options).front();
    if (!config_.cache_path.empty() && d.measured) {
      try {
        save(config_.cache_path);
      } catch (const std::exception& e) {
        warn_once("save:" + config_.cache_path, std::string("cannot save the tuning cache: ") + e.what());
      }
    }
    return Tactic::parse(d.choice_for(p.m));
  } catch (const std::exception& e) {
    failed_keys_.insert(key.to_string());
    warn_once("lazy:" + key.to_string(), "tuning " + key.to_string() + " failed, using the default: " + e.what());
    return std::nullopt;
  }
}

std::vector<Decision> TuningSelector::tune(const std::vector<Problem>& problems, Timer& timer,
                                           const TuneOptions& options) {
  std::lock_guard lock(tune_mutex_);
  return tune_locked(problems, timer, options);
}

std::vector<Decision> TuningSelector::tune_locked(const std::vector<Problem>& problems, Timer& timer,
                                                  const TuneOptions& options) {
  const auto clock = config_.clock_ms ? config_.clock_ms : std::function<double()>(steady_ms);
  PolicyOptions po = policy_options(options);
  po.clock_ms = clock;
  po.default_at = [this](const Problem& q) { return default_for(q); };
  const double start = clock();
  std::map<std::string, Decision> by_key;  // a key met twice in one run is tuned once
  // Per shape (the key without its M bucket): the last tuned bucket's choices and best
  // finalists, tried first at the next bucket of that shape (under a tight key budget, at large
  // M, only a few candidates are measured; neighbouring buckets mostly share their best).
  std::map<std::string, std::vector<std::string>> neighbour_best;
  // Lightest keys first, by estimated call time (a shape's buckets stay in M order, so
  // neighbour_best still follows them): a light key timed right after a heavy one would run
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
    const Problem rep = key.representative();
    Decision d;
    if (auto it = by_key.find(key.to_string()); it != by_key.end()) {
      d = it->second;
    } else if (auto e = cache_.find(key); e && !options.retune) {
      d.problem = rep;
      d.key = key.to_string();
      d.default_tactic = e->default_tactic;
      d.choice = e->tactic;
      d.choice_us = e->us;
      d.default_us = e->default_us;
      for (const CacheSegment& s : e->segments) d.segments.push_back({s.m_max, s.tactic, "", 0, 0, {}, 0});
      d.reason = "already in the cache (use retune to measure again)";
    } else if (options.run_budget_ms > 0 && clock() - start >= options.run_budget_ms) {
      d.problem = rep;
      d.key = key.to_string();
      d.default_tactic = d.choice = default_for(rep).name();
      d.floor_tactic = floor_choice(config_.backends, rep).name();
      d.reason = "kept the default: the run's time budget was spent before this key";
    } else {
      const Tactic def = default_for(rep);
      TuneKey shape = key;
      shape.m_bucket = 0;
      po.preferred = neighbour_best[shape.to_string()];
      d = decide(rep, config_.backends, def, floor_choice(config_.backends, rep), timer, po);
      if (d.measured) {
        cache_.put(entry_of(key, d));
        neighbour_best[shape.to_string()] = best_of(d);
      }
    }
    by_key.emplace(key.to_string(), d);
    out[i] = d;
    if (options.progress) options.progress(++done, problems.size(), d);
  }
  return out;
}

std::vector<CacheEntry> TuningSelector::valid_entries(const CacheFile& file, const std::string& path) {
  if (!file.ok) {
    if (!file.missing)
      warn_once("file:" + path, "ignoring tuning cache " + path + ": " + file.problem);
    return {};
  }
  std::vector<CacheEntry> kept;
  for (const CacheEntry& e : file.entries) {
    std::string why;
    // The edge's tactic and each segment's, at the largest M it covers.
    std::vector<CacheSegment> choices = e.segments;
    if (choices.empty()) choices.push_back({e.key.m_bucket, e.tactic});
    for (const CacheSegment& c : choices) {
      try {
        const Tactic t = Tactic::parse(c.tactic);
        Backend* b = find_backend(config_.backends, t.backend);
        Problem p = e.key.representative();
        p.m = c.m_max;
        if (!b) {
          why = "backend " + t.backend + " is not part of this build";
        } else if (const Verdict v = b->can_implement(p, t); !v.ok) {
          why = c.tactic + " at M=" + std::to_string(c.m_max) + ": " + v.reason;
        }
      } catch (const std::exception& ex) {
        why = ex.what();
      }
      if (!why.empty()) break;
    }
    if (why.empty())
      kept.push_back(e);
    else
      warn_once("entry:" + path + ":" + e.key.to_string(),
                "dropping tuned entry " + e.key.to_string() + " -> " + e.tactic + " from " + path + ": " + why);
  }
  return kept;
}

size_t TuningSelector::load(const std::string& path) {
  const std::vector<CacheEntry> entries = valid_entries(read_cache_file(path, Validators::of(config_.device)), path);
  cache_.replace(entries);
  return entries.size();
}

size_t TuningSelector::merge(const std::string& path) {
  const std::vector<CacheEntry> entries = valid_entries(read_cache_file(path, Validators::of(config_.device)), path);
  cache_.merge(entries, /*overwrite=*/false);
  return entries.size();
}

void TuningSelector::save(const std::string& path) {
  write_cache_file(path, Validators::of(config_.device), cache_.entries());
}

}  // namespace fp8gemm::tuning
