// fp8gemm tune: tunes every (shape, M bucket) key of a model preset or of --shape N,K over the
// M values of --m, with a progress bar on stderr, and writes the cache (and optionally every
// decision as JSON, the input of tools/tables/make_default_table.py). docs/tuning.md.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <tuple>

#include "fp8gemm/check.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/tune.h"
#include "fp8gemm/tune_report.h"
#include "tools/cli/command.h"
#include "tools/cli/options.h"
#include "tools/common/files.h"
#include "tools/common/shapes.h"

namespace fp8gemm::cli {
namespace {

struct TuneCliOptions {
  ProblemOptions problems;
  std::vector<std::string> backends{"all"};
  std::string cache;
  std::string json;
  double key_budget_ms = TuneOptions{}.key_budget_ms;
  double run_budget_s = TuneOptions{}.run_budget_ms / 1000;
  bool retune = false;
  std::string layer;  // --layer: the linear layer's keys
};

// The keys to tune: each layer at the bucket of every M of --m (M values of one bucket would all
// tune the same key), with the layer's name beside each.
struct Keys {
  std::vector<BmmFp8Args> args;
  std::vector<std::string> labels;
};
Keys keys_of(const TuneCliOptions& o) {
  const std::vector<NamedShape> layers = layers_of(o.problems, "tune");
  const std::vector<int64_t> ms = parse_m_spec(o.problems.m_spec);
  const ProblemTypes types = types_of(o.problems.dtype, o.problems.out_dtype);
  Keys keys;
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  for (const NamedShape& s : layers)
    for (int64_t m : ms) {
      const int64_t bucket = m_bucket(m);
      if (!seen.insert({s.n, s.k, bucket}).second) continue;
      // A key is tuned at its bucket's upper edge, so the edge must make a valid problem.
      const BmmFp8Args args = args_of(o.problems.batch, bucket, s, types);
      checked_problem(args, "tune", "layer " + s.name + " at M=" + std::to_string(m) + " of --m, tuned at its "
                                    "bucket's edge m<=" + std::to_string(bucket));
      keys.args.push_back(args);
      keys.labels.push_back(s.name);
    }
  return keys;
}

// The preset layer name of the problem with p's batch, N and K (the first one listed).
std::string label_of(const std::vector<Problem>& problems, const std::vector<std::string>& labels, const Problem& p) {
  for (size_t i = 0; i < problems.size(); ++i)
    if (problems[i].batch == p.batch && problems[i].n == p.n && problems[i].k == p.k) return labels[i];
  return "?";
}

// The cache file and what named it: --cache, else $FP8GEMM_CACHE, else the conventional file
// for this GPU and library version (default_cache_path), known once the device is; `device` is
// null before the GPU is looked for, and the conventional file is then left for later.
std::pair<std::string, std::string> cache_path_of(const TuneCliOptions& o, const DeviceInfo* device) {
  if (!o.cache.empty()) return {"--cache", o.cache};
  if (const std::optional<std::string> named = cache_path_from_env()) {
    FP8GEMM_REQUIRE(!named->empty(), kInvalidArgument,
                    "tune: $FP8GEMM_CACHE is \"off\" (no cache file): give --cache FILE to write one");
    return {"$FP8GEMM_CACHE", *named};
  }
  if (!device) return {"the conventional cache file", ""};
  return {"the conventional cache file", conventional_cache_path(*device)};
}

// "[#########...........]  41/440  llama8b.qkv m<=16  12.3 s" redrawn in place on a terminal,
// one line per 10% otherwise (logs).
class ProgressBar {
 public:
  explicit ProgressBar(size_t total) : total_(total), tty_(::isatty(STDERR_FILENO)), start_(now()) {}
  void update(size_t done, const std::string& what) {
    const int width = 30;
    const int filled = total_ ? int(width * done / total_) : width;
    const int decile = total_ ? int(10 * done / total_) : 10;
    if (!tty_ && decile == last_decile_ && done != total_) return;
    last_decile_ = decile;
    std::fprintf(stderr, "%s[%s%s] %zu/%zu  %-40s %6.1f s%s", tty_ ? "\r" : "", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done, total_, what.c_str(), now() - start_,
                 tty_ ? "" : "\n");
    if (tty_ && done == total_) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  static double now() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
  }
  size_t total_;
  bool tty_;
  double start_;
  int last_decile_ = -1;
};

void run_tune(const TuneCliOptions& o) {
  // The arguments are checked before anything looks for a GPU, so typos fail fast anywhere.
  const Keys keys = keys_of(o);
  for (const BmmFp8Args& a : keys.args) with_layer(checked_problem(a, "tune", "--layer"), o.layer);
  TuneOptions to;
  to.key_budget_ms = o.key_budget_ms;
  to.run_budget_ms = o.run_budget_s * 1000;
  to.retune = o.retune;
  to.backends = backends_of(o.backends);
  {
    const auto [source, path] = cache_path_of(o, nullptr);
    if (path.empty()) {  // the conventional file: its folder must be known before the GPU is
      FP8GEMM_REQUIRE(!default_cache_dir().empty(), kInvalidArgument,
                      "tune: no cache location (neither $FP8GEMM_CACHE_DIR, $XDG_CACHE_HOME nor $HOME is set): give "
                      "--cache FILE");
    } else {
      if (o.cache.empty()) {  // --cache was checked as it was parsed
        const std::string why_not = why_not_writable(path, true);
        FP8GEMM_REQUIRE(why_not.empty(), kInvalidArgument, "tune: ", source, ": ", why_not);
      }
      require_distinct_files({{source, path}, {"--json", o.json}});
    }
  }
  if (!have_gpu("tune")) return;
  Context& ctx = default_context();
  const auto [cache_source, cache] = cache_path_of(o, &ctx.device());
  require_distinct_files({{cache_source, cache}, {"--json", o.json}});
  // Before any measuring: a path that holds something else than this setup's cache is refused
  // (tune_into_cache checks it too, but names no option).
  if (const std::string refusal = cache_save_problem(cache, &ctx.device()); !refusal.empty())
    FP8GEMM_FAIL(kInvalidArgument, "tune: ", cache_source, ": ", refusal);
  std::vector<Problem> problems;
  for (const BmmFp8Args& a : keys.args) problems.push_back(with_layer(validate_problem(a, ctx.device()), o.layer));
  const std::vector<std::string>& labels = keys.labels;
  std::fprintf(stderr, "%s\ntuning %zu keys into %s\n", ctx.device().to_string().c_str(), problems.size(),
               cache.c_str());

  ProgressBar bar(problems.size());
  to.progress = [&](size_t done, size_t, const Decision& d) {
    // Keys are tuned lightest first, not in `problems` order: the label comes from the shape.
    bar.update(done, label_of(problems, labels, d.problem) + " m<=" + std::to_string(d.problem.m));
  };
  const auto start = std::chrono::steady_clock::now();
  const CacheTuneRun run = tune_into_cache(ctx, problems, cache, to);
  const std::vector<Decision>& decisions = run.decisions;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("%-22s %7s %10s %10s %7s  %s\n", "shape", "m<=", "default_us", "choice_us", "gain", "choice");
  size_t changed = 0;
  for (size_t i = 0; i < decisions.size(); ++i) {
    const Decision& d = decisions[i];
    const bool moved = d.choice != d.default_tactic;
    changed += moved;
    std::printf("%-22s %7lld %10.2f %10.2f %6.1f%%  %s\n", labels[i].c_str(), (long long)d.problem.m, d.default_us,
                d.choice_us, d.default_us > 0 && d.choice_us > 0 ? 100 * (1 - d.choice_us / d.default_us) : 0.0,
                moved ? d.choice.c_str() : "(default)");
  }
  std::printf("tune: %zu keys, %zu moved off the default, %.1f s; cache %s (it held %zu valid entries before)\n",
              decisions.size(), changed, seconds, cache.c_str(), run.entries_before);
  std::printf("tune: where the time went: %s\n", phase_summary(decisions).c_str());
  if (!o.json.empty()) {
    write_file("--json", o.json, decisions_to_json(decisions, ctx.device()));
    std::printf("tune: decisions written to %s\n", o.json.c_str());
  }
}

const CommandRegistrar kRegister([](CLI::App& app) {
  static TuneCliOptions o;
  CLI::App* cmd = app.add_subcommand("tune", "measure every tactic per (shape, M bucket) and write the tuning cache");
  add_problem_options(cmd, o.problems);
  add_backend_option(cmd, o.backends, "backends whose tactics may replace the default");
  cmd->add_option("--cache", o.cache, "cache file to merge into and write (default: $FP8GEMM_CACHE, else the "
                                      "conventional file for this GPU under $FP8GEMM_CACHE_DIR)")
      ->check(writable_file(true));
  cmd->add_option("--json", o.json, "write every decision as JSON (tools/tables/make_default_table.py reads it)")
      ->check(writable_file());
  add_key_budget_option(cmd, o.key_budget_ms, "time budget per key");
  cmd->add_option("--run-budget-s", o.run_budget_s, "time budget of the run; later keys keep their default (0: none)")
      ->capture_default_str()
      ->check(finite_number_in(0, std::numeric_limits<double>::infinity()));
  cmd->add_flag("--retune", o.retune, "measure keys that are already in the cache again");
  add_layer_option(cmd, o.layer);
  cmd->callback([] { run_tune(o); });
});

}  // namespace
}  // namespace fp8gemm::cli
