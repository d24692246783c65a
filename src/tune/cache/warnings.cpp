#include "tune/cache/warnings.h"

#include <iostream>
#include <mutex>
#include <set>

namespace fp8gemm::tuning {

namespace {

struct State {
  std::mutex mutex;
  std::set<std::string> given;
  WarningSink sink;
};

State& state() {
  static State s;
  return s;
}

}  // namespace

bool warn_once(const std::string& once_key, const std::string& message) {
  State& s = state();
  WarningSink sink;
  {
    std::lock_guard lock(s.mutex);
    if (!s.given.insert(once_key).second) return false;
    sink = s.sink;
  }
  if (sink)
    sink(message);
  else
    std::cerr << "fp8gemm: warning: " << message << std::endl;
  return true;
}

void reset_warnings() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.given.clear();
}

}  // namespace fp8gemm::tuning

namespace fp8gemm {

WarningSink set_warning_sink(WarningSink sink) {
  tuning::State& s = tuning::state();
  std::lock_guard lock(s.mutex);
  std::swap(s.sink, sink);
  return sink;
}

}  // namespace fp8gemm
