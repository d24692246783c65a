// Milliseconds on the steady clock: the host-side time of budgets, phases and settling.
#pragma once

#include <chrono>

namespace fp8gemm {

inline double steady_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace fp8gemm
