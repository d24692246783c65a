// The default chain of `auto` untuned (tuner.h): the exact table first, then the selector rules,
// then the floor; shape boxes; and the generated Hopper rules on shapes outside every data file.
// Fake backends, no GPU.
#include <gtest/gtest.h>

#include "core/shape_box.h"
#include "test_tune_fakes.h"
#include "tune/tuning_selector.h"
#include "tune/defaults/default_chain.h"

namespace fp8gemm::testing {
namespace {

using tuning::DefaultChain;
using fp8gemm::BoxRule;

Problem shape(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  Problem p = problem(m, n, k);
  p.batch = batch;
  return p;
}

// A fake that runs any config of its own (the generated rules name real tactics), and whose default
// comes from a rule of its own unless `rule` is emptied.
struct AnyConfigBackend : FakeBackend {
  using FakeBackend::FakeBackend;
  std::set<std::string> refused;
  std::string rule = "its own rule 0";
  Verdict can_implement(const Problem&, const Tactic& t) override {
    if (t.backend != name()) return Verdict::no("not mine");
    return refused.count(t.config) ? Verdict::no("fake: refused") : Verdict::yes();
  }
  std::string default_rule(const Problem&) override { return rule; }
};

struct DefaultRulesTest : ::testing::Test {
  AnyConfigBackend cublaslt{"cublaslt", {"heur"}, "heur"};
  AnyConfigBackend cutlass{"cutlass", {"c0"}, "cutlass_default"};
  AnyConfigBackend small_m{"small_m", {"s0"}, "small_m_default"};
  std::vector<Backend*> backends{&cublaslt, &cutlass, &small_m};
};

TEST(ShapeBox, BoundsAndText) {
  const ShapeBox box = ShapeBox().m(33, 64).batch(1, 1).k_multiple_of(128, true).n_below(4608).weight_at_least(8 * ShapeBox::kMiB);
  EXPECT_TRUE(box.contains(shape(33, 4096, 4096), 132));
  EXPECT_TRUE(box.contains(shape(64, 4096, 2048), 132));
  EXPECT_FALSE(box.contains(shape(32, 4096, 4096), 132));     // m
  EXPECT_FALSE(box.contains(shape(40, 4608, 4096), 132));     // n < 4608
  EXPECT_FALSE(box.contains(shape(40, 4096, 4096, 2), 132));  // batch
  EXPECT_FALSE(box.contains(shape(40, 4096, 4112), 132));     // k % 128
  EXPECT_FALSE(box.contains(shape(40, 4096, 1024), 132));     // 4 MiB of weights
  EXPECT_EQ(box.to_string(), "m 33..64, batch 1, k % 128 == 0, n < 4608, weight >= 8 MiB");
  // Rows per SM follow the device: 4224 rows are 32 per SM on 132 SMs, 38 on 114.
  const ShapeBox pairs = ShapeBox().rows_per_sm(1, 32);
  EXPECT_TRUE(pairs.contains(shape(1, 4224, 4096), 132));
  EXPECT_FALSE(pairs.contains(shape(1, 4224, 4096), 114));
  EXPECT_EQ(ShapeBox().n_at_least(2048).n_below(8192).to_string(), "n in [2048, 8192)");
  EXPECT_EQ(ShapeBox().to_string(), "any shape");
}

// Table first (its exact shapes keep today's answer: the table's tactic, else the floor), then the
// first rule whose box holds the problem and whose action runs it, then the floor.
TEST_F(DefaultRulesTest, TableThenRulesThenFloor) {
  const std::vector<ExactRow> table = {
      {DType::kE4M3, DType::kE4M3, DType::kBF16, 1, 4096, 4096, 1, 16, "cutlass:c0"}};
  const std::vector<BoxRule> rules = {
      {ShapeBox().m(1, 32).batch(1, 2), "small_m:default", "fitted on 9 points"},
      {ShapeBox().m(33, 64).batch(1, 2), "cutlass:sm90_x", "fitted on 8 points"},
      {ShapeBox().m(33, 64).batch(1, 2), "cutlass:default", "the next one"},
      {ShapeBox().m(65, 128), "cublaslt:default", "the floor: nothing beat it"}};
  const DefaultChain chain{&table, &rules, 132};
  std::string why;
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(8, 4096, 4096), &why)->name(), "cutlass:c0");
  EXPECT_EQ(why.rfind("table: exact shape", 0), 0u) << why;
  // The table names 4096x4096: outside its M ranges the floor, not the rules.
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(24, 4096, 4096), &why), std::nullopt);
  EXPECT_EQ(why.rfind("floor: the table names this exact shape", 0), 0u) << why;
  // Another shape: the rules.
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(24, 6400, 5632), &why)->name(), "small_m:small_m_default");
  EXPECT_EQ(why, "rule 0 (m 1..32, batch 1..2) -> small_m:default (fitted on 9 points); its own rule 0");
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(40, 6400, 5632))->name(), "cutlass:sm90_x");
  // A rule whose tactic cannot run falls through to the next rule that holds the problem.
  cutlass.refused.insert("sm90_x");
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(40, 6400, 5632), &why)->name(), "cutlass:cutlass_default");
  EXPECT_EQ(why.rfind("rule 2 ", 0), 0u) << why;
  // ... and past the last one to the floor.
  cutlass.refused.insert("cutlass_default");
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(40, 6400, 5632), &why), std::nullopt);
  EXPECT_EQ(why.rfind("floor: no default rule covers", 0), 0u) << why;
  EXPECT_EQ(tuning::default_choice(backends, chain, shape(40, 6400, 5632)).name(), "cublaslt:heur");
  // A floor rule says so; batch 3 is in no box here.
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(100, 6400, 5632), &why), std::nullopt);
  EXPECT_EQ(why, "floor: rule 3 (m 65..128) -> cublaslt:default (the floor: nothing beat it)");
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(8, 6400, 5632, 3)), std::nullopt);
  // A backend default that none of the backend's own rules chose does not count (the selector was
  // fitted on what those rules choose); nor does an unavailable backend's.
  small_m.rule.clear();
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(24, 6400, 5632)), std::nullopt);
  small_m.rule = "its own rule 0";
  small_m.unavailable = true;
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(24, 6400, 5632)), std::nullopt);
}

