// The library's tuning and inspection API as torch ops (no Python C-API: the extension loads
// with torch.ops.load_library into any Python). python/fp8gemm/__init__.py wraps these as
// fp8gemm.tune / load_cache / save_cache / explain / autotune / info.
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "args.h"
#include "tune_args.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/tune.h"
#include "fp8gemm/tune_report.h"

namespace fp8gemm::torch_ops {
namespace {

Problem on_gpu(const Context& ctx, const BmmFp8Args& args) { return validate_problem(args, ctx.device()); }

std::string info() {
  nlohmann::json j = {{"version", FP8GEMM_VERSION_STRING}, {"device_count", device_count()}};
  if (device_count() == 0) {
    j["no_device_reason"] = no_device_reason();
    return j.dump();
  }
  return on_current_gpu("fp8gemm.info", [&](Context& ctx) {
    j["device"] = ctx.device().to_string();
    j["compute_capability"] = ctx.device().compute_capability();
    j["backends"] = nlohmann::json::array();
    for (Backend* b : ctx.backends()) {
      const Verdict v = b->available();
      j["backends"].push_back({{"name", b->name()}, {"available", v.ok}, {"reason", v.reason}});
    }
    return j.dump();
  });
}

// The tactic a call would run now (no measuring): `backend` as in bmm_fp8; `layer` as with_layer
// spells it (the linear layer's problem; "" the GEMM's).
std::string choose(int64_t batch, int64_t m, int64_t n, int64_t k, at::ScalarType a, at::ScalarType b,
                   at::ScalarType out, std::string backend, std::string layer) {
  const BmmFp8Args args = problem_args(batch, m, n, k, a, b, out);
  layer_of(problem_without_gpu(args), layer);
  try {
    check_backend(backend);
  } catch (const Error& e) {
    throw_torch_error(e);
  }
  return on_current_gpu("fp8gemm.choose",
                        [&](Context& ctx) { return ctx.choose(layer_of(on_gpu(ctx, args), layer), backend).name(); });
}

// problems: [batch, m, n, k] flattened. Returns decisions_to_json. With `cache`, one
// tune_into_cache: the path is checked before anything is measured, merged in first, saved after.
std::string tune_problems(std::vector<int64_t> bmnk, at::ScalarType a, at::ScalarType b, at::ScalarType out,
                          double key_budget_ms, double run_budget_ms, std::vector<std::string> backends, bool retune,
                          std::string layer, std::string cache) {
  TORCH_CHECK_VALUE(bmnk.size() % 4 == 0, "tune: problems must be [batch, m, n, k] quadruples");
  std::vector<BmmFp8Args> args;
  for (size_t i = 0; i < bmnk.size(); i += 4) {
    args.push_back(problem_args(bmnk[i], bmnk[i + 1], bmnk[i + 2], bmnk[i + 3], a, b, out));
    check_bucket_edge(args.back());
    layer_of(problem_without_gpu(args.back()), layer);
  }
  check_budgets(key_budget_ms, run_budget_ms);
  const std::vector<std::string> only = canonical_backends(backends);
  return on_current_gpu("fp8gemm.tune", [&](Context& ctx) {
    std::vector<Problem> problems;
    for (const BmmFp8Args& one : args) problems.push_back(layer_of(on_gpu(ctx, one), layer));
    TuneOptions o;
    o.key_budget_ms = key_budget_ms;
    o.run_budget_ms = run_budget_ms;
    o.backends = only;
    o.retune = retune;
    if (!cache.empty()) return decisions_to_json(tune_into_cache(ctx, problems, cache, o).decisions, ctx.device());
    return decisions_to_json(tune(ctx, problems, o), ctx.device());
  });
}

// What `fp8gemm explain` prints: what auto runs now, then (measure) a fresh in-memory tuning of
// the key with every candidate's time, the noise floor, the choice and why.
std::string explain(int64_t batch, int64_t m, int64_t n, int64_t k, at::ScalarType a, at::ScalarType b,
                    at::ScalarType out, double key_budget_ms, bool measure, std::string layer) {
  const BmmFp8Args args = problem_args(batch, m, n, k, a, b, out);
  layer_of(problem_without_gpu(args), layer);
  if (measure) {
    check_bucket_edge(args);
    check_budgets(key_budget_ms, 0);
  }
  return on_current_gpu("fp8gemm.explain", [&](Context& ctx) {
    const Problem p = layer_of(on_gpu(ctx, args), layer);
    std::ostringstream os;
    os << ctx.device().to_string() << "\n"
       << "problem   " << p << "  (bucket m<=" << m_bucket(p.m) << ")\n"
       << "auto now  " << ctx.choose(p, "auto").name() << "\n";
    os << "because   " << explain_choice(ctx, p) << "\n";
    if (measure) {
      TuneOptions o;
      o.key_budget_ms = key_budget_ms;
      o.retune = true;
      os << "\n" << explain_text(tune(ctx, {p}, o).front());
    }
    return os.str();
  });
}

int64_t load_cache_op(std::string path) {
  return on_current_gpu("fp8gemm.load_cache", [&](Context& ctx) { return static_cast<int64_t>(load_cache(ctx, path)); });
}
int64_t merge_cache_op(std::string path) {
  return on_current_gpu("fp8gemm.merge_cache", [&](Context& ctx) { return static_cast<int64_t>(merge_cache(ctx, path)); });
}
void save_cache_op(std::string path) {
  on_current_gpu("fp8gemm.save_cache", [&](Context& ctx) { save_cache(ctx, path); });
}
void clear_cache_op() {
  on_current_gpu("fp8gemm.clear_cache", [&](Context& ctx) { clear_cache(ctx); });
}

// AutotuneScope objects behind Python's `with fp8gemm.autotune(...)`, by handle.
std::mutex scopes_mutex;
std::map<int64_t, std::unique_ptr<AutotuneScope>> scopes;
int64_t next_scope = 1;

int64_t autotune_begin(bool enabled, std::string cache) {
  return on_current_gpu("fp8gemm.autotune", [&](Context& ctx) {
    auto scope = std::make_unique<AutotuneScope>(enabled, cache, &ctx);
    std::lock_guard lock(scopes_mutex);
    scopes.emplace(next_scope, std::move(scope));
    return next_scope++;
  });
}

void autotune_end(int64_t handle) {
  std::unique_ptr<AutotuneScope> scope;
  {
    std::lock_guard lock(scopes_mutex);
    auto it = scopes.find(handle);
    TORCH_CHECK_VALUE(it != scopes.end(), "autotune_end: no open autotune scope ", handle);
    scope = std::move(it->second);
    scopes.erase(it);
  }
  scope.reset();  // saves the cache file, if any (a failure is a warning, never an exception)
}

}  // namespace
}  // namespace fp8gemm::torch_ops

