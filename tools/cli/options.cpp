#include "tools/cli/options.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "fp8gemm/check.h"
#include "fp8gemm/backend.h"
#include "fp8gemm/fp8gemm.h"
#include "tools/cli/command.h"
#include "tools/common/files.h"

namespace fp8gemm::cli {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// parse_dtype's answer for `part` of the option's `value`, or Error(kInvalidArgument) naming the
// option, its whole value and what it takes.
DType dtype_of(const std::string& option, const std::string& value, const std::string& part, bool fp8,
               const char* expected) {
  DType t = DType::kE4M3;
  const std::string what = part == value ? "'" + value + "'" : "'" + part + "' in '" + value + "'";
  try {
    t = parse_dtype(part);
  } catch (const Error&) {
    FP8GEMM_FAIL(kInvalidArgument, option, ": ", what, " is not a type; expected ", expected);
  }
  FP8GEMM_REQUIRE(is_fp8(t) == fp8, kInvalidArgument, option, ": ", what, " is not allowed; expected ", expected);
  return t;
}

// Whole-string decimal integer (an optional '-', then digits); false on anything else.
bool whole_integer(const std::string& s, int64_t& v) {
  const char* begin = s.data() + (!s.empty() && s[0] == '-');
  if (begin == s.data() + s.size() || !std::isdigit(static_cast<unsigned char>(*begin))) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

void add_problem_options(CLI::App* cmd, ProblemOptions& o) {
  cmd->add_option("--model", o.models, "model preset(s): " + joined(model_preset_names()))->delimiter(',');
  // The TP degree rides on the path so that one run can take several (and the option count of
  // tune --help stays within its limit).
  cmd->add_option("--hf-config", o.hf_configs,
                  "PATH[:tp=N]: the linears of a Hugging Face config.json (or a folder holding one) per "
                  "tensor-parallel rank, N ranks (default 1); repeatable");
  cmd->add_option("--shape", o.shapes, "N,K of a layer (repeatable)");
  add_m_option(cmd, o.m_spec)->capture_default_str();
  add_batch_option(cmd, o.batch, "batch");
  add_type_options(cmd, o.dtype, o.out_dtype);
}

CLI::Option* add_m_option(CLI::App* cmd, std::string& spec) { return cmd->add_option("--m", spec, kMSpecHelp); }

CLI::Option* add_batch_option(CLI::App* cmd, int64_t& batch, const std::string& help) {
  return cmd->add_option("--batch", batch, help)->capture_default_str()->check(integer_in(1, kMaxBatch));
}

CLI::Option* add_layer_option(CLI::App* cmd, std::string& layer) {
  return cmd
      ->add_option("--layer", layer,
                   "the linear layer's keys, its quantization of the activations timed with the GEMM: static, "
                   "dynamic, static+bias, dynamic+bias; bias: the GEMM with a bias")
      ->check(CLI::IsMember({"static", "dynamic", "static+bias", "dynamic+bias", "bias"}));
}

void add_type_options(CLI::App* cmd, std::string& dtype, std::string& out_dtype) {
  cmd->add_option("--dtype", dtype, "input types AxB: e4m3xe4m3, e4m3xe5m2, e5m2xe4m3")->capture_default_str();
  cmd->add_option("--out-dtype", out_dtype, "output type: bf16 or fp16")->capture_default_str();
}

CLI::Option* add_backend_option(CLI::App* cmd, std::vector<std::string>& backends, const std::string& help) {
  std::string names = "all";
  for (const std::string& name : known_backend_names()) names += ", " + name;
  return cmd->add_option("--backend", backends, help + ": " + names)
      ->delimiter(',')
      ->capture_default_str();
}

std::vector<NamedShape> layers_of(const ProblemOptions& o, const std::string& command) {
  std::vector<NamedShape> layers;
  for (const std::string& model : o.models)
    for (const NamedShape& s : model_shapes(model)) layers.push_back(s);
  for (const std::string& spec : o.hf_configs)
    for (const NamedShape& s : hf_config_shapes(spec, std::cout)) layers.push_back(s);
  for (const std::string& spec : o.shapes) layers.push_back(parse_shape(spec));
  FP8GEMM_REQUIRE(!layers.empty(), kInvalidArgument, command,
                  ": give --model PRESET or --shape N,K (repeatable) or --hf-config PATH[:tp=N]");
  return layers;
}

ProblemTypes types_of(const std::string& dtype, const std::string& out_dtype) {
  constexpr const char* kInputs = "AxB with A and B each e4m3 or e5m2 (e.g. e4m3xe5m2)";
  const size_t x = dtype.find('x');
  const bool two_parts = x != std::string::npos && x > 0 && x + 1 < dtype.size() &&
                         dtype.find('x', x + 1) == std::string::npos;
  FP8GEMM_REQUIRE(two_parts, kInvalidArgument, "--dtype: '", dtype, "' is not ", kInputs);
  ProblemTypes t;
  t.a = dtype_of("--dtype", dtype, dtype.substr(0, x), true, kInputs);
  t.b = dtype_of("--dtype", dtype, dtype.substr(x + 1), true, kInputs);
  t.out = dtype_of("--out-dtype", out_dtype, out_dtype, false, "bf16 or fp16");
  return t;
}

std::vector<std::string> backends_of(const std::vector<std::string>& spellings) {
  std::vector<std::string> out;
  for (const std::string& b : spellings) {
    if (b == "all") return {};
    std::string name;
    try {
      name = canonical_backend_name(b);
    } catch (const Error&) {
      name = "auto";  // refused below with the list of backends
    }
    FP8GEMM_REQUIRE(name != "auto", kInvalidArgument, "--backend: '", b,
                    "' is not a backend; expected all, cublaslt, cutlass, small_m or cudnn");
    out.push_back(name);
  }
  return out;
}

bool backend_selected(const std::vector<std::string>& selected, const std::string& backend) {
  if (selected.empty()) return true;
  for (const std::string& b : selected)
    if (b == backend) return true;
  return false;
}

BmmFp8Args args_of(int64_t batch, int64_t m, const NamedShape& layer, const ProblemTypes& types) {
  BmmFp8Args a;
  a.batch = batch, a.m = m, a.n = layer.n, a.k = layer.k;
  a.a_type = types.a, a.b_type = types.b, a.out_type = types.out;
  return a;
}

CLI::Option* add_key_budget_option(CLI::App* cmd, double& ms, const std::string& help) {
  return cmd->add_option("--key-budget-ms", ms, help)
      ->capture_default_str()
      ->check(finite_number_in(0, kMaxKeyBudgetMs));
}

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) {
        int64_t v = 0;
        return whole_integer(text, v) && v >= lo && v <= hi ? std::string()
                                                            : "must be an integer in " + range + ", not " + text;
      },
      range);
}

