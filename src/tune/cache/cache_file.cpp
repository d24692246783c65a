// The cache file format (docs/tuning.md "Cache file"):
// {"format": "fp8gemm-tune-cache", "validators": {...}, "entries": [{"key": ..., "op": ...,
//   "a": "e4m3", "b": "e4m3", "out": "bf16", "batch": 1, "m_bucket": 16, "n": ..., "k": ...,
//   "alignment": 16, "tactic": "cublaslt:...", "us": ..., "default": ..., "default_us": ...,
//   "segments": [{"m_max": 299, "tactic": ...}, ..., {"m_max": 384, "tactic": <tactic>}]}]}
// ("segments" only where parts of the bucket have choices of their own). Reading checks every
// field's type and range; a malformed entry is dropped alone.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "fp8gemm/check.h"
#include "tune/cache/tune_cache.h"
#include "tune/cache/file_io.h"
#include "tune/cache/warnings.h"

namespace fp8gemm::tuning {

namespace {

using nlohmann::json;
// Written in this key order (format first), so a person, or a truncated file, shows what it is.
using ordered = nlohmann::ordered_json;
constexpr const char* kFormatName = "fp8gemm-tune-cache";
constexpr int64_t kInt32Max = 2147483647;

// A value for a message: a number or string as written (cut short if long), else its kind
// (dumping a deeply nested value would recurse without bound).
std::string shown(const json& v) {
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  const auto as_written = [](const json& x) { return x.dump(-1, ' ', false, json::error_handler_t::replace); };
  if (v.is_string() && v.get_ref<const std::string&>().size() > 60)
    return as_written(v.get_ref<const std::string&>().substr(0, 57)) + "...";
  return as_written(v);
}

const json& field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end()) throw std::runtime_error(std::string(name) + " is missing");
  return *it;
}

int64_t integer_field(const json& j, const char* name, int64_t lo, int64_t hi) {
  const json& v = field(j, name);
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u <= uint64_t(hi) && int64_t(u) >= lo) return int64_t(u);
  } else if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    if (x >= lo && x <= hi) return x;
  }
  throw std::runtime_error(std::string(name) + " is " + shown(v) + ", not an integer in [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "]");
}

std::string string_field(const json& j, const char* name) {
  const json& v = field(j, name);
  if (!v.is_string()) throw std::runtime_error(std::string(name) + " is " + shown(v) + ", not a string");
  return v.get<std::string>();
}

// An optional true/false (`absent` when missing).
bool bool_field(const json& j, const char* name, bool absent) {
  const auto it = j.find(name);
  if (it == j.end()) return absent;
  if (!it->is_boolean()) throw std::runtime_error(std::string(name) + " is " + shown(*it) + ", not true or false");
  return it->get<bool>();
}

// A time in microseconds (optional: 0 when absent).
double micros_field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end()) return 0;
  if (it->is_number() && std::isfinite(it->get<double>()) && it->get<double>() >= 0) return it->get<double>();
  throw std::runtime_error(std::string(name) + " is " + shown(*it) + ", not a number >= 0");
}

ordered to_json(const Validators& v) {
  return {{"format_version", v.format_version},     {"library_version", v.library_version},
          {"gpu_name", v.gpu_name},                 {"sm_count", v.sm_count},
          {"compute_capability", v.compute_capability}, {"driver_version", v.driver_version},
          {"cuda_runtime_version", v.runtime_version},  {"cublaslt_version", v.cublaslt_version}};
}

// After the format version was found to be ours.
Validators validators_from(const json& j) {
  Validators v;
  v.library_version = string_field(j, "library_version");
  v.gpu_name = string_field(j, "gpu_name");
  v.sm_count = int(integer_field(j, "sm_count", 0, kInt32Max));
  v.compute_capability = int(integer_field(j, "compute_capability", 0, kInt32Max));
  v.driver_version = int(integer_field(j, "driver_version", 0, kInt32Max));
  v.runtime_version = int(integer_field(j, "cuda_runtime_version", 0, kInt32Max));
  v.cublaslt_version = size_t(integer_field(j, "cublaslt_version", 0, INT64_MAX));
  return v;
}

