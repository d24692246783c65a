// The options bench, tune, explain and check share, declared here once so that each concept has
// one spelling, one grammar and one help string in every subcommand, and the parsing of their
// values, which every command does before it looks for a GPU.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "fp8gemm/fp8gemm.h"
#include "tools/common/shapes.h"

namespace fp8gemm::cli {

// The problems a command runs on: the layers of --model, --hf-config and --shape, each at every M
// of --m, with one batch and one set of types.
struct ProblemOptions {
  std::vector<std::string> models;
  std::vector<std::string> hf_configs;  // "PATH[:tp=N]" each
  std::vector<std::string> shapes;  // "N,K" each
  std::string m_spec = "suite";
  int64_t batch = 1;
  std::string dtype = "e4m3xe4m3";
  std::string out_dtype = "bf16";
};

// --model, --hf-config, --shape, --m, --batch, --dtype and --out-dtype.
void add_problem_options(CLI::App* cmd, ProblemOptions& o);

// --layer: the linear layer's keys (fp8gemm/linear.h with_layer), whose quantization of the
// activations (of the output type) runs before the GEMM and is timed with it.
CLI::Option* add_layer_option(CLI::App* cmd, std::string& layer);

// --m with the grammar of parse_m_spec (tools/common/shapes.h) and its one help string.
CLI::Option* add_m_option(CLI::App* cmd, std::string& spec);
// --dtype (inputs AxB) and --out-dtype.
void add_type_options(CLI::App* cmd, std::string& dtype, std::string& out_dtype);
// --backend: backends by name, comma-separated or repeated, or all (the default).
CLI::Option* add_backend_option(CLI::App* cmd, std::vector<std::string>& backends, const std::string& help);

// The layers of --model, --hf-config (printed as they are derived) and then --shape. Throws
// Error(kInvalidArgument) when there are none.
std::vector<NamedShape> layers_of(const ProblemOptions& o, const std::string& command);

struct ProblemTypes {
  DType a = DType::kE4M3, b = DType::kE4M3, out = DType::kBF16;
};
// --dtype AxB (each FP8) and --out-dtype (bf16 or fp16). Throws Error(kInvalidArgument) naming
// the option.
ProblemTypes types_of(const std::string& dtype, const std::string& out_dtype);

// The canonical names of --backend's values; empty for all. Throws Error(kInvalidArgument)
// naming the value that is not a backend.
std::vector<std::string> backends_of(const std::vector<std::string>& spellings);
// Whether `backend` is among `selected` (backends_of's answer; empty: every backend).
bool backend_selected(const std::vector<std::string>& selected, const std::string& backend);

// The arguments of one problem, for validate_problem.
BmmFp8Args args_of(int64_t batch, int64_t m, const NamedShape& layer, const ProblemTypes& types);

// Validators whose messages name the rule and the value ("--batch: must be an integer in [1,
// 2147483647], not 0"). CLI11's own name their range up to the largest double, and its
// NonNegativeNumber lets nan and inf through.
CLI::Validator integer_in(int64_t lo, int64_t hi);
CLI::Validator finite_number_in(double lo, double hi);  // hi = infinity: no upper limit

// Output and input files, checked as the command line is parsed (tools/common/files.h); CLI11
// prefixes the option's name to the message.
CLI::Validator writable_file(bool regular_only = false);
CLI::Validator readable_file();

// Problem dims are 32-bit (core/validate.cpp): --batch is at most 2^31-1.
constexpr int64_t kMaxBatch = 2147483647;
// --batch with that range.
CLI::Option* add_batch_option(CLI::App* cmd, int64_t& batch, const std::string& help);

// The tuner turns a key's budget over a call's time into counts of calls (tune/policy/round_plan.cpp):
// at most an hour per key keeps them in range.
constexpr double kMaxKeyBudgetMs = 3600e3;
// --key-budget-ms, a finite number in [0, kMaxKeyBudgetMs].
CLI::Option* add_key_budget_option(CLI::App* cmd, double& ms, const std::string& help);

// validate_problem's rules that need no GPU (dims, types, 32-bit sizes), checked before a command
// looks for one. Throws Error(kInvalidArgument) starting with `command` and `origin` (which
// options made the problem, e.g. "layer 4097x4096 of --shape at M=1 of --m"), then the rule.
Problem checked_problem(const BmmFp8Args& args, const std::string& command, const std::string& origin);

// Whether a GPU is there; when not, says so for `command` and sets the exit code to 2.
bool have_gpu(const std::string& command);

}  // namespace fp8gemm::cli
