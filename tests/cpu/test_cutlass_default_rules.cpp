// CUTLASS's own default (cutlass_backend.cpp default_tactic): the generated rules on shapes no tune
// measured, falling through to vLLM's list where a rule's kernel is not built (the reduced build)
// or the rules stop (batch 3). The backend on a described H200: choosing needs no GPU.
#include <gtest/gtest.h>

#include "backends/cutlass/config.h"
#include "backends/cutlass/cutlass_backend.h"
#include "problem_util.h"

namespace fp8gemm {
namespace {

DeviceInfo h200() {
  DeviceInfo d;
  d.name = "NVIDIA H200 (described)";
  d.sm_count = 132;
  d.cc_major = 9;
  d.smem_per_block_optin = 232448;
  return d;
}

using ::fp8gemm::testing::problem;

bool built(const std::string& config) {
  const auto c = cutlass_backend::KernelConfig::parse(config);
  const cutlass_backend::ConfigRow* row = c ? cutlass_backend::find_row(c->kernel()) : nullptr;
  return row && cutlass_backend::row_is_built(*row);
}

TEST(CutlassDefaultRules, RulesOnUnseenShapesElseVllmsList) {
  const auto b = make_cutlass_backend(h200(), {});
  if (!b->available()) GTEST_SKIP() << b->available().reason;
  int by_rule = 0;
  for (const Problem& p : {problem(40, 6400, 5632), problem(100, 3328, 9728), problem(700, 11008, 4096),
                           problem(3000, 6400, 5632), problem(16, 2560, 2560)}) {
    const Tactic t = b->default_tactic(p);
    EXPECT_TRUE(b->can_implement(p, t)) << p << " " << t.name();
    const std::string why = b->default_rule(p);
    if (!why.empty()) {
      ++by_rule;
      EXPECT_EQ(why.rfind("CUTLASS rule ", 0), 0u) << why;
      EXPECT_NE(why.find("-> " + t.config), std::string::npos) << why;
      EXPECT_NE(why.find("fitted on"), std::string::npos) << why;
    }
    // The first tactic listed is the default, whichever rule chose it.
    EXPECT_EQ(b->tactics(p).front(), t) << p;
  }
  // With every kernel built each of these shapes is a rule's; the reduced build keeps those whose
  // kernel it has.
  if (cutlass_backend::built_full_set()) EXPECT_EQ(by_rule, 5);
  // Batch 3 is beyond the tunes: vLLM's list, no rule.
  EXPECT_EQ(b->default_rule(problem(40, 6400, 5632, 3)), "");
  EXPECT_TRUE(built(b->default_tactic(problem(40, 6400, 5632, 3)).config));
}

}  // namespace
}  // namespace fp8gemm
