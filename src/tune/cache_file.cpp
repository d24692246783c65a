// The cache file format (docs/tuning.md "Cache file"):
// {"format": "fp8gemm-tune-cache", "validators": {...}, "entries": [{"key": ..., "op": ...,
//   "a": "e4m3", "b": "e4m3", "out": "bf16", "batch": 1, "m_bucket": 16, "n": ..., "k": ...,
//   "alignment": 16, "tactic": "cublaslt:...", "us": ..., "default": ..., "default_us": ...,
//   "segments": [{"m_max": 299, "tactic": ...}, ..., {"m_max": 384, "tactic": <tactic>}]}]}
// ("segments" only where parts of the bucket have choices of their own).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/cuda_check.h"
#include "tune/cache.h"

namespace fp8gemm::tuning {

namespace {

using nlohmann::json;
constexpr const char* kFormatName = "fp8gemm-tune-cache";

json to_json(const Validators& v) {
  return {{"format_version", v.format_version}, {"library_version", v.library_version},
          {"gpu_name", v.gpu_name},             {"sm_count", v.sm_count},
          {"compute_capability", v.compute_capability}, {"driver_version", v.driver_version},
          {"cuda_runtime_version", v.runtime_version},  {"cublaslt_version", v.cublaslt_version}};
}

Validators validators_from(const json& j) {
  Validators v;
  v.format_version = j.at("format_version").get<int>();
  v.library_version = j.at("library_version").get<std::string>();
  v.gpu_name = j.at("gpu_name").get<std::string>();
  v.sm_count = j.at("sm_count").get<int>();
  v.compute_capability = j.at("compute_capability").get<int>();
  v.driver_version = j.at("driver_version").get<int>();
  v.runtime_version = j.at("cuda_runtime_version").get<int>();
  v.cublaslt_version = j.at("cublaslt_version").get<size_t>();
  return v;
}

json to_json(const CacheEntry& e) {
  const TuneKey& k = e.key;
  json j = {{"key", k.to_string()}, {"op", k.op}, {"a", to_string(k.a_type)}, {"b", to_string(k.b_type)},
          {"out", to_string(k.out_type)}, {"batch", k.batch}, {"m_bucket", k.m_bucket}, {"n", k.n},
          {"k", k.k}, {"alignment", k.alignment}, {"scale_alignment", k.scale_alignment}, {"tactic", e.tactic}, {"us", e.us},
          {"default", e.default_tactic}, {"default_us", e.default_us}};
  if (!e.segments.empty()) {
    j["segments"] = json::array();
    for (const CacheSegment& s : e.segments) j["segments"].push_back({{"m_max", s.m_max}, {"tactic", s.tactic}});
  }
  return j;
}

CacheEntry entry_from(const json& j) {
  CacheEntry e;
  e.key.op = j.at("op").get<std::string>();
  e.key.a_type = parse_dtype(j.at("a").get<std::string>());
  e.key.b_type = parse_dtype(j.at("b").get<std::string>());
  e.key.out_type = parse_dtype(j.at("out").get<std::string>());
  e.key.batch = j.at("batch").get<int64_t>();
  e.key.m_bucket = j.at("m_bucket").get<int64_t>();
  e.key.n = j.at("n").get<int64_t>();
  e.key.k = j.at("k").get<int64_t>();
  e.key.alignment = j.at("alignment").get<int>();
  e.key.scale_alignment = j.value("scale_alignment", 16);
  e.tactic = j.at("tactic").get<std::string>();
  e.us = j.value("us", 0.0);
  e.default_tactic = j.value("default", std::string());
  e.default_us = j.value("default_us", 0.0);
  // The stored key string must agree with the fields; a hand-edited mismatch is corrupt.
  if (j.at("key").get<std::string>() != e.key.to_string())
    throw std::runtime_error("entry key '" + j.at("key").get<std::string>() + "' does not match its fields");
  if (m_bucket(e.key.m_bucket) != e.key.m_bucket)
    throw std::runtime_error("entry key '" + e.key.to_string() + "': m_bucket is not a bucket edge");
  if (j.contains("segments")) {
    // Ascending inside the bucket, the last one ending at its edge with the entry's tactic.
    int64_t previous = 0;
    for (const json& s : j.at("segments")) {
      CacheSegment seg{s.at("m_max").get<int64_t>(), s.at("tactic").get<std::string>()};
      if (seg.m_max <= previous || m_bucket(seg.m_max) != e.key.m_bucket)
        throw std::runtime_error("entry key '" + e.key.to_string() + "': segment m_max " +
                                 std::to_string(seg.m_max) + " is not ascending inside the bucket");
      previous = seg.m_max;
      e.segments.push_back(std::move(seg));
    }
    if (e.segments.empty() || e.segments.back().m_max != e.key.m_bucket || e.segments.back().tactic != e.tactic)
      throw std::runtime_error("entry key '" + e.key.to_string() +
                               "': the last segment must end at the bucket edge with the entry's tactic");
  }
  return e;
}

// Holds an exclusive flock on "<path>.lock" (a separate file: rename replaces the cache's inode,
// so a lock on the cache file itself would not exclude a writer that opened the new one).
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    FP8GEMM_REQUIRE(fd_ >= 0, kIo, "cannot open lock file ", path, ".lock: ", std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd_);
      FP8GEMM_FAIL(kIo, "cannot lock ", path, ".lock: ", std::strerror(err));
    }
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

void write_all(int fd, const std::string& data, const std::string& tmp) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    FP8GEMM_REQUIRE(n > 0, kIo, "cannot write ", tmp, ": ", std::strerror(errno));
    done += size_t(n);
  }
}

}  // namespace

