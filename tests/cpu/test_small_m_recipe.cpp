// small_m recipes (small_m_recipe.h) and the default rules built on them: every candidate of every
// problem of a grid has a recipe that gives it back, names round-trip, and the generated rules
// choose a rule's recipe (not the fill rule) on shapes no tune measured. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/small_m/small_m_config.h"
#include "backends/small_m/small_m_layout.h"
#include "backends/small_m/small_m_recipe.h"
#include "fp8gemm/error.h"
#include "problem_util.h"

namespace fp8gemm::small_m {
namespace {

using ::fp8gemm::testing::problem;

// config_for(p, recipe_of(p, c)) == c for every candidate c: over N and K from small to large,
// odd multiples of 16 among them, M across the K-pair and the aonce limits, batches 1..3 and the
// SM counts of H20, H100 PCIe and H200.
TEST(SmallMRecipe, EveryCandidateHasARecipeThatGivesItBack) {
  const int64_t ns[] = {1024, 1136, 2304, 4096, 5120, 6144, 14624, 28672, 41840};
  const int64_t ks[] = {1024, 1456, 2576, 4096, 8368, 16384};
  int checked = 0;
  for (int sms : {78, 114, 132})
    for (int64_t n : ns)
      for (int64_t k : ks)
        for (int64_t m : {1, 3, 16, 17, 32})
          for (int64_t batch : {1, 2, 3}) {
            const Problem p = problem(m, n, k, batch);
            for (const Config& c : candidate_configs(p, sms, 90)) {
              const std::vector<Recipe> all = recipes_of(p, c, sms);
              ASSERT_FALSE(all.empty()) << p << " " << c.to_string();
              EXPECT_EQ(recipe_of(p, c, sms), all.front());
              for (const Recipe& r : all) {
                const std::optional<Config> back = config_for(p, r, sms);
                ASSERT_TRUE(back) << p << " " << r.to_string();
                EXPECT_EQ(*back, c) << p << " " << r.to_string() << " gave " << back->to_string();
                EXPECT_EQ(parse_recipe(r.to_string()), r) << r.to_string();
              }
              ++checked;
            }
          }
  EXPECT_GT(checked, 10000);
}

// Recipes follow the problem: one recipe names the same kind of kernel on every shape.
TEST(SmallMRecipe, ARecipeFollowsTheShape) {
  const Recipe fitted = parse_recipe("cp,rows=fit1,split=1,ring=1sm,pdl=1,kblocks=4");
  // 5120 rows over 132 SMs: 39 rows a block; 8192: 63.
  EXPECT_EQ(config_for(problem(1, 5120, 27648), fitted, 132)->rows, 39);
  EXPECT_EQ(config_for(problem(1, 8192, 7392), fitted, 132)->rows, 63);
  EXPECT_EQ(config_for(problem(1, 8192, 7392), fitted, 114)->rows, 72);
  // 1024 rows over 132 SMs would be 8 a block: no fitted rows, no config.
  EXPECT_FALSE(config_for(problem(1, 1024, 4096), fitted, 132));
  const Recipe split = parse_recipe("cp,rows=64,split=fill1,ring=2sm,pdl=1");
  // 2048 rows: 32 tiles of 64, so about 4 splits reach the SMs; 16384: 256 tiles need none.
  EXPECT_EQ(config_for(problem(4, 2048, 8192), split, 132)->splitk, 5);
  EXPECT_EQ(config_for(problem(4, 16384, 8192), split, 132)->splitk, 1);
  const Config c = *config_for(problem(4, 2048, 8192), split, 132);
  EXPECT_EQ(c.stages, deepest_ring(problem(4, 2048, 8192), c, 2));
  EXPECT_EQ(c.family, Family::kCpAsyncRing);
}

TEST(SmallMRecipe, NamesRoundTripAndBadOnesSayTheRule) {
  for (const char* text : {"tma,rows=64,split=fill2,ring=3sm-1,pdl=2,early=4", "aonce,rows=32,split=1,ring=2sm,pdl=1,kblocks=2",
                           "persist=2,rows=128,split=util0,ring=3sm,pdl=1", "cp,rows=109,split=within3,ring=6,pdl=1"})
    EXPECT_EQ(parse_recipe(text).to_string(), text);
  for (const char* bad : {"", "wgmma,rows=64", "cp,rows=64,split=1,ring=2sm", "cp,pdl=1,rows=64,split=1,ring=2sm",
                          "cp,rows=64,split=one,ring=2sm,pdl=1", "cp,rows=64,split=1,ring=2sm,pdl=3"}) {
    try {
      parse_recipe(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("small_m recipe"), std::string::npos) << e.what();
    }
  }
}

// Shapes no data file has: the generated rules pick a rule's recipe, a candidate, that is not the
// fill rule's config, and say which rule.
TEST(SmallMDefaultRules, ChooseARulesRecipeOnShapesNoTuneMeasured) {
  const Problem unseen[] = {problem(1, 6400, 5632), problem(8, 6400, 5632), problem(4, 11008, 4096),
                            problem(16, 3328, 9728), problem(2, 20480, 6144)};
  for (const Problem& p : unseen) {
    const Config c = default_config(p, 132, 90);
    const auto cands = candidate_configs(p, 132, 90);
    EXPECT_NE(std::find(cands.begin(), cands.end(), c), cands.end()) << p << " " << c.to_string();
    EXPECT_NE(c, fill_config(p, 132, 90)) << p;
    const std::string why = default_rule(p, 132, 90);
    EXPECT_EQ(why.rfind("small_m rule ", 0), 0u) << why;
    EXPECT_NE(why.find("fitted on"), std::string::npos) << why;
  }
}

// Where no rule covers the shape (batch 16: the data measured batches 1, 2, 4 and 8), the fill
// rule, and no rule to name.
TEST(SmallMDefaultRules, FillRuleOutsideTheRules) {
  const Problem p = problem(4, 6400, 5632, 16);
  EXPECT_EQ(default_config(p, 132, 90), fill_config(p, 132, 90));
  EXPECT_EQ(default_rule(p, 132, 90), "");
  EXPECT_THROW(default_config(problem(64, 4096, 4096), 132, 90), Error);  // m > 32: no small_m kernel
}

}  // namespace
}  // namespace fp8gemm::small_m
