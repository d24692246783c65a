// --hf-config: a Hugging Face config.json's linears as named layers (tools/common/shapes.h).
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "fp8gemm/check.h"
#include "fp8gemm/models.h"
#include "tools/common/shapes.h"

namespace fp8gemm {

namespace {

constexpr const char* kTpSuffix = ":tp=";

// The model's name in layer names: the file's stem, or the folder's name for a folder or for a
// file named config.json (Hugging Face checkouts are folders named after the model).
std::string model_label(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(path), ec).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "dir/"
  if (fs::is_directory(p, ec) || p.filename() == "config.json") {
    const fs::path folder = fs::is_directory(p, ec) ? p : p.parent_path();
    if (!folder.filename().empty()) return folder.filename().string();
  }
  return p.stem().string();
}

// What the parser says, without the library's "fp8gemm: " (the CLI's error adds its own).
std::string reason_of(const Error& e) {
  const std::string what = e.what();
  const std::string prefix = "fp8gemm: ";
  return what.compare(0, prefix.size(), prefix) == 0 ? what.substr(prefix.size()) : what;
}

}  // namespace

HfConfigSpec parse_hf_config_spec(const std::string& spec) {
  HfConfigSpec s;
  s.path = spec;
  const size_t at = spec.rfind(kTpSuffix);
  if (at != std::string::npos) {
    const std::string digits = spec.substr(at + std::char_traits<char>::length(kTpSuffix));
    int tp = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), tp);
    FP8GEMM_REQUIRE(!digits.empty() && ec == std::errc() && end == digits.data() + digits.size() && tp >= 1,
                    kInvalidArgument, "--hf-config: '", spec, "': tp must be an integer >= 1, got '", digits,
                    "' (PATH or PATH:tp=N)");
    s.path = spec.substr(0, at);
    s.tp = tp;
  }
  FP8GEMM_REQUIRE(!s.path.empty(), kInvalidArgument, "--hf-config: '", spec,
                  "' names no file (PATH or PATH:tp=N, PATH a config.json or a folder holding one)");
  return s;
}

std::vector<NamedShape> hf_config_shapes(const std::string& spec, std::ostream& os) {
  const HfConfigSpec s = parse_hf_config_spec(spec);
  std::vector<std::string> notes;
  std::vector<ModelLinear> linears;
  try {
    linears = linears_from_hf_config(s.path, s.tp, &notes);
  } catch (const Error& e) {
    FP8GEMM_FAIL(kInvalidArgument, "--hf-config: ", reason_of(e));
  }
  const std::string model = model_label(s.path) + (s.tp > 1 ? "_tp" + std::to_string(s.tp) : "");
  os << "--hf-config " << s.path << " at tp " << s.tp << ": " << linears.size() << " linears per rank\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-36s %7s %7s  %-8s %6s\n", "layer", "N", "K", "parallel", "layers");
  os << line;
  std::vector<NamedShape> layers;
  for (const ModelLinear& l : linears) {
    const std::string name = model + "." + l.name;
    std::snprintf(line, sizeof line, "  %-36s %7lld %7lld  %-8s %6d%s\n", name.c_str(), (long long)l.n,
                  (long long)l.k, l.parallel.c_str(), l.count, l.unsupported.empty() ? "" : ("  skipped: " + l.unsupported).c_str());
    os << line;
    if (l.unsupported.empty()) layers.push_back({name, l.n, l.k});
  }
  for (const std::string& n : notes) os << "  note: " << n << "\n";
  FP8GEMM_REQUIRE(!layers.empty(), kInvalidArgument, "--hf-config: ", s.path, " at tp ", s.tp,
                  ": fp8gemm can run none of its linears (see the notes above)");
  return layers;
}

}  // namespace fp8gemm
