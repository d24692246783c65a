// The ranker of untuned `auto` (tune/ranker.h): the generated Hopper model scores the problems its
// generator scored the same; tactic geometry from real cuBLASLt and CUTLASS names; the chain hands
// a "ranker" rule's box to it, and shapes no data file has get a candidate where it scores lower.
// Fake backends with real tactic names, no GPU.
#include <gtest/gtest.h>

#include "backends/cublaslt/algo_name.h"
#include "backends/cutlass/config_shape.h"
#include "test_tune_fakes.h"
#include "tune/tuner.h"

namespace fp8gemm::testing {
namespace {

// The geometry every backend of this build gives a real cuBLASLt or CUTLASS name.
std::optional<TacticShape> real_shape(const Problem& p, const Tactic& t) {
  if (t.backend == "cublaslt") return cublaslt::shape_at(cublaslt::parse_config(t.config), p.m);
  if (t.backend == "cutlass") {
    const auto c = cutlass_backend::KernelConfig::parse(t.config);
    if (c) return cutlass_backend::shape_of(*c);
  }
  return std::nullopt;
}

// A fake that runs every config of its own except `refused`, and describes real names.
struct RealNamesBackend : FakeBackend {
  using FakeBackend::FakeBackend;
  std::set<std::string> refused;
  Verdict can_implement(const Problem&, const Tactic& t) override {
    if (t.backend != name()) return Verdict::no("not mine");
    return refused.count(t.config) ? Verdict::no("fake: refused") : Verdict::yes();
  }
  std::optional<TacticShape> tactic_shape(const Problem& p, const Tactic& t) override {
    return t.backend == name() ? real_shape(p, t) : std::nullopt;
  }
};

Problem shape(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  Problem p = problem(m, n, k);
  p.batch = batch;
  return p;
}

constexpr const char* kFloor128x256 =
    "algo=66,tile=128x256,stages=128xauto,splitk=1,red=0,swizzle=0,custom=6,inner=0,cluster=1x2x1,fast_accum=1";

TEST(Ranker, GeometryOfRealNames) {
  const Problem p = shape(300, 8192, 4096);
  // cuBLASLt's tile rows run along N; a fitted tile's height is M split in parts, rounded up to 8.
  const auto fitted = real_shape(p, Tactic::parse("cublaslt:algo=66,tile=64xM/2,stages=128xauto,splitk=1,red=0,"
                                                   "swizzle=0,custom=3,inner=0,cluster=1x2x1,fast_accum=1"));
  ASSERT_TRUE(fitted);
  EXPECT_EQ(fitted->tile_n, 64);
  EXPECT_EQ(fitted->tile_m, 152);
  EXPECT_EQ(fitted->tile_k, 128);
  EXPECT_EQ(fitted->cluster_n, 1);
  EXPECT_EQ(fitted->cluster_m, 2);
  EXPECT_EQ(fitted->fitted_parts, 2);
  EXPECT_EQ(fitted->custom, 3);
  EXPECT_EQ(fitted->schedule, -1);
  // CUTLASS swapped: the kernel's M side (64) runs along N, its cluster too.
  const auto swapped = real_shape(p, Tactic::parse("cutlass:sm90_pingpong_64x32x256_c2x1x1_swap_pdl"));
  ASSERT_TRUE(swapped);
  EXPECT_EQ(swapped->tile_n, 64);
  EXPECT_EQ(swapped->tile_m, 32);
  EXPECT_EQ(swapped->tile_k, 256);
  EXPECT_EQ(swapped->cluster_n, 2);
  EXPECT_EQ(swapped->cluster_m, 1);
  EXPECT_TRUE(swapped->swap_ab && swapped->pdl);
  EXPECT_EQ(swapped->schedule, 0);
  EXPECT_EQ(swapped->custom, -1);
  const auto coop = real_shape(p, Tactic::parse("cutlass:sm90_cooperative_128x256x128_c2x1x1"));
  ASSERT_TRUE(coop);
  EXPECT_EQ(coop->tile_m, 128);
  EXPECT_EQ(coop->tile_n, 256);
  EXPECT_EQ(coop->cluster_m, 2);
  EXPECT_EQ(coop->schedule, 1);
}

// The C++ features and walk reproduce the generator's scores (data/tables/default_ranker.py
// wrote them into the table), so the model runs as it was fitted.
TEST(Ranker, GeneratedHopperModelScoresAsItsGenerator) {
  const tuning::RankerModel& model = tuning::sm90_ranker();
  ASSERT_EQ(model.features.size(), tuning::kRankerFeatures.size());
  for (size_t i = 0; i < model.features.size(); ++i) EXPECT_STREQ(model.features[i], tuning::kRankerFeatures[i]);
  EXPECT_EQ(tuning::ranker(90), &model);
  EXPECT_EQ(tuning::ranker(100), nullptr);
  ASSERT_FALSE(model.checks.empty());
  for (const tuning::RankerCheck& c : model.checks) {
    const Problem p = shape(c.m, c.n, c.k, c.batch);
    const Tactic t = Tactic::parse(c.tactic), floor = Tactic::parse(c.floor);
    const auto ts = real_shape(p, t), fs = real_shape(p, floor);
    ASSERT_TRUE(ts && fs) << c.tactic;
    const tuning::RankerFeatures x = tuning::ranker_features(p, *ts, t.backend, *fs, t == floor, model.sms);
    EXPECT_EQ(tuning::ranker_score(model, x), c.score) << p << " " << c.tactic;
  }
  // The ranges tile M without gaps, each with candidates that parse.
  for (size_t i = 0; i < model.ranges.size(); ++i) {
    if (i > 0) EXPECT_EQ(model.ranges[i].m_lo, model.ranges[i - 1].m_hi + 1);
    EXPECT_FALSE(model.ranges[i].tactics.empty());
    for (const char* name : model.ranges[i].tactics) EXPECT_TRUE(real_shape(shape(model.ranges[i].m_lo, 4096, 4096),
                                                                            Tactic::parse(name))) << name;
  }
}

struct RankerChainTest : ::testing::Test {
  RealNamesBackend cublaslt{"cublaslt", {}, kFloor128x256};
  RealNamesBackend cutlass{"cutlass", {}, "sm90_pingpong_128x128x128_c1x1x1"};
  std::vector<Backend*> backends{&cublaslt, &cutlass};
  std::vector<tuning::SelectorRule> rules{{ShapeBox().m(33, 4096).batch(1, 8), "ranker", "the ranker"}};
  tuning::DefaultChain chain{nullptr, &rules, 132, &tuning::sm90_ranker()};
};

// The chain asks the ranker inside its rule's box; the ranker's answer, floor or not, is final, and
// `why` gives the scores.
TEST_F(RankerChainTest, ChainHandsTheBoxToTheRanker) {
  std::string why;
  const std::optional<Tactic> t = tuning::chain_choice(backends, chain, shape(1500, 12800, 4096), &why);
  EXPECT_NE(why.find("rule 0 (m 33..4096, batch 1..8) -> ranker (the ranker); scores"), std::string::npos) << why;
  EXPECT_NE(why.find("floor "), std::string::npos) << why;
  if (t) EXPECT_EQ(why.rfind("rule 0", 0), 0u) << why;
  else EXPECT_EQ(why.rfind("floor: rule 0", 0), 0u) << why;
  // A candidate that cannot run is not scored; with none runnable the floor runs.
  for (const tuning::RankerRange& r : tuning::sm90_ranker().ranges)
    for (const char* name : r.tactics) {
      const Tactic c = Tactic::parse(name);
      (c.backend == "cublaslt" ? cublaslt : cutlass).refused.insert(c.config);
    }
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(1500, 12800, 4096), &why), std::nullopt);
  EXPECT_NE(why.find("cannot run"), std::string::npos) << why;
  // Outside the box, or without a model, the rule is not there: the floor.
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(16, 12800, 4096), &why), std::nullopt);
  EXPECT_EQ(why.rfind("floor: no default rule covers", 0), 0u) << why;
  chain.ranker = nullptr;
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(1500, 12800, 4096), &why), std::nullopt);
  EXPECT_EQ(why.rfind("floor: no default rule covers", 0), 0u) << why;
}

