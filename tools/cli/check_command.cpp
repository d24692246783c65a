// fp8gemm check: every tactic of every available backend on random data over a set of shapes,
// against the float64 reference, outputs poisoned before each call. Non-zero exit on failure.
#include <cstdio>
#include <iostream>
#include <limits>
#include <vector>

#include "fp8gemm/check.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/verify.h"
#include "tools/cli/command.h"
#include "tools/cli/options.h"
#include "tools/common/shapes.h"

namespace fp8gemm::cli {
namespace {

struct CheckOptions {
  std::vector<std::string> backends{"all"};
  std::string tactic_filter;
  std::vector<std::string> shapes;  // "N,K" each
  std::string m_spec;
  int64_t batch = 1;  // of the --shape problems (the built-in set mixes batches)
  uint64_t seed = 1;
  bool quiet = false;
  bool bias = false;  // every problem with a bias (the linear layer's epilogue)
};

// Built-in shapes: odd and tiny m, b > 1, every dtype pair and both out types, small enough that
// the float64 reference stays cheap; one K of 8192 at small m (tactics offered only from there:
// small_m's K pairs two a stage).
std::vector<Problem> default_problems() {
  struct S { int64_t b, m, n, k; };
  const S base[] = {{1, 1, 256, 512},   {1, 3, 1024, 4096}, {1, 17, 4096, 1024}, {1, 64, 1280, 2048},
                    {1, 255, 512, 2048}, {3, 33, 768, 1536}, {2, 128, 2048, 512}, {1, 1024, 1024, 1024},
                    {1, 5, 512, 8192}};
  std::vector<Problem> out;
  for (const S& s : base) {
    Problem p;
    p.batch = s.b, p.m = s.m, p.n = s.n, p.k = s.k;
    out.push_back(p);
  }
  const std::pair<DType, DType> pairs[] = {{DType::kE4M3, DType::kE4M3}, {DType::kE4M3, DType::kE5M2},
                                           {DType::kE5M2, DType::kE4M3}};
  for (auto [a, b] : pairs)
    for (DType o : {DType::kBF16, DType::kFP16}) {
      if (a == DType::kE4M3 && b == DType::kE4M3 && o == DType::kBF16) continue;  // covered above
      for (const S& s : {S{1, 17, 1024, 2048}, S{2, 96, 512, 1024}}) {
        Problem p;
        p.batch = s.b, p.m = s.m, p.n = s.n, p.k = s.k;
        p.a_type = a, p.b_type = b, p.out_type = o;
        out.push_back(p);
      }
    }
  return out;
}

std::vector<Problem> requested_problems(const CheckOptions& o) {
  if (o.shapes.empty() && o.m_spec.empty()) return default_problems();
  FP8GEMM_REQUIRE(!o.shapes.empty() && !o.m_spec.empty(), kInvalidArgument,
                  "check: give both --shape N,K and --m, or neither (built-in set)");
  const std::vector<int64_t> ms = parse_m_spec(o.m_spec);
  std::vector<Problem> out;
  for (const std::string& spec : o.shapes) {
    const NamedShape s = parse_shape(spec);
    for (int64_t m : ms)
      out.push_back(checked_problem(args_of(o.batch, m, s, ProblemTypes{}), "check",
                                    "--shape " + spec + " at M=" + std::to_string(m) + " of --m"));
  }
  return out;
}

void run_check(const CheckOptions& o) {
  // The arguments are checked before anything looks for a GPU, so typos fail fast anywhere.
  const std::vector<Problem> problems = requested_problems(o);
  const std::vector<std::string> selected = backends_of(o.backends);
  if (!have_gpu("check")) return;
  // Its own Context: a correctness sweep covers every plan a backend has, including cuDNN's
  // runtime-compiled ones, which the default Context does not list (each costs a compile).
  ContextOptions options;
  options.cudnn_runtime_compiled = true;
  Context ctx(options);
  std::cout << ctx.device().to_string() << "\n";
  size_t passed = 0, failed = 0;
  uint64_t seed = o.seed;
  for (const Problem& requested : problems) {
    // Validate like a real call would (dims, types) before any GPU work.
    BmmFp8Args args;
    args.batch = requested.batch, args.m = requested.m, args.n = requested.n, args.k = requested.k;
    args.a_type = requested.a_type, args.b_type = requested.b_type, args.out_type = requested.out_type;
    Problem p = validate_problem(args, ctx.device());
    p.bias = o.bias;
    VerifyCase vcase(p, seed++);
    for (Backend* b : ctx.backends()) {
      if (!backend_selected(selected, b->name()) || !b->available()) continue;
      std::vector<Tactic> tactics;
      try {
        tactics = b->tactics(p);
      } catch (const std::exception& e) {
        std::printf("FAIL %-44s %s: listing tactics threw: %s\n", p.to_string().c_str(), b->name().c_str(), e.what());
        ++failed;
        continue;
      }
      std::printf("%-44s %s: %zu tactics\n", p.to_string().c_str(), b->name().c_str(), tactics.size());
      for (const Tactic& t : tactics) {
        if (!o.tactic_filter.empty() && t.name().find(o.tactic_filter) == std::string::npos) continue;
        std::string result;
        bool ok = false;
        try {
          CheckResult r = vcase.run(ctx, t);
          ok = r.ok;
          result = r.to_string();
        } catch (const std::exception& e) {
          result = std::string("FAIL threw: ") + e.what();
        }
        ok ? ++passed : ++failed;
        if (!ok || !o.quiet) std::printf("%-44s %s  %s\n", p.to_string().c_str(), result.c_str(), t.name().c_str());
      }
    }
  }
  std::printf("check: %zu passed, %zu failed\n", passed, failed);
  if (passed + failed == 0) {
    std::printf("check: no tactic matched the filters\n");
    exit_code() = 1;
  }
  if (failed) exit_code() = 1;
}

const CommandRegistrar kRegister([](CLI::App& app) {
  static CheckOptions o;
  CLI::App* cmd = app.add_subcommand("check", "check every tactic against the float64 reference");
  add_backend_option(cmd, o.backends, "backends to check");
  cmd->add_option("--tactic", o.tactic_filter, "only tactics whose name contains this text");
  cmd->add_option("--shape", o.shapes, "N,K of a layer to check (repeatable); with --m, instead of the built-in set");
  add_m_option(cmd, o.m_spec);
  add_batch_option(cmd, o.batch, "batch of the --shape problems")->needs("--shape");
  cmd->add_option("--seed", o.seed, "random seed of the first problem")
      ->capture_default_str()
      ->check(integer_in(0, std::numeric_limits<int64_t>::max()));
  cmd->add_flag("--quiet", o.quiet, "print failures only");
  cmd->add_flag("--bias", o.bias, "every problem with a bias [n] (only backends with a bias epilogue list tactics)");
  cmd->callback([] { run_check(o); });
});

}  // namespace
}  // namespace fp8gemm::cli
