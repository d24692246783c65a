#include "tune/cache/tune_cache.h"

#include <set>
#include <sstream>

#include "fp8gemm/version.h"

namespace fp8gemm::tuning {

Validators Validators::of(const DeviceInfo& d) {
  Validators v;
  v.library_version = FP8GEMM_VERSION_STRING;
  v.gpu_name = d.name;
  v.sm_count = d.sm_count;
  v.compute_capability = d.compute_capability();
  v.driver_version = d.driver_version;
  v.runtime_version = d.runtime_version;
  v.cublaslt_version = d.cublaslt_version;
  return v;
}

std::string Validators::mismatch(const Validators& f) const {
  std::ostringstream os;
  auto check = [&](const char* what, const auto& mine, const auto& theirs) {
    if (os.tellp() == 0 && !(mine == theirs))
      os << what << " is " << theirs << " in the file but " << mine << " here";
  };
  check("format version", format_version, f.format_version);
  check("library version", library_version, f.library_version);
  check("GPU", gpu_name, f.gpu_name);
  check("SM count", sm_count, f.sm_count);
  check("compute capability", compute_capability, f.compute_capability);
  check("driver version", driver_version, f.driver_version);
  check("CUDA runtime version", runtime_version, f.runtime_version);
  check("cuBLASLt version", cublaslt_version, f.cublaslt_version);
  return os.str();
}

namespace {
std::optional<Tactic> parsed(const std::string& name) {
  try {
    return Tactic::parse(name);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}
}  // namespace

std::vector<CacheSegment> cache_segments(const std::vector<ChoiceSegment>& segments) {
  if (segments.size() < 2) return {};
  std::vector<CacheSegment> out;
  for (const ChoiceSegment& s : segments) out.push_back({s.m_max, s.tactic});
  return out;
}

TuneCache::Stored TuneCache::store(const CacheEntry& e) {
  Stored s{e, parsed(e.tactic), {}};
  for (const CacheSegment& seg : e.segments) s.segments.emplace_back(seg.m_max, parsed(seg.tactic));
  return s;
}

std::optional<CacheEntry> TuneCache::find(const TuneKey& key) const {
  std::shared_lock lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.entry;
}

std::optional<Tactic> TuneCache::find_tactic(const TuneKey& key, int64_t m) const {
  std::shared_lock lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  for (const auto& [m_max, tactic] : it->second.segments)
    if (m <= m_max) return tactic;
  return it->second.tactic;
}

void TuneCache::put(const CacheEntry& e) {
  Stored s = store(e);
  std::unique_lock lock(mutex_);
  entries_[e.key] = std::move(s);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

void TuneCache::merge(const std::vector<CacheEntry>& entries, bool overwrite) {
  std::unique_lock lock(mutex_);
  for (const CacheEntry& e : entries) {
    auto [it, inserted] = entries_.emplace(e.key, store(e));
    if (!inserted && overwrite) it->second = store(e);
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

void TuneCache::replace(const std::vector<CacheEntry>& entries) {
  std::unique_lock lock(mutex_);
  entries_.clear();
  for (const CacheEntry& e : entries) entries_[e.key] = store(e);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

TuneCache::Offer TuneCache::offer(const CacheEntry& e, bool replace) {
  std::unique_lock lock(mutex_);
  auto it = entries_.find(e.key);
  Offer what = Offer::kAdded;
  if (it != entries_.end()) {
    if (it->second.entry == e) return Offer::kUnchanged;
    if (!replace) return Offer::kKeptLocal;
    what = Offer::kReplaced;
  }
  entries_[e.key] = store(e);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return what;
}

size_t TuneCache::erase(const std::vector<std::string>& keys) {
  const std::set<std::string> names(keys.begin(), keys.end());
  std::unique_lock lock(mutex_);
  size_t erased = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (names.count(it->first.to_string())) {
      it = entries_.erase(it);
      ++erased;
    } else {
      ++it;
    }
  }
  if (erased) generation_.fetch_add(1, std::memory_order_acq_rel);
  return erased;
}

std::vector<CacheEntry> TuneCache::entries() const {
  std::shared_lock lock(mutex_);
  std::vector<CacheEntry> out;
  for (auto& [k, s] : entries_) out.push_back(s.entry);
  return out;
}

size_t TuneCache::size() const {
  std::shared_lock lock(mutex_);
  return entries_.size();
}

}  // namespace fp8gemm::tuning
