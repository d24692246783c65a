// The tuned cache: entries keyed by TuneKey holding canonical tactic names, in memory
// (thread-safe) and on disk (JSON with validators, atomic replace, merge under a lock; the file
// system side is file_io.h).
#pragma once

#include <atomic>

#include <cstddef>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <string>
#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/device.h"
#include "fp8gemm/tune.h"
#include "tune/keys/tune_key.h"

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
  bool operator==(const CacheEntry& o) const {
    return key == o.key && tactic == o.tactic && us == o.us && default_tactic == o.default_tactic &&
           default_us == o.default_us && segments == o.segments;
  }
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
  // One entry offered by another process (import_entries): added when the key is new, kept out
  // when the cache holds another entry for it unless `replace`, under one lock.
  enum class Offer { kAdded, kReplaced, kUnchanged, kKeptLocal };
  Offer offer(const CacheEntry& e, bool replace);
  // Removes the entries whose key string is one of `keys`; returns how many there were.
  size_t erase(const std::vector<std::string>& keys);
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

// A cache file is read whole into memory: anything larger is not one (docs/tuning.md "Cache file").
constexpr size_t kMaxCacheFileBytes = size_t(64) << 20;
// How long a save waits for another writer's lock before it gives up with an error.
constexpr double kCacheLockTimeoutS = 10;

// What a cache file holds. ok: a cache for this setup, `entries` its well-formed ones (`dropped`
// others, the first reason in `dropped_why`). missing: nothing (no file, or an empty one) that a
// save could lose. Otherwise `problem`, a phrase starting with "it" ("it is a FIFO (named pipe),
// not a regular file"), says what is there; a save refuses to write over it.
struct CacheFile {
  bool ok = false;
  bool missing = false;
  std::string problem;
  std::vector<CacheEntry> entries;
  size_t dropped = 0;
  std::string dropped_why;
  bool other_setup = false;  // an fp8gemm cache of another format version or setup (validators)
};

// The JSON text of a cache file (no I/O). Never throws; every number is range-checked and
// reported as written when it is out of range.
CacheFile parse_cache_text(const std::string& text, const Validators& expected);

// The text write_cache_file writes for `entries` (in key order) under `validators`: the format
// export_entries hands to another process.
std::string cache_text(const Validators& validators, const std::vector<CacheEntry>& entries);

// Reads `path` (following symlinks) without blocking: only a regular file of at most
// kMaxCacheFileBytes is opened. Never throws; dropped entries are reported in one warning per
// path and process (warn_once).
CacheFile read_cache_file(const std::string& path, const Validators& expected);

// Writes `entries` merged with the file's well-formed entries (ours win on the same key) under an
// exclusive lock (file_io.h CacheLock, waited for at most lock_timeout_s), through a temp file
// in the same directory, rename(2) and a directory fsync: readers see the old or the new file,
// concurrent writers leave one file holding every entry. Writes only where read_cache_file finds
// ok or missing, through a symlink to its target (keeping the target's mode); creates the
// directory when it is default_cache_dir(). Throws Error(kIo) naming the path and what is there
// otherwise, or when it cannot write.
void write_cache_file(const std::string& path, const Validators& validators, const std::vector<CacheEntry>& entries,
                      double lock_timeout_s = kCacheLockTimeoutS);

// What write_cache_file would refuse or fail on before writing ("" when none): the path, what is
// at it, its directory (missing, not writable). Without the lock, so a race can still differ.
// With no validators (the device is not known yet) a cache of any setup passes.
std::string cache_save_problem(const std::string& path, const Validators* validators);

// Entries between processes (tune.h export_entries / import_entries, cache_entries.cpp), in the
// cache file's format. export_cache_text: the entries of `keys` (key strings) that `cache` holds,
// or every entry when `keys` is null. import_cache_text: throws Error(kInvalidArgument) naming
// the reason when `text` is not a cache text for `here` (another GPU, driver, library version);
// else offers each well-formed entry whose tactics run here (usable_here) to `cache`, whole.
std::string export_cache_text(const TuneCache& cache, const Validators& validators,
                              const std::vector<std::string>* keys);
ImportReport import_cache_text(TuneCache& cache, const std::string& text, const Validators& here,
                               const std::vector<Backend*>& backends, bool replace_local);
// Why `e` cannot be used with `backends` ("" when it can): its tactic, or a segment's at its
// largest M, does not parse, names a backend not built, or fails can_implement.
std::string unusable_here(const CacheEntry& e, const std::vector<Backend*>& backends);
// The entries of a file read from `path` that can be used with `backends` (unusable_here), each
// other one dropped with a warning; a file that is not usable at all is warned about once (not
// when it is missing) and gives none.
std::vector<CacheEntry> usable_entries(const CacheFile& file, const std::string& path,
                                       const std::vector<Backend*>& backends);

// "<gpu-name-slug>-sm<cc>-<sms>sm-fp8gemm<version>.json": conventional_cache_path's file name.
std::string cache_file_name(const DeviceInfo& device);

// A named cache file that does not exist is most likely a typo, and `auto` would run untuned
// without a word: one warning per path, "tuning cache <path> (<named_by>) does not exist: ...".
void report_if_missing(const std::string& path, const std::string& named_by);

// The file a new Context's selector loads and lazy tuning saves to: default_cache_path(device),
// reported when $FP8GEMM_CACHE names it and it is missing (the conventional one missing is a
// first run, and silent).
std::string startup_cache_path(const DeviceInfo& device);

}  // namespace fp8gemm::tuning
