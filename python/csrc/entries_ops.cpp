// Tuned entries as bytes for fp8gemm.tune(group=...) (python/fp8gemm/distributed.py), over
// include/fp8gemm/tune.h's export_entries / import_entries / forget_entries: the group's
// transport is torch.distributed, these ops only turn entries into text and back. tune_keys
// checks a group tune's arguments without a GPU, so every rank refuses a bad call before any
// rank tunes.
#include <torch/library.h>

#include <nlohmann/json.hpp>

#include "args.h"
#include "fp8gemm/tune.h"
#include "tune_args.h"

namespace fp8gemm::torch_ops {
namespace {

// problems: [batch, m, n, k] flattened, as fp8gemm.tune's. The key string of each (its M bucket's
// edge), after the checks the tune op makes before it needs the GPU.
std::vector<std::string> tune_keys(std::vector<int64_t> bmnk, at::ScalarType a, at::ScalarType b, at::ScalarType out,
                                   double key_budget_ms, double run_budget_ms, std::vector<std::string> backends,
                                   std::string layer) {
  TORCH_CHECK_VALUE(bmnk.size() % 4 == 0, "tune: problems must be [batch, m, n, k] quadruples");
  std::vector<std::string> keys;
  for (size_t i = 0; i < bmnk.size(); i += 4) {
    BmmFp8Args args = problem_args(bmnk[i], bmnk[i + 1], bmnk[i + 2], bmnk[i + 3], a, b, out);
    check_bucket_edge(args);
    args.m = m_bucket(args.m);
    keys.push_back(tune_key(layer_of(problem_without_gpu(args), layer)));
  }
  check_budgets(key_budget_ms, run_budget_ms);
  canonical_backends(backends);
  return keys;
}

std::string export_entries_op(std::vector<std::string> keys) {
  return on_current_gpu("fp8gemm.export_entries", [&](Context& ctx) { return export_entries(ctx, keys); });
}
std::string export_all_entries_op() {
  return on_current_gpu("fp8gemm.export_entries", [&](Context& ctx) { return export_entries(ctx); });
}

// ImportReport as JSON: {"added": [keys], "replaced": ..., "unchanged": ..., "kept_local": ...,
// "refused": ["key: why"]}.
std::string import_entries_op(std::string bytes, bool replace_local) {
  return on_current_gpu("fp8gemm.import_entries", [&](Context& ctx) {
    const ImportReport r = import_entries(ctx, bytes, replace_local);
    return nlohmann::json{{"added", r.added},
                          {"replaced", r.replaced},
                          {"unchanged", r.unchanged},
                          {"kept_local", r.kept_local},
                          {"refused", r.refused}}
        .dump();
  });
}

int64_t forget_entries_op(std::vector<std::string> keys) {
  return on_current_gpu("fp8gemm.forget_entries",
                        [&](Context& ctx) { return static_cast<int64_t>(forget_entries(ctx, keys)); });
}

// {key: reason} of the keys whose measurement failed in this process (the tuner's failed_keys):
// a group reports them, and every rank keeps the default for them.
std::string tuning_failures() {
  return on_current_gpu("fp8gemm.tuning_failures", [&](Context& ctx) {
    return nlohmann::json(failed_keys(ctx)).dump();
  });
}

}  // namespace
}  // namespace fp8gemm::torch_ops

TORCH_LIBRARY_FRAGMENT(fp8gemm, m) {
  using namespace fp8gemm::torch_ops;
  m.def("tune_keys(int[] problems, ScalarType a_dtype, ScalarType b_dtype, ScalarType out_dtype, "
        "float key_budget_ms, float run_budget_ms, str[] backends, str layer=\"\") -> str[]", &tune_keys);
  m.def("export_entries(str[] keys) -> str", &export_entries_op);
  m.def("export_all_entries() -> str", &export_all_entries_op);
  m.def("import_entries(str data, bool replace_local=False) -> str", &import_entries_op);
  m.def("forget_entries(str[] keys) -> int", &forget_entries_op);
  m.def("tuning_failures() -> str", &tuning_failures);
}
