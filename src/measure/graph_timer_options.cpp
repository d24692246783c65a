// The GraphTimer's host-side option arithmetic: replay lengths, weight copies, settle targets and
// the tuner's defaults. No GPU work: the CPU tests cover it (tests/cpu/test_rounds.cpp,
// GraphTimerSizing); the timer applies it.
#include <algorithm>
#include <cmath>

#include "fp8gemm/measure.h"

namespace fp8gemm {

int calls_per_replay_for(double call_us, const GraphTimerOptions& o) {
  if (!(call_us > 0)) return o.max_calls;
  const double needed = std::ceil(o.target_replay_us / call_us);
  const int calls = int(std::clamp(needed, double(o.min_calls), double(o.max_calls)));
  if (!(o.min_replay_us > 0)) return calls;
  return std::max(calls, int(std::min(double(kMaxCallsPerReplay), std::ceil(o.min_replay_us / call_us))));
}

int weight_copies_for(size_t copy_bytes, size_t l2_bytes) {
  const double copies = std::ceil(2.0 * double(l2_bytes) / double(std::max<size_t>(copy_bytes, 1)));
  return int(std::clamp(copies, 2.0, 1e6));
}

double settle_target_ms(const GraphTimerOptions& o, double gap_ms) {
  if (gap_ms > o.idle_gap_ms) return o.settle_idle_ms;
  return gap_ms <= o.busy_gap_ms ? o.settle_busy_ms : o.settle_ms;
}

GraphTimerOptions tuning_timer_options() {
  GraphTimerOptions o;
  o.settle_busy_ms = 5;
  // Replays of short calls last as long as bench's head-to-head rounds' (kLongReplayUs): with
  // 20-call replays the tuner chose tactics that lose in longer ones.
  o.min_replay_us = kLongReplayUs;
  // The load stays on between heavy measurements, so they are timed near the power cap, as bench
  // and serving under load time them.
  o.keep_busy_ms = 5;
  return o;
}

}  // namespace fp8gemm
