// The tuned cache: entries keyed by TuneKey holding canonical tactic names, in memory
// (thread-safe) and on disk (JSON with validators, atomic replace, merge under flock).
#pragma once

#include <atomic>

#include <cstddef>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <string>
#include <vector>

#include "fp8gemm/device.h"
#include "fp8gemm/tune.h"
#include "tune/bucket.h"

namespace fp8gemm::tuning {

// Part of a bucket with a choice of its own: (previous segment's m_max, m_max].
struct CacheSegment {
  int64_t m_max = 0;
  std::string tactic;
  bool operator==(const CacheSegment& o) const { return m_max == o.m_max && tactic == o.tactic; }
};

struct CacheEntry {
  TuneKey key;
  std::string tactic;          // canonical name of the choice at the bucket's edge
  double us = 0;               // its full-round median when tuned
  std::string default_tactic;  // what it was measured against
  double default_us = 0;
  // Empty: `tactic` for the whole bucket. Else ascending, the last ending at the edge with
  // `tactic` (Decision::segments, docs/tuning.md "Segments").
  std::vector<CacheSegment> segments;
};

// What a cache file must match to be trusted (PyTorch TunableOp's validators).
struct Validators {
  static constexpr int kFormatVersion = 1;
  int format_version = kFormatVersion;
  std::string library_version;
  std::string gpu_name;
  int sm_count = 0;
  int compute_capability = 0;
  int driver_version = 0;
  int runtime_version = 0;
  size_t cublaslt_version = 0;

  static Validators of(const DeviceInfo& device);  // library_version = FP8GEMM_VERSION_STRING
  // "" when `file` matches *this; else which validator differs, both values.
  std::string mismatch(const Validators& file) const;
};

class TuneCache {
 public:
  std::optional<CacheEntry> find(const TuneKey& key) const;
  // The hot path of dispatch: the entry's tactic for `m` (an M of the key's bucket: the first
  // segment whose m_max >= m), parsed once when it was stored; a shared lock, so concurrent
  // calls do not serialize.
  std::optional<Tactic> find_tactic(const TuneKey& key, int64_t m) const;
  void put(const CacheEntry& e);
  // Adds entries; on a key present in both, `overwrite` decides whose entry stays.
  void merge(const std::vector<CacheEntry>& entries, bool overwrite);
  void replace(const std::vector<CacheEntry>& entries);
  std::vector<CacheEntry> entries() const;
  size_t size() const;
  // Changes whenever an entry is added, replaced or removed (Selector::generation).
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  struct Stored {
    CacheEntry entry;
    std::optional<Tactic> tactic;  // nullopt when the name does not parse (never returned)
    std::vector<std::pair<int64_t, std::optional<Tactic>>> segments;  // (m_max, parsed tactic)
  };
  static Stored store(const CacheEntry& e);
  mutable std::shared_mutex mutex_;
  std::map<TuneKey, Stored> entries_;
  std::atomic<uint64_t> generation_{1};
};

// The CacheEntry::segments of a decision: empty when one tactic holds the whole bucket.
std::vector<CacheSegment> cache_segments(const std::vector<ChoiceSegment>& segments);

// Reading never throws: a file that is missing, unreadable, corrupt, truncated, of another
// format, library version or GPU yields ok = false and `problem` saying which.
struct CacheFile {
  bool ok = false;
  bool missing = false;  // no such file: not a problem worth a warning
  std::string problem;
  std::vector<CacheEntry> entries;
};
CacheFile read_cache_file(const std::string& path, const Validators& expected);

// Writes `entries` merged with the file's valid entries (ours win on the same key), holding an
// exclusive flock on "<path>.lock" while reading and replacing, through a temp file in the same
// directory and rename(2): readers see the old or the new file, never a partial one, and
// concurrent writers leave one file holding every entry. Throws Error(kIo) when it cannot write.
void write_cache_file(const std::string& path, const Validators& validators,
                      const std::vector<CacheEntry>& entries);

}  // namespace fp8gemm::tuning
