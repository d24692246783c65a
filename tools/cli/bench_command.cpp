// fp8gemm bench: times the cuBLASLt default (cuBLASLt's heuristic as torch._scaled_mm asks it:
// fp8gemm's floor, the reference of every ratio), `auto` and (with --tactics all) every tactic of
// every selected backend over model shapes and M values, as docs/design.md "Measuring" says; prints
// us | TFLOP/s | GB/s | % of roofline | x vs the cuBLASLt default per point, geomeans per M range,
// then auto against the fastest other tactic, timed again head to head.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "fp8gemm/check.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/tune.h"
#include "fp8gemm/measure.h"
#include "tools/cli/command.h"
#include "tools/cli/options.h"
#include "tools/common/confirm.h"
#include "tools/common/report.h"
#include "tools/common/files.h"
#include "tools/common/shapes.h"

namespace fp8gemm::cli {
namespace {

struct BenchOptions {
  ProblemOptions problems;
  std::vector<std::string> backends{"all"};
  std::string tactics = "default";
  std::vector<std::string> named;  // --add-tactic: timed at every point where they can run
  std::string csv, json;
  std::string layer;  // --layer: every tactic timed as the linear layer runs it
};

// How bench measures, the same in every run so that runs compare.
constexpr int kFullRoundReplays = 7;  // timed replays per candidate in the full round (median)
constexpr int kMaxFinalists = 8;      // candidates kept for the full round, fastest first
constexpr double kPruneRatio = 1.3;   // the short round drops candidates slower than this x the best
// max|out - default| / max|default| a finalist may show and still be a "best": two correct
// tactics differ by accumulation order and bf16/fp16 rounding, well under 1%; a wrong kernel is
// off by ~100%.
constexpr double kVerifyTolerance = 0.02;

constexpr const char* kDefaultLabel = "cublaslt_default";

struct Job {
  NamedShape shape;
  int64_t m;
};

std::vector<Job> jobs_of(const BenchOptions& o, const ProblemTypes& types) {
  const std::vector<NamedShape> layers = layers_of(o.problems, "bench");
  const std::vector<int64_t> ms = parse_m_spec(o.problems.m_spec);
  std::vector<Job> jobs;
  for (const NamedShape& s : layers)
    for (int64_t m : ms) {
      with_layer(checked_problem(args_of(o.problems.batch, m, s, types), "bench",
                                 "layer " + s.name + " at M=" + std::to_string(m) + " of --m"),
                 o.layer);
      jobs.push_back({s, m});
    }
  return jobs;
}

// The --add-tactic tactics at one point: each as Context::choose resolves its name for `p`, or
// (no tactic) the reason it cannot run `p`.
struct NamedTactic {
  std::optional<Tactic> tactic;
  std::string why_not;
};
std::vector<NamedTactic> named_tactics(Context& ctx, const BenchOptions& o, const Problem& p) {
  std::vector<NamedTactic> out(o.named.size());
  for (size_t n = 0; n < o.named.size(); ++n) {
    try {
      out[n].tactic = ctx.choose(p, o.named[n]);  // the name as given: checked with can_implement
    } catch (const std::exception& e) {
      out[n].why_not = e.what();
    }
  }
  return out;
}

// The candidates of one point: [cuBLASLt default, auto and untuned auto (each if different), the
// named tactics that can run p, the rest]; `protect` is set to how many lead the list (they all
// reach the full round).
// Backends that cannot list tactics for `p` are reported in `notes` and skipped, never fatal.
std::vector<Tactic> candidates_for(Context& ctx, const BenchOptions& o, const std::vector<std::string>& selected,
                                   const Problem& p, const Tactic& reference,
                                   const Tactic& auto_choice, const Tactic& untuned_auto,
                                   const std::vector<NamedTactic>& named,
                                   std::vector<std::string>& notes, int& protect) {
  std::vector<Tactic> out{reference};
  auto add = [&](const Tactic& t) {
    for (const Tactic& have : out)
      if (have == t) return;
    out.push_back(t);
  };
  add(auto_choice);
  add(untuned_auto);
  for (const NamedTactic& t : named)
    if (t.tactic) add(*t.tactic);
  protect = int(out.size());
  for (Backend* b : ctx.backends()) {
    if (!backend_selected(selected, b->name()) || !b->available()) continue;
    try {
      if (o.tactics == "all") {
        for (const Tactic& t : b->tactics(p)) add(t);
      } else {
        add(b->default_tactic(p));
      }
    } catch (const std::exception& e) {
      notes.push_back(b->name() + " skipped: " + e.what());
    }
  }
  return out;
}

// The fastest ok timing among `timings` whose backend is `backend` ("" = any), or nullptr.
const Timing* fastest(const std::vector<const Timing*>& timings, const std::string& backend) {
  const Timing* best = nullptr;
  for (const Timing* t : timings)
    if (t->ok && (backend.empty() || t->tactic.backend == backend) && (!best || t->median_us < best->median_us))
      best = t;
  return best;
}

// The tactics of the ok `timings`, fastest first (BenchPoint::contenders).
std::vector<std::string> names_fastest_first(std::vector<const Timing*> timings) {
  const auto unusable = [](const Timing* t) { return !t->ok || !(t->median_us > 0); };
  timings.erase(std::remove_if(timings.begin(), timings.end(), unusable), timings.end());
  std::stable_sort(timings.begin(), timings.end(),
                   [](const Timing* x, const Timing* y) { return x->median_us < y->median_us; });
  std::vector<std::string> names;
  for (const Timing* t : timings) names.push_back(t->tactic.name());
  return names;
}

BenchEntry entry_of(const std::string& label, const Timing* t, const std::string& note = "") {
  BenchEntry e;
  e.label = label;
  e.note = note;
  if (!t) return e;
  e.tactic = t->tactic.name();
  e.ok = t->ok;
  e.us = t->median_us;
  if (!t->ok) e.note = t->error;
  return e;
}

BenchPoint bench_point(Context& ctx, GraphTimer& timer, const BenchOptions& o, const std::vector<std::string>& selected,
                       const Job& job, const Problem& p) {
  BenchPoint point;
  point.shape = job.shape.name;
  point.problem = p;
  // The reference is the floor, cuBLASLt's heuristic asked as torch._scaled_mm asks it, never a
  // tuned or table entry: ctx.choose(p, "cublaslt") would answer with the selector's cuBLASLt
  // entry where there is one.
  Backend* cublaslt = ctx.backend("cublaslt");
  FP8GEMM_REQUIRE(cublaslt && cublaslt->available(), kUnsupported,
                  "bench: the cuBLASLt backend, the reference of every ratio, is not available");
  const Tactic reference = cublaslt->default_tactic(p);
  const Tactic auto_choice = ctx.choose(p, "auto");
  const Tactic untuned_auto = untuned_choice(ctx, p);  // what auto runs without the tuned cache
  const std::vector<NamedTactic> named = named_tactics(ctx, o, p);
  int protect = 1;
  const std::vector<Tactic> candidates =
      candidates_for(ctx, o, selected, p, reference, auto_choice, untuned_auto, named, point.notes, protect);

  RoundOptions rounds;
  rounds.prune_ratio = kPruneRatio;
  rounds.max_finalists = kMaxFinalists;
  rounds.protected_candidates = protect;  // auto and the named tactics always reach the full round
  // Every backend's "_best" column is then a full-round time, in the same round-robin as auto.
  rounds.best_of_each_backend = true;
  rounds.full_round.replays = kFullRoundReplays;
  const RoundResult r = measure_in_rounds(timer, p, candidates, rounds);
  point.noise = r.noise;
  point.timings.push_back(r.reference);
  point.timings.insert(point.timings.end(), r.finalists.begin(), r.finalists.end());
  point.timings.insert(point.timings.end(), r.pruned.begin(), r.pruned.end());

  // Only finalists whose output matches the default's on the same inputs may be a "best".
  std::vector<const Timing*> trusted{&r.reference};
  std::vector<bool> verified(r.finalists.size(), true);
  if (r.reference.ok && !r.finalists.empty()) {
    std::vector<Tactic> finalist_tactics;
    for (const Timing& t : r.finalists) finalist_tactics.push_back(t.tactic);
    const std::vector<double> diff = timer.compare_outputs(p, reference, finalist_tactics);
    for (size_t i = 0; i < diff.size(); ++i)
      if (!(diff[i] <= kVerifyTolerance)) {
        verified[i] = false;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.3g", diff[i]);
        point.notes.push_back(r.finalists[i].tactic.name() + " output differs from the default's by " + buf +
                              " of max|out|: excluded");
      }
  }
  for (size_t i = 0; i < r.finalists.size(); ++i)
    if (verified[i]) trusted.push_back(&r.finalists[i]);
  point.contenders = names_fastest_first(trusted);

  point.entries.push_back(entry_of(kDefaultLabel, &r.reference));
  point.entries.push_back(entry_of("cublaslt_best", fastest(trusted, "cublaslt")));
  for (Backend* b : ctx.backends()) {
    const std::string name = b->name();
    if (name == "cublaslt" || !backend_selected(selected, name) || !b->available()) continue;
    const Timing* best = fastest(trusted, name);
    if (best) {
      point.entries.push_back(entry_of(name + "_best", best));
      continue;
    }
    // None in the full round: show its best short-round time, so the table says how far off it was.
    std::vector<const Timing*> short_round;
    for (const Timing& t : r.pruned) short_round.push_back(&t);
    const Timing* pruned_best = fastest(short_round, name);
    if (pruned_best) {
      point.entries.push_back(entry_of(name + "_best", pruned_best, "short round only: pruned"));
    } else {
      std::string why = "n/a (no tactic for this problem)";
      for (const Timing& t : r.pruned)
        if (t.tactic.backend == name && !t.ok) {
          why = "failed: " + t.error;
          break;
        }
      point.entries.push_back(entry_of(name + "_best", nullptr, why));
    }
  }
  // The protected candidates' rows (auto, --add-tactic): their own full-round timing, flagged
  // when their output failed the check.
  auto timing_of = [&](const Tactic& t) -> const Timing* {
    for (const Timing& x : point.timings)
      if (x.tactic == t) return &x;
    return nullptr;
  };
  auto flag_wrong_output = [&](BenchEntry& e, const Tactic& t) {
    for (size_t i = 0; i < r.finalists.size(); ++i)
      if (!verified[i] && r.finalists[i].tactic == t) e.note = "WRONG OUTPUT";
  };
  // auto: the reference itself, or its own full-round timing (it is protected from pruning).
  const Timing* auto_timing = timing_of(auto_choice);
  BenchEntry auto_entry = entry_of("auto", auto_timing, auto_timing ? "" : "not measured");
  flag_wrong_output(auto_entry, auto_choice);
  point.entries.push_back(auto_entry);
  // untuned auto: the default chain's answer or the floor, the tuned-never-slower reference.
  const Timing* untuned_timing = timing_of(untuned_auto);
  BenchEntry untuned_entry = entry_of(kUntunedAutoLabel, untuned_timing, untuned_timing ? "" : "not measured");
  flag_wrong_output(untuned_entry, untuned_auto);
  point.entries.push_back(untuned_entry);
  // --add-tactic: one entry each (named_1, named_2, ... in the order given), timed or why not.
  for (size_t n = 0; n < named.size(); ++n) {
    const std::string label = "named_" + std::to_string(n + 1);
    const Timing* timing = named[n].tactic ? timing_of(*named[n].tactic) : nullptr;
    if (!timing) {
      BenchEntry e = entry_of(label, nullptr, "cannot run here: " + named[n].why_not);
      e.tactic = o.named[n];
      point.entries.push_back(e);
      continue;
    }
    BenchEntry e = entry_of(label, timing);
    flag_wrong_output(e, *named[n].tactic);
    point.entries.push_back(e);
  }
  return point;
}

// The head-to-head rounds run after every point's first pass, not between them: a long round of
// heavy calls leaves the GPU at its power cap, and the next point's first pass would start there.
// They run lightest first (confirm_order) for the same reason, as kConfirmRounds passes over the
// points, each alternating which tactic holds the round's ends, and a point's verdict is its
// median round: a point's rounds then follow different neighbours' rounds apart in time, not one
// another, so they do not share one power state.
void time_auto_again(Timer& timer, std::vector<BenchPoint>& points) {
  std::cout << "\nauto against the fastest other tactic and up to " << kConfirmOpponents - 1 << " more within "
            << int(100 * kConfirmOpponentMargin + 0.5) << "% of it, timed again head to head ([auto, best..., "
            << "best..., auto], " << kConfirmReplays << " replays of >= " << kLongReplayUs << " us; lightest first";
  if (kConfirmRounds > 1)
    std::cout << "; " << kConfirmRounds << " passes over the points, [best..., auto, auto, best...] in every second "
              << "one, the median round's result";
  std::cout << "):\n";
  const std::vector<size_t> order = confirm_order(points);
  std::vector<std::vector<AutoConfirm>> rounds(points.size());
  for (int r = 0; r < kConfirmRounds; ++r) {
    for (size_t i = 0; i < order.size(); ++i) {
      BenchPoint& pt = points[order[i]];
      std::fprintf(stderr, "[confirm %d/%d %zu/%zu] %s M=%lld\n", r + 1, kConfirmRounds, i + 1, points.size(),
                   pt.shape.c_str(), (long long)pt.problem.m);
      const BenchEntry* auto_entry = find_entry(pt, "auto");
      if (!auto_entry || !auto_entry->ok) continue;
      rounds[order[i]].push_back(confirm_auto(timer, pt, r % 2 == 1));
    }
  }
  for (size_t i : order) {
    if (rounds[i].empty()) continue;
    points[i].confirm = median_round(rounds[i]);
    print_confirm_line(std::cout, points[i]);
  }
  std::cout.flush();
}

void run_bench(const BenchOptions& o) {
  // Everything that can be checked without a GPU is checked first, so typos fail fast anywhere.
  const ProblemTypes types = types_of(o.problems.dtype, o.problems.out_dtype);
  const std::vector<Job> jobs = jobs_of(o, types);
  const std::vector<std::string> selected = backends_of(o.backends);
  for (const std::string& name : o.named) {
    const size_t colon = name.find(':');
    FP8GEMM_REQUIRE(colon != std::string::npos && colon > 0 && colon + 1 < name.size(), kInvalidArgument,
                    "--add-tactic: '", name,
                    "' is not a tactic name (BACKEND:CONFIG, e.g. as `fp8gemm explain` prints them)");
    const std::string backend = Tactic::parse(name).backend;
    const std::string canonical = canonical_backend_name(backend);
    FP8GEMM_REQUIRE(canonical != "auto", kInvalidArgument, "--add-tactic: '", name,
                    "' names no backend: auto is not one (cublaslt, cutlass, small_m or cudnn)");
    FP8GEMM_REQUIRE(canonical == backend, kInvalidArgument, "--add-tactic: '", name, "' spells its backend '", backend,
                    "'; tactic names use '", canonical, ":'");
  }
  require_distinct_files({{"--csv", o.csv}, {"--json", o.json}});
  if (!have_gpu("bench")) return;
  const auto start = std::chrono::steady_clock::now();
  Context& ctx = default_context();
  std::cout << ctx.device().to_string() << "\n";
  for (Backend* b : ctx.backends())
    if (backend_selected(selected, b->name()) && !b->available())
      std::cout << "backend " << b->name() << " unavailable: " << b->available().reason << "\n";
  std::cout << "timing: CUDA-graph replays over rotating weight copies (>= 2x L2), short round 1 replay, "
            << "full round " << kFullRoundReplays << " replays, <= " << kMaxFinalists << " finalists; "
            << "calls >= 100 us timed after 20-60 ms under load (power cap)\n";

  GraphTimer timer(ctx, GraphTimerOptions{});
  std::vector<BenchPoint> points;
  int failures = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    std::fprintf(stderr, "[%zu/%zu] %s M=%lld N=%lld K=%lld\n", i + 1, jobs.size(), job.shape.name.c_str(),
                 (long long)job.m, (long long)job.shape.n, (long long)job.shape.k);
    try {
      const Problem p =
          with_layer(validate_problem(args_of(o.problems.batch, job.m, job.shape, types), ctx.device()), o.layer);
      points.push_back(bench_point(ctx, timer, o, selected, job, p));
      print_point(std::cout, points.back(), points.size() == 1);
      std::cout.flush();
    } catch (const std::exception& e) {
      ++failures;
      std::printf("%s M=%lld: FAILED: %s\n", job.shape.name.c_str(), (long long)job.m, e.what());
    }
  }
  if (!points.empty()) time_auto_again(timer, points);
  std::cout << "\n";
  print_geomeans(std::cout, points);
  print_confirm_summary(std::cout, points);
  print_tuned_slower(std::cout, points);
  // An --add-tactic that ran nowhere is an error: most likely a typo in its configuration.
  for (size_t n = 0; n < o.named.size(); ++n) {
    const std::string label = "named_" + std::to_string(n + 1);
    bool ran = false;
    for (const BenchPoint& pt : points)
      for (const BenchEntry& e : pt.entries) ran = ran || (e.label == label && e.ok);
    if (!ran && !points.empty()) {
      ++failures;
      std::printf("bench: --add-tactic %s ran at no point (see the %s rows for why)\n", o.named[n].c_str(),
                  label.c_str());
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("bench: %zu points, %d failed, %.1f s\n", points.size(), failures, seconds);
  // Each file is tried even when the other fails; a failed write fails the run.
  auto write = [&](const std::string& option, const std::string& path, auto writer) {
    if (path.empty()) return;
    std::ostringstream text;
    writer(text, points);
    try {
      write_file(option, path, text.str());
      std::printf("wrote %s\n", path.c_str());
    } catch (const Error& e) {
      ++failures;
      std::fprintf(stderr, "%s\n", e.what());
    }
  };
  write("--csv", o.csv, write_csv);
  write("--json", o.json, write_json);
  if (failures) exit_code() = 1;
}

const CommandRegistrar kRegister([](CLI::App& app) {
  static BenchOptions o;
  CLI::App* cmd = app.add_subcommand("bench", "time backends and tactics over model shapes against cublaslt_default, "
                                     "cuBLASLt's heuristic as torch._scaled_mm asks it (docs/design.md Measuring)");
  add_problem_options(cmd, o.problems);
  add_backend_option(cmd, o.backends, "backends whose tactics compete");
  cmd->add_option("--tactics", o.tactics, "default: each backend's default; all: every tactic")
      ->check(CLI::IsMember({"default", "all"}))
      ->capture_default_str();
  cmd->add_option("--add-tactic", o.named,
                  "also time this tactic (its canonical name, as `explain` prints it; repeatable) at every point "
                  "where it can run; it always reaches the full round and gets its own row, named_1, named_2, ...");
  cmd->add_option("--csv", o.csv, "write every point to this CSV file")->check(writable_file());
  cmd->add_option("--json", o.json, "write every point and every candidate's timing to this JSON file")
      ->check(writable_file());
  add_layer_option(cmd, o.layer);
  cmd->callback([] { run_bench(o); });
});

}  // namespace
}  // namespace fp8gemm::cli