CLI::Validator finite_number_in(double lo, double hi) {
  const auto shown = [](double x) {
    std::ostringstream os;
    os << std::setprecision(15) << x;
    return os.str();
  };
  const std::string range = std::isinf(hi) ? ">= " + shown(lo) : "[" + shown(lo) + ", " + shown(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) {
        double x = 0;
        const bool ok = CLI::detail::lexical_cast(text, x) && std::isfinite(x) && x >= lo && x <= hi;
        return ok ? std::string() : "must be a finite number " + std::string(std::isinf(hi) ? "" : "in ") + range +
                                        ", not " + text;
      },
      range);
}

CLI::Validator writable_file(bool regular_only) {
  return CLI::Validator([regular_only](std::string& path) { return why_not_writable(path, regular_only); }, "");
}

CLI::Validator readable_file() {
  return CLI::Validator([](std::string& path) { return why_not_readable(path); }, "");
}

Problem checked_problem(const BmmFp8Args& args, const std::string& command, const std::string& origin) {
  DeviceInfo any_fp8_gpu;  // these rules do not depend on the GPU; its compute capability is checked on it
  any_fp8_gpu.cc_major = 9;
  try {
    // The commands time and list tactics on the problem itself, as one call.
    const Problem p = validate_problem(args, any_fp8_gpu);
    require_one_call(p);
    return p;
  } catch (const Error& e) {
    const std::string rule = e.what();
    const std::string prefix = "fp8gemm: ";
    detail::throw_error(e.kind(),
                        detail::cat(command, ": ", origin, " (b=", args.batch, " m=", args.m, " n=", args.n, " k=",
                                    args.k, " ", args.a_type, "x", args.b_type, "->", args.out_type, "): ",
                                    rule.rfind(prefix, 0) == 0 ? rule.substr(prefix.size()) : rule),
                        __FILE__, __LINE__);
  }
}

bool have_gpu(const std::string& command) {
  if (device_count() > 0) return true;
  std::cerr << "fp8gemm " << command << " needs a GPU: " << no_device_reason() << "\n";
  exit_code() = 2;
  return false;
}

}  // namespace fp8gemm::cli
