#include "runtime/registry.h"

#include <algorithm>

#include "backends/cublaslt/cublaslt_backend.h"
#include "core/cuda_check.h"
#if FP8GEMM_HAVE_CUTLASS
#include "backends/cutlass/cutlass_backend.h"
#endif
#if FP8GEMM_HAVE_SMALL_M
#include "backends/small_m/small_m_backend.h"
#endif
#if FP8GEMM_HAVE_MID_M
#include "backends/mid_m/mid_m_backend.h"
#endif
#if FP8GEMM_HAVE_CUDNN
#include "backends/cudnn/cudnn_backend.h"
#endif

namespace fp8gemm {

namespace {

class UnavailableBackend final : public Backend {
 public:
  UnavailableBackend(std::string name, std::string reason)
      : name_(std::move(name)), reason_(std::move(reason)) {}
  std::string name() const override { return name_; }
  Verdict available() const override { return Verdict::no(reason_); }
  std::vector<Tactic> tactics(const Problem&) override { return {}; }
  Tactic default_tactic(const Problem&) override {
    FP8GEMM_FAIL(kNotAvailable, "backend ", name_, " is not available: ", reason_);
  }
  Verdict can_implement(const Problem&, const Tactic&) override {
    return Verdict::no("backend " + name_ + " is not available: " + reason_);
  }
  size_t workspace_bytes(const Problem&, const Tactic&) override { return 0; }
  void run(const Problem&, const Tactic&, const GemmArgs&, Workspace, cudaStream_t) override {
    FP8GEMM_FAIL(kNotAvailable, "backend ", name_, " is not available: ", reason_);
  }

 private:
  std::string name_, reason_;
};

using Factory = std::unique_ptr<Backend> (*)(const DeviceInfo&, const BackendOptions&);

struct Entry {
  const char* name;
  Factory factory;  // empty: not compiled in
  const char* build_option;
  const char* not_built_reason = nullptr;  // the build was asked for but its dependencies were missing
};

std::vector<Entry> entries() {
  std::vector<Entry> e;
  e.push_back({"cublaslt", make_cublaslt_backend, ""});
#if FP8GEMM_HAVE_CUTLASS
  e.push_back({"cutlass", make_cutlass_backend, ""});
#else
  e.push_back({"cutlass", nullptr, "FP8GEMM_WITH_CUTLASS"});
#endif
#if FP8GEMM_HAVE_SMALL_M
  e.push_back({"small_m", make_small_m_backend, ""});
#else
  e.push_back({"small_m", nullptr, "FP8GEMM_WITH_SMALL_M"});
#endif
#if FP8GEMM_HAVE_MID_M
  e.push_back({"mid_m", make_mid_m_backend, ""});
#else
  e.push_back({"mid_m", nullptr, "FP8GEMM_WITH_MID_M"});
#endif
#if FP8GEMM_HAVE_CUDNN
  e.push_back({"cudnn", make_cudnn_backend, ""});
#elif defined(FP8GEMM_NOT_BUILT_CUDNN)
  e.push_back({"cudnn", nullptr, "FP8GEMM_WITH_CUDNN", FP8GEMM_NOT_BUILT_CUDNN});
#else
  e.push_back({"cudnn", nullptr, "FP8GEMM_WITH_CUDNN"});
#endif
  return e;
}

}  // namespace

std::unique_ptr<Backend> make_unavailable_backend(std::string name, std::string reason) {
  return std::make_unique<UnavailableBackend>(std::move(name), std::move(reason));
}

const std::vector<std::string>& known_backend_names() {
  static const std::vector<std::string> names = {"cublaslt", "cutlass", "small_m", "mid_m", "cudnn"};
  return names;
}

std::string canonical_backend_name(const std::string& spelling) {
  std::string s = spelling;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "auto") return "auto";
  if (s == "cublas" || s == "cublaslt") return "cublaslt";
  if (s == "cutlass") return "cutlass";
  if (s == "small_m" || s == "smallm" || s == "small-m") return "small_m";
  if (s == "mid_m" || s == "midm" || s == "mid-m") return "mid_m";
  if (s == "cudnn") return "cudnn";
  FP8GEMM_FAIL(kInvalidArgument, "backend '", spelling,
               "' is unknown: expected auto, cublaslt (or cublas), cutlass, small_m, mid_m, cudnn, or a "
               "tactic name like 'cublaslt:algo=...'");
}

std::vector<std::unique_ptr<Backend>> make_backends(const DeviceInfo& device,
                                                    const ContextOptions& options) {
  BackendOptions backend_options;
  backend_options.workspace_bytes = options.workspace_bytes;
  backend_options.cudnn_runtime_compiled = options.cudnn_runtime_compiled;
  std::vector<std::unique_ptr<Backend>> out;
  for (const Entry& e : entries()) {
    const bool disabled = std::find(options.disabled_backends.begin(), options.disabled_backends.end(),
                                    e.name) != options.disabled_backends.end();
    if (disabled) {
      out.push_back(make_unavailable_backend(e.name, "disabled by ContextOptions::disabled_backends"));
      continue;
    }
    if (!e.factory) {
      out.push_back(make_unavailable_backend(e.name, e.not_built_reason
                                                         ? std::string("not built: ") + e.not_built_reason
                                                         : std::string("not built (") + e.build_option + "=OFF)"));
      continue;
    }
    try {
      out.push_back(e.factory(device, backend_options));
    } catch (const std::exception& ex) {
      out.push_back(make_unavailable_backend(e.name, std::string("failed to load: ") + ex.what()));
    }
  }
  return out;
}

}  // namespace fp8gemm