ordered to_json(const CacheEntry& e) {
  const TuneKey& k = e.key;
  ordered j = {{"key", k.to_string()}, {"op", k.op}, {"a", to_string(k.a_type)}, {"b", to_string(k.b_type)},
               {"out", to_string(k.out_type)}, {"batch", k.batch}, {"m_bucket", k.m_bucket}, {"n", k.n},
               {"k", k.k}, {"alignment", k.alignment}, {"scale_alignment", k.scale_alignment},
               {"tactic", e.tactic}, {"us", e.us}, {"default", e.default_tactic}, {"default_us", e.default_us}};
  if (k.bias) j["bias"] = true;  // absent: no bias (files written before bias keys parse as they were)
  if (k.prologue != Problem::Prologue::kNone) {  // a layer key
    j["x"] = to_string(k.x_type);
    j["scale"] = k.prologue == Problem::Prologue::kQuantizeStatic ? "static" : "dynamic";
  }
  if (!e.segments.empty()) {
    j["segments"] = ordered::array();
    for (const CacheSegment& s : e.segments) j["segments"].push_back({{"m_max", s.m_max}, {"tactic", s.tactic}});
  }
  return j;
}

int alignment_field(const json& j, const char* name) {
  const int a = int(integer_field(j, name, 1, 16));
  if (alignment_class(a) != a)
    throw std::runtime_error(std::string(name) + " is " + std::to_string(a) + ", not 1, 2, 4, 8 or 16");
  return a;
}

CacheEntry entry_from(const json& j) {
  if (!j.is_object()) throw std::runtime_error("it is " + shown(j) + ", not an object");
  CacheEntry e;
  e.key.op = string_field(j, "op");
  e.key.a_type = parse_dtype(string_field(j, "a"));
  e.key.b_type = parse_dtype(string_field(j, "b"));
  e.key.out_type = parse_dtype(string_field(j, "out"));
  e.key.batch = integer_field(j, "batch", 0, kInt32Max);
  e.key.m_bucket = integer_field(j, "m_bucket", 1, kLargestProblemM);
  e.key.n = integer_field(j, "n", 1, kInt32Max);
  e.key.k = integer_field(j, "k", 1, kInt32Max);
  e.key.alignment = alignment_field(j, "alignment");
  e.key.scale_alignment = j.contains("scale_alignment") ? alignment_field(j, "scale_alignment") : 16;
  e.key.bias = bool_field(j, "bias", false);
  if (e.key.op == kLayerOp) {
    e.key.x_type = parse_dtype(string_field(j, "x"));
    if (e.key.x_type != DType::kBF16 && e.key.x_type != DType::kFP16)
      throw std::runtime_error("x is " + std::string(to_string(e.key.x_type)) + ", not bf16 or fp16");
    const std::string scale = string_field(j, "scale");
    if (scale != "static" && scale != "dynamic")
      throw std::runtime_error("scale is \"" + scale + "\", not static or dynamic");
    e.key.prologue = scale == "static" ? Problem::Prologue::kQuantizeStatic : Problem::Prologue::kQuantizeDynamic;
  } else if (e.key.op != kGemmOp) {
    throw std::runtime_error("op is \"" + e.key.op + "\", not " + kGemmOp + " or " + kLayerOp);
  }
  e.tactic = string_field(j, "tactic");
  e.us = micros_field(j, "us");
  e.default_tactic = j.contains("default") ? string_field(j, "default") : std::string();
  e.default_us = micros_field(j, "default_us");
  if (m_bucket(e.key.m_bucket) != e.key.m_bucket)
    throw std::runtime_error("m_bucket " + std::to_string(e.key.m_bucket) + " is not a bucket edge");
  // The stored key string must agree with the fields; a hand-edited mismatch is malformed.
  if (string_field(j, "key") != e.key.to_string())
    throw std::runtime_error("its key does not match its fields (" + e.key.to_string() + ")");
  if (j.contains("segments")) {
    // Ascending inside the bucket, the last one ending at its edge with the entry's tactic.
    const json& segments = j.at("segments");
    if (!segments.is_array()) throw std::runtime_error("segments is " + shown(segments) + ", not an array");
    int64_t previous = 0;
    for (const json& s : segments) {
      if (!s.is_object()) throw std::runtime_error("a segment is " + shown(s) + ", not an object");
      CacheSegment seg{integer_field(s, "m_max", 1, kLargestProblemM), string_field(s, "tactic")};
      if (seg.m_max <= previous || m_bucket(seg.m_max) != e.key.m_bucket)
        throw std::runtime_error("segment m_max " + std::to_string(seg.m_max) + " is not ascending inside the bucket");
      previous = seg.m_max;
      e.segments.push_back(std::move(seg));
    }
    if (e.segments.empty() || e.segments.back().m_max != e.key.m_bucket || e.segments.back().tactic != e.tactic)
      throw std::runtime_error("the last segment must end at the bucket edge with the entry's tactic");
  }
  return e;
}

