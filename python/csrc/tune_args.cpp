// The tuning ops' argument rules (tune_args.h).
#include "tune_args.h"

#include <cmath>

#include "args.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/tune.h"

namespace fp8gemm::torch_ops {

// The library's arguments of one problem, checked with every rule that needs no GPU, so that a bad
// call fails before the GPU is touched; on_gpu adds the GPU's own rule (its compute capability).
BmmFp8Args problem_args(int64_t batch, int64_t m, int64_t n, int64_t k, at::ScalarType a, at::ScalarType b,
                        at::ScalarType out) {
  BmmFp8Args args;
  args.batch = batch, args.m = m, args.n = n, args.k = k;
  args.a_type = to_dtype(a);
  args.b_type = to_dtype(b);
  args.out_type = to_dtype(out);
  try {
    require_one_call(problem_without_gpu(args));
  } catch (const Error& e) {
    throw_torch_error(e);
  }
  return args;
}

Problem layer_of(const Problem& problem, const std::string& layer) {
  try {
    return with_layer(problem, layer);
  } catch (const Error& e) {
    throw_torch_error(e);
  }
}

// A key is tuned at its M bucket's upper edge: that problem must be valid too.
void check_bucket_edge(BmmFp8Args args) {
  const int64_t m = args.m;
  args.m = m_bucket(m);
  try {
    require_one_call(problem_without_gpu(args));
  } catch (const Error& e) {
    std::string rule = e.what();
    if (rule.rfind("fp8gemm: ", 0) == 0) rule = rule.substr(9);
    C10_THROW_ERROR(ValueError, c10::str("fp8gemm: m=", m, " is tuned at its M bucket's upper edge m<=", args.m, ": ",
                                         rule));
  }
}

// Budgets are finite and >= 0; a key's at most an hour, as the CLI's --key-budget-ms (the tuner
// turns budget over call time into counts of calls).
constexpr double kMaxKeyBudgetMs = 3600e3;
void check_budgets(double key_budget_ms, double run_budget_ms) {
  TORCH_CHECK_VALUE(std::isfinite(key_budget_ms) && key_budget_ms >= 0 && key_budget_ms <= kMaxKeyBudgetMs,
                    "key_budget_ms must be a finite number in [0, 3600000], got ", key_budget_ms);
  TORCH_CHECK_VALUE(std::isfinite(run_budget_ms) && run_budget_ms >= 0,
                    "run_budget_ms must be a finite number >= 0, got ", run_budget_ms);
}

// The canonical names of `backends` (the tuner matches names exactly): each a backend, never auto.
std::vector<std::string> canonical_backends(const std::vector<std::string>& backends) {
  std::vector<std::string> out;
  for (const std::string& b : backends) {
    std::string name = "auto";  // refused below
    try {
      name = canonical_backend_name(b);
    } catch (const Error&) {
    }
    TORCH_CHECK_VALUE(name != "auto", "backends: '", b,
                      "' is not a backend: expected cublaslt (or cublas), cutlass, small_m or cudnn (none: all)");
    out.push_back(name);
  }
  return out;
}

}  // namespace fp8gemm::torch_ops
