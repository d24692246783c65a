// The library's warnings (warn_once: an ignored cache file, a dropped cache entry) reach Python's
// `warnings` module through the operator fp8gemm::_warn, whose kernel the package registers in
// Python (fp8gemm/_library.py). torch 2.11 prints a TORCH_WARN raised inside a torch.ops call to
// stderr instead of raising it as a Python warning, and this library links no Python C-API; the
// dispatcher calls a Python kernel with the GIL taken. Without that kernel (libtorch alone), or
// if it raises (warnings turned into errors), the warning goes through TORCH_WARN.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>
#include <c10/util/Exception.h>

#include <string>

#include "fp8gemm/tune.h"

namespace fp8gemm::torch_ops {
namespace {

void warn_through_python(const std::string& message) {
  const std::string text = "fp8gemm: " + message;
  try {
    const auto op = c10::Dispatcher::singleton().findSchema({"fp8gemm::_warn", ""});
    if (op && op->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)) {
      torch::jit::Stack stack{c10::IValue(text)};
      op->callBoxed(stack);
      return;
    }
  } catch (...) {
  }
  TORCH_WARN(text);
}

const bool warnings_routed_to_python = [] {
  set_warning_sink(warn_through_python);
  return true;
}();

}  // namespace
}  // namespace fp8gemm::torch_ops

TORCH_LIBRARY_FRAGMENT(fp8gemm, m) {
  // Kernel registered by the Python package: warnings.warn(message, UserWarning).
  m.def("_warn(str message) -> ()");
}