// nlohmann's "[json.exception.parse_error.101] parse error at ..." without the bracket.
std::string parse_error(const std::exception& e) {
  std::string s = e.what();
  if (s.rfind("[json.exception.", 0) == 0 && s.find("] ") != std::string::npos) s = s.substr(s.find("] ") + 2);
  return s;
}

// "/a/b" and "/a/b/" alike.
std::string normal(const std::string& dir) {
  std::string s = std::filesystem::path(dir).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// The conventional directory is ours to create (0700, as the XDG spec asks); any other missing
// directory is more likely a typo and stays an error.
void create_if_default(const std::string& dir) {
  const std::string ours = default_cache_dir();
  if (ours.empty() || normal(dir) != normal(ours)) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  FP8GEMM_REQUIRE(!ec, kIo, "cannot create the tuning cache directory ", dir, ": ", ec.message());
  ::chmod(dir.c_str(), 0700);
}

}  // namespace

CacheFile parse_cache_text(const std::string& text, const Validators& expected) {
  CacheFile f;
  json j;
  try {
    j = json::parse(text);
  } catch (const std::exception& e) {
    const bool ours = text.find(kFormatName) != std::string::npos || text.find("\"m_bucket\"") != std::string::npos;
    f.problem = std::string(ours ? "it is a truncated or corrupt fp8gemm tuning cache ("
                                 : "it is not an fp8gemm tuning cache (not JSON: ") +
                parse_error(e) + ")";
    return f;
  }
  const auto format = j.is_object() ? j.find("format") : j.end();
  if (!j.is_object() || format == j.end() || *format != kFormatName) {
    f.problem = "it is not an fp8gemm tuning cache (JSON without \"format\": \"" + std::string(kFormatName) + "\")";
    return f;
  }
  try {
    const json& v = field(j, "validators");
    if (!v.is_object()) throw std::runtime_error("validators is " + shown(v) + ", not an object");
    // The format version first: another version's other fields may mean something else.
    const json& version = field(v, "format_version");
    if (!version.is_number_integer() || version != Validators::kFormatVersion) {
      f.problem = "it is an fp8gemm tuning cache of format version " + shown(version) + " (this library reads " +
                  std::to_string(Validators::kFormatVersion) + ")";
      f.other_setup = true;
      return f;
    }
    const std::string why = expected.mismatch(validators_from(v));
    if (!why.empty()) {
      f.problem = "it is an fp8gemm tuning cache for another setup: " + why;
      f.other_setup = true;
      return f;
    }
    if (!field(j, "entries").is_array())
      throw std::runtime_error("entries is " + shown(j.at("entries")) + ", not an array");
  } catch (const std::exception& e) {
    f.problem = std::string("it is a corrupt fp8gemm tuning cache: ") + e.what();
    return f;
  }
  size_t index = 0;
  for (const json& e : j.at("entries")) {
    ++index;
    try {
      f.entries.push_back(entry_from(e));
    } catch (const std::exception& ex) {
      if (f.dropped++ == 0) {
        const auto key = e.is_object() ? e.find("key") : e.end();
        f.dropped_why = "entry " + std::to_string(index) +
                        (key != e.end() && key->is_string() ? " (" + shown(*key) + ")" : "") + ": " + ex.what();
        if (f.dropped_why.size() > 300) f.dropped_why = f.dropped_why.substr(0, 297) + "...";
      }
    }
  }
  f.ok = true;
  return f;
}

