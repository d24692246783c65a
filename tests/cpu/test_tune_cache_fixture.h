// What the tuning cache file tests share: a temp directory per test, an H200's validators,
// entries, a selector over fake backends, warnings counted, and the tuner's environment cleared.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fp8gemm/error.h"
#include "scoped_env.h"
#include "test_tune_fakes.h"
#include "tune/cache/tune_cache.h"
#include "tune/tuning_selector.h"
#include "tune/cache/warnings.h"

namespace fp8gemm::testing {

namespace fs = std::filesystem;

inline DeviceInfo h200() {
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.sm_count = 132;
  d.cc_major = 9;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  d.cublaslt_version = 130100;
  return d;
}

inline tuning::CacheEntry entry(int64_t m, const std::string& tactic, int64_t n = 4096) {
  tuning::CacheEntry e;
  e.key = tuning::key_of(problem(m, n));
  e.tactic = tactic;
  e.us = 8;
  e.default_tactic = "cublaslt:heur";
  e.default_us = 10;
  return e;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Runs `fn` in a child process and reports whether it exited 0 within `seconds` (a child that
// hangs is killed): a hang becomes a failure instead of a stuck test.
inline bool finishes_within(double seconds, const std::function<void()>& fn) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int rc = 0;
    try {
      fn();
    } catch (...) {
      rc = 2;
    }
    ::_exit(rc);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct CacheTest : ::testing::Test {
  FakeBackend cublaslt{"cublaslt", {"enum0", "heur", "h1"}, "heur"};
  FakeBackend cutlass{"cutlass", {"c0", "c1"}, "c1"};
  fs::path dir;
  std::string path;
  std::vector<std::string> warnings;
  tuning::WarningSink old_sink;
  ScopedEnv env;

  void SetUp() override {
    dir = fs::temp_directory_path() / ("fp8gemm_tune_cache_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    path = (dir / "cache.json").string();
    env.unset("FP8GEMM_CACHE").unset("FP8GEMM_TUNE").set("FP8GEMM_CACHE_DIR", (dir / "conventional").string());
    tuning::reset_warnings();
    old_sink = tuning::set_warning_sink([this](const std::string& w) { warnings.push_back(w); });
  }
  void TearDown() override {
    tuning::set_warning_sink(old_sink);
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  tuning::TuningSelector selector(DeviceInfo d = h200()) {
    tuning::SelectorConfig c;
    c.backends = {&cublaslt, &cutlass};
    c.device = d;
    return tuning::TuningSelector(c);
  }
  void write(const std::vector<tuning::CacheEntry>& e, DeviceInfo d = h200()) {
    tuning::write_cache_file(path, tuning::Validators::of(d), e);
  }
  // The bytes at `path` when it is a small regular file ("" otherwise: a huge one is not read).
  std::string slurp_if_regular() const {
    std::error_code ec;
    return fs::is_regular_file(path, ec) && fs::file_size(path, ec) < (1u << 20) ? slurp(path) : "";
  }
  tuning::CacheFile read(const std::string& p) { return tuning::read_cache_file(p, tuning::Validators::of(h200())); }
  // The Error a save of `entries` to `p` throws ("" when it does not throw).
  std::string save_error(const std::string& p, const std::vector<tuning::CacheEntry>& entries = {entry(64, "cublaslt:h1")}) {
    try {
      tuning::write_cache_file(p, tuning::Validators::of(h200()), entries);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kIo) << e.what();
      return e.what();
    }
    return "";
  }
};

}  // namespace fp8gemm::testing
