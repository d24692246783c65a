// Environment variables set or cleared for one scope (a test) and restored after it, so that no
// test depends on the caller's FP8GEMM_* settings, HOME or XDG_CACHE_HOME.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fp8gemm::testing {

class ScopedEnv {
 public:
  ScopedEnv() = default;
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second)
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else
        ::unsetenv(it->first.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

  ScopedEnv& set(const std::string& name, const std::string& value) {
    save(name);
    ::setenv(name.c_str(), value.c_str(), 1);
    return *this;
  }
  ScopedEnv& unset(const std::string& name) {
    save(name);
    ::unsetenv(name.c_str());
    return *this;
  }

 private:
  void save(const std::string& name) {
    const char* v = std::getenv(name.c_str());
    saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// No tuning cache file is loaded or written behind a test's back and nothing tunes lazily: the
// caller's FP8GEMM_CACHE, FP8GEMM_CACHE_DIR and FP8GEMM_TUNE do not reach the test.
struct NoTuningEnv : ScopedEnv {
  NoTuningEnv() {
    set("FP8GEMM_CACHE", "off");
    unset("FP8GEMM_CACHE_DIR");
    unset("FP8GEMM_TUNE");
  }
};

}  // namespace fp8gemm::testing
