// The library's warnings (warn_once: an ignored cache file, a dropped cache entry) go through
// TORCH_WARN instead of straight to stderr: torch turns a warning raised during an op called from
// Python into a Python UserWarning (so `warnings` filters and pytest see it); one raised outside
// an op call (another thread) is printed by c10's default handler.
#include <c10/util/Exception.h>

#include <string>

#include "tune/warnings.h"

namespace fp8gemm::torch_ops {
namespace {

const bool warnings_routed_to_torch = [] {
  tuning::set_warning_sink([](const std::string& message) { TORCH_WARN("fp8gemm: ", message); });
  return true;
}();

}  // namespace
}  // namespace fp8gemm::torch_ops