std::string cache_text(const Validators& validators, const std::vector<CacheEntry>& entries) {
  ordered j = {{"format", kFormatName}, {"validators", to_json(validators)}, {"entries", ordered::array()}};
  for (const CacheEntry& e : entries) j["entries"].push_back(to_json(e));
  return j.dump(1) + "\n";
}

CacheFile read_cache_file(const std::string& path, const Validators& expected) {
  FileText t = read_regular_file(path, kMaxCacheFileBytes);
  CacheFile f;
  if (!t.problem.empty()) {
    f.missing = t.missing;
    f.problem = t.problem;
    return f;
  }
  if (t.text.empty()) {  // nothing a save could lose (a `touch`, a mktemp)
    f.missing = true;
    f.problem = "it is empty";
    return f;
  }
  f = parse_cache_text(t.text, expected);
  if (f.dropped)
    warn_once("malformed:" + path, "dropping " + std::to_string(f.dropped) + " of " +
                                       std::to_string(f.dropped + f.entries.size()) + " entries of tuning cache " + path +
                                       " (the rest are kept; a save rewrites the file without them): " + f.dropped_why +
                                       (f.dropped > 1 ? " (the first)" : ""));
  return f;
}

namespace {

// `path` as a save names it in messages: with its target when it is a symlink.
std::string named(const std::string& path, const std::string& target) {
  return target == path ? path : path + " (a symlink to " + target + ")";
}

void require_writable_over(const CacheFile& on_disk, const std::string& path, const std::string& target) {
  FP8GEMM_REQUIRE(on_disk.ok || on_disk.missing, kIo, "refusing to write the tuning cache ", named(path, target), ": ",
                  on_disk.problem, "; it is left as it was (move it away, or save to another path)");
}

}  // namespace

std::string cache_save_problem(const std::string& path, const Validators* validators) {
  try {
    FP8GEMM_REQUIRE(!path.empty(), kInvalidArgument, "the tuning cache path is empty: name a file");
    const std::string target = write_target(path), dir = directory_of(target);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
      const std::string ours = default_cache_dir();
      FP8GEMM_REQUIRE(!ours.empty() && normal(dir) == normal(ours), kIo, "cannot save ", named(path, target),
                      ": directory ", dir, " does not exist");
    } else {
      FP8GEMM_REQUIRE(S_ISDIR(st.st_mode), kIo, "cannot save ", named(path, target), ": ", dir, " is not a directory");
      FP8GEMM_REQUIRE(::access(dir.c_str(), W_OK | X_OK) == 0, kIo, "cannot save ", named(path, target), ": directory ",
                      dir, " is not writable (", std::strerror(errno), ")");
    }
    const CacheFile on_disk = read_cache_file(target, validators ? *validators : Validators{});
    if (!validators && on_disk.other_setup) return "";
    require_writable_over(on_disk, path, target);
  } catch (const std::exception& e) {
    // The message alone, for the caller to prefix with its argument's name.
    std::string why = e.what();
    if (why.rfind("fp8gemm: ", 0) == 0) why.erase(0, 9);
    if (const size_t at = why.rfind(" ["); at != std::string::npos && why.back() == ']') why.erase(at);
    return why;
  }
  return "";
}

void write_cache_file(const std::string& path, const Validators& validators, const std::vector<CacheEntry>& entries,
                      double lock_timeout_s) {
  FP8GEMM_REQUIRE(!path.empty(), kInvalidArgument, "the tuning cache path is empty: name a file");
  const std::string target = write_target(path);
  create_if_default(directory_of(target));
  CacheLock lock(target, lock_timeout_s);
  remove_stale_temps(target);
  // Merge with what other writers saved meanwhile; ours win on the same key (newer).
  const CacheFile on_disk = read_cache_file(target, validators);
  require_writable_over(on_disk, path, target);
  TuneCache merged;
  merged.replace(on_disk.entries);
  merged.merge(entries, /*overwrite=*/true);

  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  replace_file(target, cache_text(validators, merged.entries()), exists ? &st : nullptr);
}

}  // namespace fp8gemm::tuning