// A floor the ranker cannot describe (another backend's, or an unknown tile) keeps the floor.
TEST_F(RankerChainTest, UndescribedFloorKeepsTheFloor) {
  FakeBackend plain{"cublaslt", {}, "heur"};
  std::vector<Backend*> others{&plain, &cutlass};
  std::string why;
  EXPECT_EQ(tuning::chain_choice(others, chain, shape(300, 12800, 4096), &why), std::nullopt);
  EXPECT_NE(why.find("the floor's geometry is unknown (cublaslt:heur)"), std::string::npos) << why;
}

// The generated Hopper rules and model on shapes no data file has: across M from 33 to 4096 the
// ranker runs a candidate somewhere (it is not the floor everywhere), and never throws.
TEST_F(RankerChainTest, GeneratedModelChoosesOnUnseenShapes) {
  const tuning::DefaultChain hopper{nullptr, &tuning::selector_rules(90), 132, &tuning::sm90_ranker()};
  int chosen = 0, asked = 0;
  for (int64_t m : {40, 96, 160, 300, 700, 1500, 3000})
    for (const auto& [n, k] : {std::pair<int64_t, int64_t>{6400, 5632}, {12800, 4096}, {2560, 9728}, {30720, 2048}}) {
      std::string why;
      const std::optional<Tactic> t = tuning::chain_choice(backends, hopper, shape(m, n, k), &why);
      EXPECT_NE(why.find("-> ranker"), std::string::npos) << why;
      ++asked;
      chosen += t.has_value();
    }
  EXPECT_GT(chosen, 0);
  EXPECT_LT(chosen, asked);
}

}  // namespace
}  // namespace fp8gemm::testing
