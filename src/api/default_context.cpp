// Each device's Context (runtime) with the autotuner installed on it (tune): the one place that
// knows both, so runtime never calls tune. A build without the tuner leaves `auto` to the floor.
#include <map>
#include <memory>
#include <mutex>

#include "fp8gemm/check.h"
#include "fp8gemm/context.h"
#include "fp8gemm/tune.h"

namespace fp8gemm {

Context& default_context(int device) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<Context>> contexts;
  if (device < 0 && cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    FP8GEMM_FAIL(kNotAvailable, "no usable GPU: ", no_device_reason());
  }
  std::lock_guard lock(mutex);
  auto& slot = contexts[device];
  if (!slot) {
    ContextOptions o;
    o.device = device;
    slot = std::make_unique<Context>(o);
#if FP8GEMM_HAVE_TUNER
    install_autotuner(*slot);  // tuned cache (FP8GEMM_CACHE), per-arch default table, lazy tuning
#endif
  }
  return *slot;
}

#if !FP8GEMM_HAVE_TUNER
// Without the tuner `auto` has no tuned entries: what it runs is what it would run untuned.
Tactic untuned_choice(Context& ctx, const Problem& p) { return ctx.choose(p, "auto"); }
#endif

}  // namespace fp8gemm