CacheFile read_cache_file(const std::string& path, const Validators& expected) {
  CacheFile f;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    f.missing = true;
    f.problem = "no such file";
    return f;
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    const json j = json::parse(text.str());  // throws on a truncated or corrupt file
    if (!j.is_object() || j.value("format", std::string()) != kFormatName) {
      f.problem = "not an fp8gemm tuning cache (no \"format\": \"" + std::string(kFormatName) + "\")";
      return f;
    }
    const std::string why = expected.mismatch(validators_from(j.at("validators")));
    if (!why.empty()) {
      f.problem = "made for another setup: " + why;
      return f;
    }
    for (const json& e : j.at("entries")) f.entries.push_back(entry_from(e));
    f.ok = true;
  } catch (const std::exception& e) {
    f.entries.clear();
    f.problem = std::string("corrupt or truncated: ") + e.what();
  }
  return f;
}

void write_cache_file(const std::string& path, const Validators& validators,
                      const std::vector<CacheEntry>& entries) {
  FileLock lock(path);
  // Merge with what other writers saved meanwhile; ours win on the same key (newer).
  TuneCache merged;
  const CacheFile on_disk = read_cache_file(path, validators);
  if (on_disk.ok) merged.replace(on_disk.entries);
  merged.merge(entries, /*overwrite=*/true);

  json j = {{"format", kFormatName}, {"validators", to_json(validators)}, {"entries", json::array()}};
  for (const CacheEntry& e : merged.entries()) j["entries"].push_back(to_json(e));
  const std::string text = j.dump(1) + "\n";

  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  FP8GEMM_REQUIRE(fd >= 0, kIo, "cannot create a temp file next to ", path, ": ", std::strerror(errno));
  try {
    write_all(fd, text, tmp);
    FP8GEMM_REQUIRE(::fsync(fd) == 0, kIo, "cannot flush ", tmp, ": ", std::strerror(errno));
    ::fchmod(fd, 0644);
    FP8GEMM_REQUIRE(::close(fd) == 0, kIo, "cannot close ", tmp, ": ", std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    FP8GEMM_FAIL(kIo, "cannot replace ", path, ": ", std::strerror(err));
  }
}

}  // namespace fp8gemm::tuning
