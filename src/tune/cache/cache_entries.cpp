// Which entries of a cache file this build can use, and tuned entries between processes (tune.h
// export_entries / import_entries) as the cache file's text (cache_file.cpp writes and parses it),
// so that entries from another rank are checked exactly as a file's are (validators, every field)
// and then as a loaded file's are (tactics that parse and run here).
#include <algorithm>
#include <set>

#include "fp8gemm/check.h"
#include "runtime/floor.h"
#include "tune/cache/tune_cache.h"
#include "tune/cache/warnings.h"

namespace fp8gemm::tuning {

std::string unusable_here(const CacheEntry& e, const std::vector<Backend*>& backends) {
  // The edge's tactic and each segment's, at the largest M it covers.
  std::vector<CacheSegment> choices = e.segments;
  if (choices.empty()) choices.push_back({e.key.m_bucket, e.tactic});
  for (const CacheSegment& c : choices) {
    try {
      const Tactic t = Tactic::parse(c.tactic);
      Backend* b = find_backend(backends, t.backend);
      if (!b) return "backend " + t.backend + " is not part of this build";
      Problem p = e.key.representative();
      p.m = c.m_max;
      if (const Verdict v = b->can_implement(p, t); !v.ok)
        return c.tactic + " at M=" + std::to_string(c.m_max) + ": " + v.reason;
    } catch (const std::exception& ex) {
      return ex.what();
    }
  }
  return "";
}

std::vector<CacheEntry> usable_entries(const CacheFile& file, const std::string& path,
                                       const std::vector<Backend*>& backends) {
  if (!file.ok) {
    if (!file.missing) warn_once("file:" + path, "ignoring tuning cache " + path + ": " + file.problem);
    return {};
  }
  std::vector<CacheEntry> kept;
  for (const CacheEntry& e : file.entries) {
    if (const std::string why = unusable_here(e, backends); why.empty())
      kept.push_back(e);
    else
      warn_once("entry:" + path + ":" + e.key.to_string(),
                "dropping tuned entry " + e.key.to_string() + " -> " + e.tactic + " from " + path + ": " + why);
  }
  return kept;
}

std::string export_cache_text(const TuneCache& cache, const Validators& validators,
                              const std::vector<std::string>* keys) {
  std::vector<CacheEntry> entries = cache.entries();  // in key order, so equal caches give equal bytes
  if (keys) {
    const std::set<std::string> wanted(keys->begin(), keys->end());
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [&](const CacheEntry& e) { return !wanted.count(e.key.to_string()); }),
                  entries.end());
  }
  return cache_text(validators, entries);
}

ImportReport import_cache_text(TuneCache& cache, const std::string& text, const Validators& here,
                               const std::vector<Backend*>& backends, bool replace_local) {
  FP8GEMM_REQUIRE(text.size() <= kMaxCacheFileBytes, kInvalidArgument, "import_entries: the bytes are ", text.size(),
                  " long, more than a tuning cache may be (", kMaxCacheFileBytes >> 20, " MiB)");
  const CacheFile parsed = parse_cache_text(text, here);
  FP8GEMM_REQUIRE(parsed.ok, kInvalidArgument, "import_entries refuses the bytes: ", parsed.problem);
  ImportReport report;
  if (parsed.dropped)
    report.refused.push_back(parsed.dropped == 1 ? "a malformed entry: " + parsed.dropped_why
                                                 : std::to_string(parsed.dropped) + " malformed entries, the first: " +
                                                       parsed.dropped_why);
  for (const CacheEntry& e : parsed.entries) {
    const std::string key = e.key.to_string();
    if (const std::string why = unusable_here(e, backends); !why.empty()) {
      report.refused.push_back(key + ": " + why);
      continue;
    }
    switch (cache.offer(e, replace_local)) {
      case TuneCache::Offer::kAdded: report.added.push_back(key); break;
      case TuneCache::Offer::kReplaced: report.replaced.push_back(key); break;
      case TuneCache::Offer::kUnchanged: report.unchanged.push_back(key); break;
      case TuneCache::Offer::kKeptLocal: report.kept_local.push_back(key); break;
    }
  }
  return report;
}

}  // namespace fp8gemm::tuning
