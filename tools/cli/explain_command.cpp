// fp8gemm explain: for each M of --m, tunes that M's key (without touching any cache file) and
// prints every candidate's time, the noise floor, the default, the choice and the reason; also
// what `auto` would run today and why: the cache (--cache / $FP8GEMM_CACHE) or the default chain
// (the exact table's rule, the selector rule and the backend's own rule that fired, or the floor).
#include <iostream>

#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/tune.h"
#include "fp8gemm/tune_report.h"
#include "tools/cli/command.h"
#include "tools/cli/options.h"
#include "tools/common/shapes.h"

namespace fp8gemm::cli {
namespace {

struct ExplainOptions {
  std::string shape;
  std::string m_spec;
  int64_t batch = 1;
  std::string dtype = "e4m3xe4m3";
  std::string out_dtype = "bf16";
  std::string cache;
  double key_budget_ms = TuneOptions{}.key_budget_ms;
  std::string layer;  // --layer: the linear layer's keys
};

void run_explain(const ExplainOptions& o) {
  // The arguments are checked before anything looks for a GPU, so typos fail fast anywhere.
  const NamedShape layer = parse_shape(o.shape);
  const std::vector<int64_t> ms = parse_m_spec(o.m_spec);
  const ProblemTypes types = types_of(o.dtype, o.out_dtype);
  for (int64_t m : ms) {
    const std::string origin = "--shape " + o.shape + " at M=" + std::to_string(m) + " of --m";
    checked_problem(args_of(o.batch, m, layer, types), "explain", origin);
    // Its key is tuned at the bucket's upper edge, so the edge must make a valid problem too.
    checked_problem(args_of(o.batch, m_bucket(m), layer, types), "explain",
                    origin + ", tuned at its bucket's edge m<=" + std::to_string(m_bucket(m)));
    with_layer(checked_problem(args_of(o.batch, m, layer, types), "explain", origin), o.layer);
  }
  if (!have_gpu("explain")) return;
  Context& ctx = default_context();
  std::vector<Problem> problems;
  for (int64_t m : ms)
    problems.push_back(with_layer(validate_problem(args_of(o.batch, m, layer, types), ctx.device()), o.layer));
  if (!o.cache.empty()) load_cache(ctx, o.cache);
  // An adaptive tactic ("cublaslt:heuristic") is shown with the kernel it runs at the problem's M.
  auto shown = [&](const Tactic& t, const Problem& p) {
    Backend* b = ctx.backend(t.backend);
    if (!b || b->adaptive_default() != t) return t.name();
    return t.name() + " (here " + b->default_tactic(p).name() + ")";
  };
  // What auto runs now, and why, for every M before any is tuned: each tune below changes the
  // answer for the Ms of its bucket.
  std::vector<std::string> auto_now, why_now;
  for (const Problem& p : problems) {
    auto_now.push_back(shown(ctx.choose(p, "auto"), p));
    why_now.push_back(explain_choice(ctx, p));
  }
  std::cout << ctx.device().to_string() << "\n";
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem& p = problems[i];
    std::cout << (i ? "\n" : "") << "problem   " << p << "  (bucket m<=" << m_bucket(p.m) << ")\n"
              << "auto now  " << auto_now[i] << "\n"
              << "because   " << why_now[i] << "\n\n";
    // Measured afresh (retune) and only in memory: explain never writes a cache file.
    TuneOptions to;
    to.key_budget_ms = o.key_budget_ms;
    to.retune = true;
    const Decision d = tune(ctx, {p}, to).front();
    std::cout << explain_text(d) << "auto at M=" << p.m
              << " after this tune: " << shown(Tactic::parse(d.choice_for(p.m)), p) << "\n";
  }
}

const CommandRegistrar kRegister([](CLI::App& app) {
  static ExplainOptions o;
  CLI::App* cmd = app.add_subcommand("explain", "measure one shape at each M and show why auto picks what it picks");
  cmd->add_option("--shape", o.shape, "N,K of the layer")->required();
  add_m_option(cmd, o.m_spec)->required();
  add_batch_option(cmd, o.batch, "batch");
  add_type_options(cmd, o.dtype, o.out_dtype);
  cmd->add_option("--cache", o.cache, "cache file to report `auto now` from")->check(readable_file());
  add_key_budget_option(cmd, o.key_budget_ms, "time budget of each M's measurement");
  add_layer_option(cmd, o.layer);
  cmd->callback([] { run_explain(o); });
});

}  // namespace
}  // namespace fp8gemm::cli