TORCH_LIBRARY_FRAGMENT(fp8gemm, m) {
  using namespace fp8gemm::torch_ops;
  m.def("info() -> str", &info);
  // layer: "" (the GEMM), or the linear layer's problem as with_layer spells it (fp8gemm/linear.h).
  m.def("choose(int batch, int m, int n, int k, ScalarType a_dtype, ScalarType b_dtype, ScalarType out_dtype, "
        "str backend=\"auto\", str layer=\"\") -> str", &choose);
  m.def("tune(int[] problems, ScalarType a_dtype, ScalarType b_dtype, ScalarType out_dtype, "
        "float key_budget_ms=100., float run_budget_ms=0., str[] backends, bool retune=False, str layer=\"\", "
        "str cache=\"\") -> str",
        &tune_problems);
  m.def("explain(int batch, int m, int n, int k, ScalarType a_dtype, ScalarType b_dtype, ScalarType out_dtype, "
        "float key_budget_ms=100., bool measure=True, str layer=\"\") -> str", &explain);
  m.def("load_cache(str path) -> int", &load_cache_op);
  m.def("merge_cache(str path) -> int", &merge_cache_op);
  m.def("save_cache(str path) -> ()", &save_cache_op);
  m.def("clear_cache() -> ()", &clear_cache_op);
  m.def("autotune_begin(bool enabled, str cache=\"\") -> int", &autotune_begin);
  m.def("autotune_end(int handle) -> ()", &autotune_end);
}

// fp8gemm.hf_config_linears (python/fp8gemm/models.py): a Hugging Face config.json's linears per
// tensor-parallel rank (include/fp8gemm/models.h), as JSON {"linears": [...], "notes": [...]}.
// Needs no GPU.
#include "fp8gemm/models.h"

namespace fp8gemm::torch_ops {
namespace {

std::string hf_config_linears_op(std::string path, int64_t tp) {
  TORCH_CHECK_VALUE(tp >= 1 && tp <= (int64_t{1} << 20), "hf_config_linears: tp must be an integer >= 1, got ", tp);
  try {
    std::vector<std::string> notes;
    const std::vector<ModelLinear> linears = linears_from_hf_config(path, static_cast<int>(tp), &notes);
    nlohmann::json j = {{"linears", nlohmann::json::array()}, {"notes", notes}};
    for (const ModelLinear& l : linears)
      j["linears"].push_back({{"name", l.name}, {"n", l.n}, {"k", l.k}, {"count", l.count},
                              {"parallel", l.parallel}, {"unsupported", l.unsupported}});
    return j.dump();
  } catch (const Error& e) {
    throw_torch_error(e);
  }
}

}  // namespace
}  // namespace fp8gemm::torch_ops

TORCH_LIBRARY_FRAGMENT(fp8gemm, m) {
  m.def("hf_config_linears(str path, int tp=1) -> str", &fp8gemm::torch_ops::hf_config_linears_op);
}
