// fp8gemm tune: tunes every (shape, M bucket) key of a model preset or of --shape N,K over the
// M values of --m, with a progress bar on stderr, and writes the cache (and optionally every
// decision as JSON, the input of data/tables/make_default_table.py). docs/tuning.md.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>

#include "core/cuda_check.h"
#include "core/validate.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/tune.h"
#include "measure/shapes.h"
#include "tools/cli/command.h"
#include "tune/power_states.h"
#include "tune/report.h"

namespace fp8gemm::cli {
namespace {

struct TuneCliOptions {
  std::vector<std::string> models;
  std::vector<std::string> shapes;
  std::string m_spec = "suite";
  int64_t batch = 1;
  std::string dtype = "e4m3xe4m3";
  std::string out_dtype = "bf16";
  std::vector<std::string> backends;
  std::string cache;
  std::string json;
  double key_budget_ms = 100;
  double run_budget_s = 0;
  int bucket_samples = 2;
  bool lower_choice_at_first_sample = true;
  bool check_segment_ends = true;
  bool adaptive_floor = true;
  bool split_segments = false;
  bool split_at_floor_switch = TuneOptions{}.split_at_floor_switch;
  bool floor_keeps_low_kernel = TuneOptions{}.floor_keeps_low_kernel;
  bool samples_follow_edge = false;
  bool kept_floor_adapts = true;
  bool low_end_ties = false;
  bool retime_in_noise = true;
  bool retime_close_calls = false;
  double min_replay_us = TuneOptions{}.min_replay_us;
  bool adaptive_floor_interior = false;
  bool check_power_states = TuneOptions{}.check_power_states;
  double power_state_budget_s = TuneOptions{}.power_state_budget_ms / 1000;
  bool retune = false;
};

std::vector<Problem> problems_of(const TuneCliOptions& o, const DeviceInfo& device, std::vector<std::string>& labels) {
  std::vector<NamedShape> shapes;
  for (const std::string& m : o.models)
    for (const NamedShape& s : model_shapes(m)) shapes.push_back(s);
  for (const std::string& s : o.shapes) shapes.push_back(parse_shape(s));
  FP8GEMM_REQUIRE(!shapes.empty(), kInvalidArgument, "tune: give --model PRESET or --shape N,K (repeatable)");
  const size_t x = o.dtype.find('x');
  FP8GEMM_REQUIRE(x != std::string::npos, kInvalidArgument, "--dtype: '", o.dtype, "' is not AxB (e.g. e4m3xe4m3)");
  // One problem per key: Ms of one bucket would all tune the same key.
  std::vector<Problem> out;
  std::set<std::string> seen;
  for (const NamedShape& s : shapes)
    for (int64_t m : parse_m_spec(o.m_spec)) {
      BmmFp8Args a;
      a.batch = o.batch, a.m = m_bucket(m), a.n = s.n, a.k = s.k;
      a.a_type = parse_dtype(o.dtype.substr(0, x));
      a.b_type = parse_dtype(o.dtype.substr(x + 1));
      a.out_type = parse_dtype(o.out_dtype);
      const Problem p = validate_problem(a, device);
      if (!seen.insert(p.to_string()).second) continue;
      out.push_back(p);
      labels.push_back(s.name);
    }
  return out;
}

// The preset layer name of the problem with p's batch, N and K (the first one listed).
std::string label_of(const std::vector<Problem>& problems, const std::vector<std::string>& labels, const Problem& p) {
  for (size_t i = 0; i < problems.size(); ++i)
    if (problems[i].batch == p.batch && problems[i].n == p.n && problems[i].k == p.k) return labels[i];
  return "?";
}

std::string cache_path_of(const TuneCliOptions& o) {
  if (!o.cache.empty()) return o.cache;
  if (const char* env = std::getenv("FP8GEMM_CACHE"); env && *env) return env;
  return "fp8gemm_tune_cache.json";
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
  if (device_count() == 0) {
    std::cerr << "fp8gemm tune needs a GPU: " << no_device_reason() << "\n";
    exit_code() = 2;
    return;
  }
  Context& ctx = default_context();
  std::vector<std::string> labels;
  const std::vector<Problem> problems = problems_of(o, ctx.device(), labels);
  const std::string cache = cache_path_of(o);
  const size_t had = merge_cache(ctx, cache);
  std::fprintf(stderr, "%s\ntuning %zu keys into %s (%zu valid entries there)\n", ctx.device().to_string().c_str(),
               problems.size(), cache.c_str(), had);

  TuneOptions to;
  to.key_budget_ms = o.key_budget_ms;
  to.run_budget_ms = o.run_budget_s * 1000;
  to.bucket_samples = o.bucket_samples;
  to.lower_choice_at_first_sample = o.lower_choice_at_first_sample;
  to.check_segment_ends = o.check_segment_ends;
  to.adaptive_floor = o.adaptive_floor;
  to.split_segments = o.split_segments;
  to.split_at_floor_switch = o.split_at_floor_switch;
  to.floor_keeps_low_kernel = o.floor_keeps_low_kernel;
  to.samples_follow_edge = o.samples_follow_edge;
  to.kept_floor_adapts = o.kept_floor_adapts;
  to.low_end_ties = o.low_end_ties;
  to.retime_in_noise = o.retime_in_noise;
  to.retime_close_calls = o.retime_close_calls;
  to.min_replay_us = o.min_replay_us;
  to.adaptive_floor_interior = o.adaptive_floor_interior;
  to.check_power_states = o.check_power_states;
  to.power_state_budget_ms = o.power_state_budget_s * 1000;
  to.retune = o.retune;
  for (const std::string& b : o.backends) to.backends.push_back(canonical_backend_name(b));
  ProgressBar bar(problems.size());
  to.progress = [&](size_t done, size_t, const Decision& d) {
    // Keys are tuned lightest first, not in `problems` order: the label comes from the shape.
    bar.update(done, label_of(problems, labels, d.problem) + " m<=" + std::to_string(d.problem.m));
  };
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Decision> decisions = tune(ctx, problems, to);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  save_cache(ctx, cache);

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
  std::printf("tune: %zu keys, %zu moved off the default, %.1f s; cache %s\n", decisions.size(), changed, seconds,
              cache.c_str());
  std::printf("tune: where the time went: %s\n", tuning::phase_summary(decisions).c_str());
  if (o.check_power_states) {
    size_t handed = 0;
    for (const Decision& d : decisions)
      for (size_t at = d.reason.find(tuning::kUnderLoad); at != std::string::npos;
           at = d.reason.find(tuning::kUnderLoad, at + 1))
        ++handed;
    std::printf("tune: both power states: %zu segments changed hands under a heavy load\n", handed);
  }
  if (!o.json.empty()) {
    std::ofstream(o.json) << tuning::decisions_to_json(decisions, ctx.device());
    std::printf("tune: decisions written to %s\n", o.json.c_str());
  }
}

}  // namespace

void add_power_state_options(CLI::App* cmd, bool& on, double& budget_s) {
  cmd->add_flag("--power-states,!--no-power-states", on,
                "after every key, time each light segment's choice and the tactics within 3% of it again under a "
                "heavy GEMM load; the one with the smaller worse regret over both states takes it, and the reason "
                "says where (default off)");
  cmd->add_option("--power-state-budget-s", budget_s,
                  "with --power-states: the pass starts no measurement after this long (0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
}

namespace {

const CommandRegistrar kRegister([](CLI::App& app) {
  static TuneCliOptions o;
  CLI::App* cmd = app.add_subcommand("tune", "measure every tactic per (shape, M bucket) and write the tuning cache");
  cmd->add_option("--model", o.models, "model preset(s): " + [] {
    std::string s;
    for (const auto& n : model_preset_names()) s += (s.empty() ? "" : ", ") + n;
    return s;
  }())->delimiter(',');
  cmd->add_option("--shape", o.shapes, "N,K of a layer (repeatable)");
  cmd->add_option("--m", o.m_spec, "M values: list, lo:hi:xF, lo:hi:+S, suite, or buckets (every bucket edge up to 16384) (default suite)");
  cmd->add_option("--batch", o.batch, "batch (default 1)");
  cmd->add_option("--dtype", o.dtype, "input types AxB (default e4m3xe4m3)");
  cmd->add_option("--out", o.out_dtype, "output type (default bf16)");
  cmd->add_option("--backend", o.backends, "challengers only from these backends")->delimiter(',');
  cmd->add_option("--cache", o.cache, "cache file (default $FP8GEMM_CACHE, else fp8gemm_tune_cache.json)");
  cmd->add_option("--json", o.json, "write every decision as JSON (data/tables/make_default_table.py reads it)");
  cmd->add_option("--key-budget-ms", o.key_budget_ms, "time budget per key (default 100)");
  cmd->add_option("--run-budget-s", o.run_budget_s, "time budget of the run; later keys keep their default (0: none)");
  cmd->add_option("--bucket-samples", o.bucket_samples,
                  "M values below each bucket edge where the finalists are also timed (default 2)")
      ->check(CLI::Range(0, 8));
  cmd->add_flag("--lower-choice-at-first-sample,!--no-lower-choice-at-first-sample", o.lower_choice_at_first_sample,
                "time the lower bucket's choice at each bucket's lowest sample too (default on)");
  cmd->add_flag("--check-segment-ends,!--no-check-segment-ends", o.check_segment_ends,
                "time each sub-bucket challenger again at its segment's lowest M (default on)");
  cmd->add_flag("--adaptive-floor,!--no-adaptive-floor", o.adaptive_floor,
                "let cuBLASLt's heuristic, re-asked at each M, compete for every segment at its lowest M "
                "(needs the segment check; default on)");
  cmd->add_flag("--split-segments,!--no-split-segments", o.split_segments,
                "split a segment whose two ends each prefer another tactic where their times cross (bisection; "
                "needs the segment check; default off)");
  cmd->add_flag("--split-at-floor-switch,!--no-split-at-floor-switch", o.split_at_floor_switch,
                "where the adaptive floor wins a segment's lowest M and loses its top, split the segment where the "
                "heuristic's answer changes to its kernel at the top (default on)");
  cmd->add_flag("--floor-keeps-low-kernel,!--no-floor-keeps-low-kernel", o.floor_keeps_low_kernel,
                "where the adaptive floor takes a segment, the kernel it was timed as at the segment's lowest M "
                "runs up to its own reach wherever the heuristic answers another kernel there (default on)");
  cmd->add_flag("--samples-follow-edge,!--no-samples-follow-edge", o.samples_follow_edge,
                "a tie at a sampled M below the edge goes to the edge's choice, not the default (default off)");
  cmd->add_flag("--kept-floor-adapts,!--no-kept-floor-adapts", o.kept_floor_adapts,
                "a segment that kept the floor's fixed answer, unchecked at its lowest M, runs the adaptive floor "
                "(needs the adaptive floor; default on)");
  cmd->add_flag("--low-end-ties,!--no-low-end-ties", o.low_end_ties,
                "a tactic that tied with a segment's choice where it was timed competes at the segment's lowest M "
                "(needs the segment check; default off)");
  cmd->add_flag("--adaptive-floor-interior,!--no-adaptive-floor-interior", o.adaptive_floor_interior,
                "the adaptive floor competes at a segment's lowest M only where the heuristic's answers inside the "
                "segment are kernels timed at its ends (default off)");
  cmd->add_flag("--retime-in-noise,!--no-retime-in-noise", o.retime_in_noise,
                "a challenger held back only by a high noise floor is timed again with the default in a longer "
                "round, which decides (default on)");
  cmd->add_flag("--retime-close-calls,!--no-retime-close-calls", o.retime_close_calls,
                "with --retime-in-noise, at calls under 15 us: the choice and the fastest other tactic within 5% "
                "of it are timed again in the longer round, which decides (default off)");
  cmd->add_option("--min-replay-us", o.min_replay_us,
                  "replays of short calls last at least this long (more than 20 calls, at most 200); 0: 20 calls "
                  "(DESIGN's minimum)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100000.0));
  add_power_state_options(cmd, o.check_power_states, o.power_state_budget_s);
  cmd->add_flag("--retune", o.retune, "measure keys that are already in the cache again");
  cmd->callback([] { run_tune(o); });
});

}  // namespace
}  // namespace fp8gemm::cli
