#include "runtime/registry.h"

#include <algorithm>
#include <sstream>

#include "fp8gemm/check.h"

namespace fp8gemm {

namespace {

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

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
  Factory factory;        // nullptr: not built
  const char* not_built;  // why not: "FP8GEMM_WITH_<NAME>=OFF", or what its dependencies lacked
};

}  // namespace

// Each backend's factory, defined in its folder (referenced below only where it was built).
#define FP8GEMM_BACKEND(name, spellings) \
  std::unique_ptr<Backend> make_##name##_backend(const DeviceInfo& device, const BackendOptions& options);
#include "backends/backends.def"
#undef FP8GEMM_BACKEND

namespace {

// Every backend of backends.def, in its order, as this build made it: backends_built.inc is
// written by CMakeLists.txt from backends.def and the build's options.
const std::vector<Entry>& entries() {
#define FP8GEMM_BUILT(name) {#name, &make_##name##_backend, nullptr},
#define FP8GEMM_NOT_BUILT(name, why) {#name, nullptr, why},
  static const std::vector<Entry> e = {
#include "backends_built.inc"
  };
#undef FP8GEMM_BUILT
#undef FP8GEMM_NOT_BUILT
  return e;
}

}  // namespace

std::unique_ptr<Backend> make_unavailable_backend(std::string name, std::string reason) {
  return std::make_unique<UnavailableBackend>(std::move(name), std::move(reason));
}

namespace {

// A backend's name and its other accepted spellings, from backends.def.
struct Spellings {
  std::string name;
  std::vector<std::string> others;
};
const std::vector<Spellings>& spellings() {
  static const std::vector<Spellings> all = [] {
    std::vector<Spellings> out;
#define FP8GEMM_BACKEND(name, others) out.push_back({#name, split_words(others)});
#include "backends/backends.def"
#undef FP8GEMM_BACKEND
    return out;
  }();
  return all;
}

}  // namespace

const std::vector<std::string>& known_backend_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Spellings& s : spellings()) out.push_back(s.name);
    return out;
  }();
  return names;
}

std::string canonical_backend_name(const std::string& spelling) {
  std::string s = spelling;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "auto") return "auto";
  std::string expected = "auto";
  for (const Spellings& b : spellings()) {
    if (s == b.name || std::find(b.others.begin(), b.others.end(), s) != b.others.end()) return b.name;
    expected += ", " + b.name;
    if (!b.others.empty()) expected += " (or " + b.others.front() + ")";
  }
  FP8GEMM_FAIL(kInvalidArgument, "backend '", spelling, "' is unknown: expected ", expected,
               ", or a tactic name like 'cublaslt:algo=...'");
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
      out.push_back(make_unavailable_backend(e.name, std::string("not built: ") + e.not_built));
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
