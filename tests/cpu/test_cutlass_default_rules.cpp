// CUTLASS's own default (cutlass_backend.cpp default_tactic): the generated rules on shapes no tune
// measured, falling through to vLLM's list where a rule's kernel is not built (the reduced build)
// or the rules stop (batch 3). The backend on a described H200: choosing needs no GPU.
#include <gtest/gtest.h>

#include "backends/cutlass/config.h"
#include "backends/cutlass/cutlass_backend.h"

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

Problem shape(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  return p;
}

bool built(const std::string& config) {
  const auto c = cutlass_backend::KernelConfig::parse(config);
  const cutlass_backend::ConfigRow* row = c ? cutlass_backend::find_row(c->kernel()) : nullptr;
  return row && cutlass_backend::row_is_built(*row);
}

TEST(CutlassDefaultRules, RulesOnUnseenShapesElseVllmsList) {
  const auto b = make_cutlass_backend(h200(), {});
  if (!b->available()) GTEST_SKIP() << b->available().reason;
  int by_rule = 0;
  for (const Problem& p : {shape(40, 6400, 5632), shape(100, 3328, 9728), shape(700, 11008, 4096), shape(3000, 6400, 5632),
                           shape(16, 2560, 2560)}) {
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
  EXPECT_EQ(b->default_rule(shape(40, 6400, 5632, 3)), "");
  EXPECT_TRUE(built(b->default_tactic(shape(40, 6400, 5632, 3)).config));
}

}  // namespace
}  // namespace fp8gemm
