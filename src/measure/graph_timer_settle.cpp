// The GPU's load between the GraphTimer's measurements (graph_timer_impl.h; docs/tuning.md
// "Power and clocks", "Light after heavy"): settling heavy calls, recovering light ones after a
// heavy load, and keeping the load on while the host works.
#include <algorithm>
#include <cmath>

#include "fp8gemm/check.h"
#include "measure/graph_timer_impl.h"

namespace fp8gemm {

void GraphTimer::Impl::settle(const std::vector<GraphExec>& graphs, std::vector<Timing>& timings, int warmup_replays,
                              bool may_settle, const RoundZero& r0) {
  const bool enabled = may_settle && options.settle_ms > 0;
  const bool recovering = may_settle && options.recover_ms > 0 && r0.start_ms - last_heavy_ms < options.recover_ms;
  const double target = settle_target_ms(options, r0.start_ms - last_busy_ms);
  const double call_us = r0.calls > 0 ? 1000 * r0.gpu_ms / double(r0.calls) : 0;
  const bool heavy = r0.calls > 0 && call_us >= options.settle_min_call_us;
  for (int round = 1;; ++round) {
    if (round >= warmup_replays) {
      const bool settling = enabled && heavy && steady_ms() - r0.start_ms < target;
      const bool recovered = !recovering || call_us >= options.recover_below_call_us ||
                             steady_ms() - last_heavy_ms >= options.recover_ms;
      if (!settling && recovered) break;
    }
    long calls = 0;
    for (size_t i = 0; i < graphs.size(); ++i)
      if (timings[i].ok && launch(graphs[i], timings[i])) calls += graphs[i].calls;
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (calls == 0) break;
  }
}

void GraphTimer::Impl::keep_busy(GraphExec&& g, double call_us) {
  const double replay_ms = g.calls * call_us / 1000;
  if (!(options.keep_busy_ms > 0) || !(replay_ms > 0)) return;
  heater = std::move(g);
  const int n = int(std::clamp(std::ceil(options.keep_busy_ms / replay_ms), 1.0, 1000.0));
  int launched = 0;
  for (; launched < n; ++launched)
    if (cudaGraphLaunch(heater.exec, stream) != cudaSuccess) {
      cudaGetLastError();  // the graph just ran: a failure here is not the candidate's; stop heating
      break;
    }
  if (!heater_end) FP8GEMM_CUDA_CHECK(cudaEventCreateWithFlags(&heater_end, cudaEventDisableTiming));
  FP8GEMM_CUDA_CHECK(cudaEventRecord(heater_end, stream));
  heating = true;
  heater_end_ms = steady_ms() + launched * replay_ms;
  kept_busy_ms += launched * replay_ms;
}

void GraphTimer::Impl::drain_heater() {
  if (!heating) return;
  const bool running = cudaEventQuery(heater_end) == cudaErrorNotReady;
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  heater_done(running, steady_ms());
}

void GraphTimer::Impl::heater_done(bool running_at, double at) {
  if (!heating) return;
  heating = false;
  last_busy_ms = last_heavy_ms = running_at ? at : std::min(at, heater_end_ms);
}

}  // namespace fp8gemm
