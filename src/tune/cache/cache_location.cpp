// Where tuning caches live when no path is named (include/fp8gemm/tune.h, docs/tuning.md "API
// and environment"): one file per GPU and library version in the user's cache directory, so a
// cache follows its machine and an upgrade starts a new one instead of tripping the validators.
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "fp8gemm/version.h"
#include "tune/cache/tune_cache.h"
#include "tune/cache/warnings.h"

namespace fp8gemm {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3": letters and digits, one dash between runs.
std::string slug(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c))
      out += char(std::tolower(c));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// The version as it is where it is safe in a file name ("0.1.0"; anything odd becomes '-').
std::string version_tag(const std::string& version) {
  std::string out = version;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '+' && c != '_') c = '-';
  return out;
}

}  // namespace

std::string default_cache_dir() {
  if (const std::string dir = env("FP8GEMM_CACHE_DIR"); !dir.empty()) return without_trailing_slashes(dir);
  // The XDG spec ignores a relative XDG_CACHE_HOME.
  if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg[0] == '/')
    return without_trailing_slashes(xdg) + "/fp8gemm";
  if (const std::string home = env("HOME"); !home.empty()) return without_trailing_slashes(home) + "/.cache/fp8gemm";
  return "";
}

std::string conventional_cache_path(const DeviceInfo& device) {
  const std::string dir = default_cache_dir();
  return dir.empty() ? "" : (dir == "/" ? "" : dir) + "/" + tuning::cache_file_name(device);
}

std::optional<std::string> cache_path_from_env() {
  const std::string named = env("FP8GEMM_CACHE");
  if (named.empty()) return std::nullopt;
  return named == "off" ? "" : named;
}

std::string default_cache_path(const DeviceInfo& device) {
  if (const std::optional<std::string> named = cache_path_from_env()) return *named;
  return conventional_cache_path(device);
}

namespace tuning {

std::string cache_file_name(const DeviceInfo& device) {
  const std::string gpu = slug(device.name);
  // Every validator that an upgrade can change is in the name, so that after a driver, CUDA or
  // cuBLASLt upgrade the next tune starts a file of its own instead of meeting a foreign cache.
  return (gpu.empty() ? "gpu" : gpu) + "-sm" + std::to_string(device.compute_capability()) + "-" +
         std::to_string(device.sm_count) + "sm-driver" + std::to_string(device.driver_version) + "-cuda" +
         std::to_string(device.runtime_version) + "-cublaslt" + std::to_string(device.cublaslt_version) +
         "-fp8gemm" + version_tag(FP8GEMM_VERSION_STRING) + ".json";
}

void report_if_missing(const std::string& path, const std::string& named_by) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT)
    warn_once("missing:" + path, "tuning cache " + path + " (" + named_by +
                                     ") does not exist: `auto` uses its untuned defaults until it is written");
}

std::string startup_cache_path(const DeviceInfo& device) {
  const std::string path = default_cache_path(device);
  if (!path.empty() && cache_path_from_env() == path) report_if_missing(path, "named by FP8GEMM_CACHE");
  return path;
}

}  // namespace tuning
}  // namespace fp8gemm
