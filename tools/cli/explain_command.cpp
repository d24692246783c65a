// fp8gemm explain: tunes one key (without touching any cache file) and prints every
// candidate's time, the noise floor, the default, the choice and the reason; also what `auto`
// would run today from the cache (--cache / $FP8GEMM_CACHE) or the default table.
#include <iostream>

#include "core/cuda_check.h"
#include "core/validate.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/tune.h"
#include "measure/shapes.h"
#include "tools/cli/command.h"
#include "tune/report.h"

namespace fp8gemm::cli {
namespace {

struct ExplainOptions {
  std::string shape;
  int64_t m = 0;
  int64_t batch = 1;
  std::string dtype = "e4m3xe4m3";
  std::string out_dtype = "bf16";
  std::string cache;
  double key_budget_ms = 100;
  // As `tune`'s: so that explain can show what a tune with the pass would choose, and why.
  bool power_states = TuneOptions{}.check_power_states;
  double power_state_budget_s = TuneOptions{}.power_state_budget_ms / 1000;
};

void run_explain(const ExplainOptions& o) {
  if (device_count() == 0) {
    std::cerr << "fp8gemm explain needs a GPU: " << no_device_reason() << "\n";
    exit_code() = 2;
    return;
  }
  Context& ctx = default_context();
  const NamedShape s = parse_shape(o.shape);
  const size_t x = o.dtype.find('x');
  FP8GEMM_REQUIRE(x != std::string::npos, kInvalidArgument, "--dtype: '", o.dtype, "' is not AxB (e.g. e4m3xe4m3)");
  BmmFp8Args a;
  a.batch = o.batch, a.m = o.m, a.n = s.n, a.k = s.k;
  a.a_type = parse_dtype(o.dtype.substr(0, x));
  a.b_type = parse_dtype(o.dtype.substr(x + 1));
  a.out_type = parse_dtype(o.out_dtype);
  const Problem p = validate_problem(a, ctx.device());
  if (!o.cache.empty()) load_cache(ctx, o.cache);
  // An adaptive tactic ("cublaslt:heuristic") is shown with the kernel it runs at this M.
  auto shown = [&](const Tactic& t) {
    Backend* b = ctx.backend(t.backend);
    if (!b || b->adaptive_default() != t) return t.name();
    return t.name() + " (here " + b->default_tactic(p).name() + ")";
  };
  std::cout << ctx.device().to_string() << "\n"
            << "problem   " << p << "  (bucket m<=" << m_bucket(p.m) << ")\n"
            << "auto now  " << shown(ctx.choose(p, "auto")) << "  (from the cache, the default table or cuBLASLt)\n\n";

  // Measured afresh (retune) and only in memory: explain never writes a cache file.
  TuneOptions to;
  to.key_budget_ms = o.key_budget_ms;
  to.retune = true;
  to.check_power_states = o.power_states;
  to.power_state_budget_ms = o.power_state_budget_s * 1000;
  const Decision d = tune(ctx, {p}, to).front();
  std::cout << tuning::explain_text(d) << "auto at M=" << p.m
            << " after this tune: " << shown(Tactic::parse(d.choice_for(p.m))) << "\n";
}

const CommandRegistrar kRegister([](CLI::App& app) {
  static ExplainOptions o;
  CLI::App* cmd = app.add_subcommand("explain", "measure one (shape, M) and show why auto picks what it picks");
  cmd->add_option("--shape", o.shape, "N,K")->required();
  cmd->add_option("--m", o.m, "M")->required();
  cmd->add_option("--batch", o.batch, "batch (default 1)");
  cmd->add_option("--dtype", o.dtype, "input types AxB (default e4m3xe4m3)");
  cmd->add_option("--out", o.out_dtype, "output type (default bf16)");
  cmd->add_option("--cache", o.cache, "cache file to report `auto now` from");
  cmd->add_option("--key-budget-ms", o.key_budget_ms, "time budget of the measurement (default 100)");
  add_power_state_options(cmd, o.power_states, o.power_state_budget_s);
  cmd->callback([] { run_explain(o); });
});

}  // namespace
}  // namespace fp8gemm::cli
