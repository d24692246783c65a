// fp8gemm check: every tactic of every available backend on random data over a set of shapes,
// against the float64 reference, outputs poisoned before each call. Non-zero exit on failure.
#include <cstdio>
#include <iostream>
#include <vector>

#include "core/cuda_check.h"
#include "core/validate.h"
#include "fp8gemm/fp8gemm.h"
#include "measure/verify.h"
#include "tools/cli/command.h"

namespace fp8gemm::cli {
namespace {

struct CheckOptions {
  std::vector<std::string> backends{"all"};
  std::string tactic_filter;
  std::vector<std::pair<int64_t, int64_t>> shapes;  // (n, k)
  std::vector<int64_t> ms;
  int64_t batch = 0;  // 0: the built-in mix
  uint64_t seed = 1;
  bool quiet = false;
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
  if (o.shapes.empty() && o.ms.empty()) return default_problems();
  FP8GEMM_REQUIRE(!o.shapes.empty() && !o.ms.empty(), kInvalidArgument,
                  "check: give both --shape N,K and --m, or neither (built-in set)");
  std::vector<Problem> out;
  for (auto [n, k] : o.shapes)
    for (int64_t m : o.ms) {
      Problem p;
      p.batch = o.batch ? o.batch : 1, p.m = m, p.n = n, p.k = k;
      out.push_back(p);
    }
  return out;
}

bool backend_selected(const CheckOptions& o, const std::string& name) {
  for (const auto& b : o.backends)
    if (b == "all" || canonical_backend_name(b) == name) return true;
  return false;
}

void run_check(const CheckOptions& o) {
  if (device_count() == 0) {
    std::cerr << "fp8gemm check needs a GPU: " << no_device_reason() << "\n";
    exit_code() = 2;
    return;
  }
  // Its own Context: a correctness sweep covers every plan a backend has, including cuDNN's
  // runtime-compiled ones, which the default Context does not list (they cost ~0.4 s each).
  ContextOptions options;
  options.cudnn_runtime_compiled = true;
  Context ctx(options);
  std::cout << ctx.device().to_string() << "\n";
  size_t passed = 0, failed = 0;
  uint64_t seed = o.seed;
  for (const Problem& requested : requested_problems(o)) {
    // Validate like a real call would (dims, types) before any GPU work.
    BmmFp8Args args;
    args.batch = requested.batch, args.m = requested.m, args.n = requested.n, args.k = requested.k;
    args.a_type = requested.a_type, args.b_type = requested.b_type, args.out_type = requested.out_type;
    const Problem p = validate_problem(args, ctx.device());
    VerifyCase vcase(p, seed++);
    for (Backend* b : ctx.backends()) {
      if (!backend_selected(o, b->name()) || !b->available()) continue;
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
  cmd->add_option("--backend", o.backends, "backends to check (all, cublaslt, cutlass, small_m, cudnn)")->delimiter(',');
  cmd->add_option("--tactic", o.tactic_filter, "only tactics whose name contains this text");
  cmd->add_option("--shape", o.shapes, "N,K of a shape to check (repeatable); needs --m")->delimiter(',');
  cmd->add_option("--m", o.ms, "M values (comma-separated)")->delimiter(',');
  cmd->add_option("--batch", o.batch, "batch for --shape problems (default 1)");
  cmd->add_option("--seed", o.seed, "random seed of the first problem");
  cmd->add_flag("--quiet", o.quiet, "print failures only");
  cmd->callback([] { run_check(o); });
});

}  // namespace
}  // namespace fp8gemm::cli