// The generated Hopper rules: every action names a backend default or a tactic; no box reaches
// beyond the batches the data measured (1, 2, 4 and 8); and shapes no data file has get a
// backend's default or a named tactic where the rules say so, the DESIGN suite its table.
TEST_F(DefaultRulesTest, GeneratedHopperRules) {
  const auto& rules = decision_tables(90).selector;
  ASSERT_FALSE(rules.empty());
  EXPECT_TRUE(decision_tables(89).selector.empty());
  for (const BoxRule& r : rules) {
    const std::string a = r.action;
    if (a.size() < 8 || a.substr(a.size() - 8) != ":default") EXPECT_NO_THROW(Tactic::parse(a)) << a;
    EXPECT_LE(r.box.batch_hi, 8) << r.box.to_string();
    EXPECT_GE(r.box.m_lo, 1);
    EXPECT_LE(r.box.m_hi, 16384) << r.box.to_string();
  }
  const DefaultChain chain{&decision_tables(90).exact, &rules, 132};
  std::string why;
  // Decode shapes outside every data file (N, K of no tuned model): small_m's default.
  for (const Problem& p : {shape(1, 6400, 5632), shape(8, 6400, 5632), shape(16, 11008, 4096), shape(4, 3328, 9728, 2)}) {
    const std::optional<Tactic> t = tuning::chain_choice(backends, chain, p, &why);
    ASSERT_TRUE(t) << p << ": " << why;
    EXPECT_EQ(t->name(), "small_m:small_m_default") << p << ": " << why;
    EXPECT_EQ(why.rfind("rule ", 0), 0u) << why;
  }
  // Batch 4 was measured: a rule's choice, not the floor; batch 16 was not: no box, the floor.
  const std::optional<Tactic> batch4 = tuning::chain_choice(backends, chain, shape(8, 6400, 5632, 4), &why);
  ASSERT_TRUE(batch4) << why;
  EXPECT_EQ(why.rfind("rule ", 0), 0u) << why;
  EXPECT_EQ(tuning::chain_choice(backends, chain, shape(8, 6400, 5632, 16), &why), std::nullopt);
  EXPECT_EQ(why.rfind("floor: no default rule covers", 0), 0u) << why;
  // Large M on a wide layer no data file has: the rule's cuBLASLt tile, named outright.
  const std::optional<Tactic> wide = tuning::chain_choice(backends, chain, shape(4096, 12800, 4096), &why);
  ASSERT_TRUE(wide) << why;
  EXPECT_EQ(wide->backend, "cublaslt") << why;
  EXPECT_NE(wide->config.find("tile=176x128"), std::string::npos) << why;
  EXPECT_EQ(why.rfind("rule ", 0), 0u) << why;
  // A DESIGN-suite shape (Llama-3.1-8B's o projection) answers from its exact table.
  EXPECT_TRUE(tuning::chain_choice(backends, chain, shape(16, 4096, 4096), &why)) << why;
  EXPECT_EQ(why.rfind("table: exact shape", 0), 0u) << why;
}

// The selector uses the chain: select() answers a rule's backend default on an unseen shape (and
// only for `auto` or that backend), explain() says which rule, and tuning measures against it.
TEST_F(DefaultRulesTest, SelectorAnswersAndExplainsFromTheChain) {
  tuning::SelectorConfig c;
  c.backends = backends;
  c.device.cc_major = 9;
  c.device.sm_count = 132;
  c.selector_rules = {{ShapeBox().m(1, 32).batch(1, 2), "small_m:default", "fitted on 9 points"}};
  tuning::TuningSelector sel(c);
  const Problem p = shape(8, 6400, 5632);
  EXPECT_EQ(sel.select(p, "auto", nullptr)->name(), "small_m:small_m_default");
  EXPECT_EQ(sel.select(p, "small_m", nullptr)->name(), "small_m:small_m_default");
  EXPECT_EQ(sel.select(p, "cutlass", nullptr), std::nullopt);  // that backend's own default
  EXPECT_EQ(sel.default_for(p).name(), "small_m:small_m_default");
  EXPECT_EQ(sel.explain(p).rfind("rule 0 (m 1..32, batch 1..2) -> small_m:default", 0), 0u) << sel.explain(p);
  EXPECT_EQ(sel.select(shape(64, 6400, 5632), "auto", nullptr), std::nullopt);
  EXPECT_EQ(sel.default_for(shape(64, 6400, 5632)).name(), "cublaslt:heur");
  // A tuned entry wins over the chain, and explain says where the answer came from.
  FakeTimer timer;
  timer.true_us = {{"small_m:small_m_default", 10}, {"small_m:s0", 6}, {"cublaslt:heur", 12}, {"cutlass:c0", 11},
                   {"cutlass:cutlass_default", 13}};
  const Decision d = sel.tune({p}, timer, {}).front();
  EXPECT_EQ(d.default_tactic, "small_m:small_m_default");  // measured against the new default
  EXPECT_EQ(sel.select(p, "auto", nullptr)->name(), "small_m:s0");
  EXPECT_EQ(sel.explain(p).rfind("tuned cache: ", 0), 0u) << sel.explain(p);
}

}  // namespace
}  // namespace fp8gemm::testing
