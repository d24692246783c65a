// Both power states (tune/power_states.h, docs/tuning.md "Both power states"): a light segment's
// close contenders are timed again under a heavy load, and the one with the smaller worse regret
// over both states takes the segment, if it beats the choice there beyond the noise and its
// output matches. Fake backends and a fake timer whose times change under the load.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_tune_fakes.h"
#include "tune/power_states.h"
#include "tune/selector.h"

namespace fp8gemm::testing {
namespace {

using tuning::check_power_states;
using tuning::power_state_contests;
using tuning::power_state_winner;
using tuning::PowerStateOptions;
using tuning::SelectorConfig;
using tuning::TuningSelector;

bool loaded(const MeasureOptions& o) { return o.load_between_us > 0; }

TEST(PowerStateWinner, TheSmallerWorseRegretWinsOnlyBeyondTheThresholdUnderLoad) {
  // Tied unloaded, the choice 8% slower under the load: the other takes it.
  EXPECT_EQ(power_state_winner({10.0, 10.1}, {10.8, 10.0}, 0.015), 1u);
  // 1% slower under the load: within the threshold, the choice stays.
  EXPECT_EQ(power_state_winner({10.0, 10.1}, {10.1, 10.0}, 0.015), 0u);
  // The other is faster under the load but 2.9% slower unloaded and the choice only 2% slower
  // loaded: the choice's worse regret (1.02) is the smaller.
  EXPECT_EQ(power_state_winner({10.0, 10.29}, {10.2, 10.0}, 0.015), 0u);
  // Of two others, the one whose worse regret is smallest, not the fastest under the load.
  EXPECT_EQ(power_state_winner({10.0, 10.25, 10.02}, {11.0, 10.0, 10.1}, 0.015), 2u);
  // A failed timing (0) never wins, and a choice that failed keeps its segment.
  EXPECT_EQ(power_state_winner({10.0, 10.0}, {11.0, 0.0}, 0.015), 0u);
  EXPECT_EQ(power_state_winner({10.0, 10.0}, {0.0, 9.0}, 0.015), 0u);
}

TEST(PowerStateContests, CloseLightSegmentsOnlyWithTheirTimesWhereTheyWereDecided) {
  Decision d;
  d.measured = true;
  d.problem = problem(16);
  d.choice = "f:a";
  d.choice_us = 10;
  d.default_tactic = "f:a";
  d.candidates = {{"f:a", "default", 10, 0, ""},
                  {"f:b", "finalist", 10.2, -1, ""},
                  {"f:c", "finalist", 10.4, -1, ""},  // beyond 3%
                  {"f:d", "pruned", 9.0, -1, ""}};    // a short-round time: not comparable
  ChoiceSegment low{12, "f:x", "f:a", 20, 20.55,
                    {{"f:a", "default", 20.55, 0, ""}, {"f:y", "finalist", 20.5, -1, ""}}, 12};
  ChoiceSegment heavy{14, "f:x", "f:a", 200, 201, {{"f:a", "default", 201, 0, ""}}, 14};
  ChoiceSegment edge{16, "f:a", "f:a", 10, 10, {}, 16};
  d.segments = {low, heavy, edge};
  const std::vector<tuning::PowerStateContest> c = power_state_contests(d, 3, PowerStateOptions{});
  ASSERT_EQ(c.size(), 2u);  // the heavy one (200 us calls) is left to the tune's own settling
  EXPECT_EQ(c[0].decision, 3u);
  EXPECT_EQ(c[0].segment, 0u);
  EXPECT_EQ(c[0].problem.m, 12);
  ASSERT_EQ(c[0].contenders.size(), 3u);  // the choice, then by time: f:y and the default
  EXPECT_EQ(c[0].contenders[0].name(), "f:x");
  EXPECT_EQ(c[0].contenders[1].name(), "f:y");
  EXPECT_EQ(c[0].boost_us, (std::vector<double>{20, 20.5, 20.55}));
  EXPECT_EQ(c[0].reference, "f:a");
  EXPECT_EQ(c[0].low_m, 9);  // the bucket (8, 16] starts at 9
  EXPECT_EQ(c[0].m_max, 12);
  EXPECT_EQ(c[1].segment, 2u);
  EXPECT_EQ(c[1].low_m, 15);
  EXPECT_EQ(c[1].problem.m, 16);
  ASSERT_EQ(c[1].contenders.size(), 2u);
  EXPECT_EQ(c[1].contenders[1].name(), "f:b");
  // An adaptive tactic ("cublaslt:heuristic") neither holds a contested segment nor contests one.
  const std::vector<tuning::PowerStateContest> a = power_state_contests(d, 0, PowerStateOptions{}, {"f:x", "f:b"});
  ASSERT_EQ(a.size(), 0u);
  d.measured = false;  // from the cache: nothing was timed, nothing to contest
  EXPECT_TRUE(power_state_contests(d, 0, PowerStateOptions{}).empty());
}

struct PowerStatesTest : ::testing::Test {
  // Light calls (~10 us); "a" is the default, "b" ties with it unloaded.
  FakeBackend fake{"fake", {"a", "b", "c"}, "a"};
  FakeTimer timer;
  double clock = 0;
  std::map<std::string, double> under_load{{"fake:a", 1.08}};  // factors on the time under the load

  SelectorConfig config() {
    SelectorConfig c;
    c.backends = {&fake};
    c.device.name = "Fake H200";
    c.device.cc_major = 9;
    c.clock_ms = [this] { return clock; };
    return c;
  }
  void SetUp() override {
    timer.true_us = {{"fake:a", 10}, {"fake:b", 10.1}, {"fake:c", 14}};
    timer.clock_ms = &clock;
    timer.scale_for = [this](const std::string& name, const MeasureOptions& o) {
      const auto it = under_load.find(name);
      return loaded(o) && it != under_load.end() ? it->second : 1.0;
    };
  }
  TuneOptions options() {
    TuneOptions o;
    o.bucket_samples = 0;  // one segment, the edge's
    o.check_power_states = true;
    return o;
  }
};

TEST_F(PowerStatesTest, ATieThatTheLoadBreaksGoesToTheTacticFasterThere) {
  TuningSelector sel(config());
  std::vector<MeasureOptions> seen;
  auto scale = timer.scale_for;
  timer.scale_for = [&](const std::string& name, const MeasureOptions& o) {
    if (loaded(o)) seen.push_back(o);
    return scale(name, o);
  };
  const std::vector<Decision> d = sel.tune({problem(16)}, timer, options());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].choice, "fake:b") << d[0].reason;
  EXPECT_NE(d[0].reason.find(tuning::kUnderLoad), std::string::npos) << d[0].reason;
  EXPECT_DOUBLE_EQ(d[0].choice_us, 10.1);  // its time where the segment was decided
  EXPECT_EQ(sel.cache().find_tactic(tuning::key_of(problem(16)), 16)->name(), "fake:b");
  // The loaded round: the choice twice (its noise), no settling, the first with the long lead.
  ASSERT_FALSE(seen.empty());
  EXPECT_FALSE(seen.front().settle);
  EXPECT_DOUBLE_EQ(seen.front().load_lead_us, PowerStateOptions{}.first_lead_us);
  EXPECT_GT(d[0].phase_ms.at("power_states"), 0);
  EXPECT_FALSE(timer.compared_with.empty());  // the output was checked against the default
}

TEST_F(PowerStatesTest, AWinnerMustHoldDownToTheSegmentsLowestM) {
  // b is 30% slower at M=9, the lowest M of the bucket (8, 16] that its one segment covers.
  timer.at_m = [](const std::string& name, int64_t m, double t) { return name == "fake:b" && m < 16 ? 1.3 * t : t; };
  TuningSelector sel(config());
  const std::vector<Decision> d = sel.tune({problem(16)}, timer, options());
  EXPECT_EQ(d[0].choice, "fake:a") << d[0].reason;
  EXPECT_EQ(timer.measured_m.back(), 9) << "timed at the segment's lowest M";
  // The same tiles from M=9 to 16 are not enough: the choice may be the one that gets faster there.
  fake.tile_height["b"] = 16;
  TuningSelector tiled(config());
  EXPECT_EQ(tiled.tune({problem(16)}, timer, options())[0].choice, "fake:a");
  // Not slower at M=9 under the load: b takes the segment, and the reason says what M=9 timed.
  timer.at_m = nullptr;
  TuningSelector fine(config());
  const std::vector<Decision> f = fine.tune({problem(16)}, timer, options());
  EXPECT_EQ(f[0].choice, "fake:b") << f[0].reason;
  EXPECT_NE(f[0].reason.find("at M=9, the segment's lowest"), std::string::npos) << f[0].reason;
}

TEST_F(PowerStatesTest, AWinnerWhoseTilesChangeBelowTheTopIsNotTaken) {
  // A segment decided at M=12 that reaches up to 16 (the choice's tiles hold there).
  Decision d;
  d.measured = true;
  d.problem = problem(16);
  d.choice = d.default_tactic = "fake:a";
  d.choice_us = d.default_us = 10;
  d.candidates = {{"fake:a", "default", 10, 0, ""}};
  d.segments = {{16, "fake:a", "fake:a", 10, 10, {{"fake:a", "default", 10, 0, ""}, {"fake:b", "finalist", 10.1, -1, ""}},
                 12}};
  std::vector<Decision*> all{&d};
  tuning::PolicyOptions po;
  const std::function<double()> now = [this] { return clock; };
  fake.tile_height["b"] = 4;  // b needs another tile above 12
  EXPECT_EQ(check_power_states(all, {&fake}, timer, po, PowerStateOptions{}, now), 0);
  EXPECT_EQ(d.segments[0].tactic, "fake:a");
  fake.tile_height["b"] = 16;  // the same tile from 12 to 16: it holds (and is no slower at M=9)
  const size_t before = timer.measured_m.size();
  EXPECT_EQ(check_power_states(all, {&fake}, timer, po, PowerStateOptions{}, now), 1);
  EXPECT_EQ(d.segments[0].tactic, "fake:b");
  EXPECT_EQ(d.choice, "fake:b");  // the edge's segment
  EXPECT_EQ(std::vector<int64_t>(timer.measured_m.begin() + long(before), timer.measured_m.end()),
            (std::vector<int64_t>{12, 9}));
}

TEST_F(PowerStatesTest, AnOutputThatDiffersKeepsTheChoice) {
  timer.output_diff["fake:b"] = 0.5;
  TuningSelector sel(config());
  const std::vector<Decision> d = sel.tune({problem(16)}, timer, options());
  EXPECT_EQ(d[0].choice, "fake:a");
  EXPECT_EQ(d[0].reason.find(tuning::kUnderLoad), std::string::npos);
}

TEST_F(PowerStatesTest, ANoisyLoadedRoundOrASmallGapKeepsTheChoice) {
  under_load["fake:a"] = 1.01;  // within min_gain
  TuningSelector sel(config());
  EXPECT_EQ(sel.tune({problem(16)}, timer, options())[0].choice, "fake:a");
  under_load["fake:a"] = 1.04;  // beyond min_gain, within twice the loaded round's noise
  timer.repeat_scale_for = [](const MeasureOptions& o) { return loaded(o) ? 1.03 : 1.0; };
  TuningSelector again(config());
  TuneOptions o = options();
  o.retune = true;
  EXPECT_EQ(again.tune({problem(16)}, timer, o)[0].choice, "fake:a");
}

TEST_F(PowerStatesTest, OffOrHeavyKeysMeasureNothingUnderLoad) {
  int loaded_rounds = 0;
  auto scale = timer.scale_for;
  timer.scale_for = [&](const std::string& name, const MeasureOptions& o) {
    loaded_rounds += loaded(o);
    return scale(name, o);
  };
  TuneOptions o;  // off by default
  o.bucket_samples = 0;
  TuningSelector off(config());
  EXPECT_EQ(off.tune({problem(16)}, timer, o)[0].choice, "fake:a");
  EXPECT_EQ(loaded_rounds, 0);
  // 100 us calls and more: the tune times them under their own load already.
  timer.true_us = {{"fake:a", 100}, {"fake:b", 101}, {"fake:c", 140}};
  TuningSelector heavy(config());
  EXPECT_EQ(heavy.tune({problem(16)}, timer, options())[0].choice, "fake:a");
  EXPECT_EQ(loaded_rounds, 0);
}

TEST_F(PowerStatesTest, TheBudgetStopsThePassAndAFailingRoundChangesNothing) {
  std::vector<Decision> d;
  {
    TuningSelector sel(config());
    TuneOptions o = options();
    o.power_state_budget_ms = 1e-9;  // spent by the first loaded round (the fake clock advances)
    d = sel.tune({problem(16), problem(1, 1024, 1024)}, timer, o);
  }
  int changed = 0;
  for (const Decision& x : d) changed += x.reason.find(tuning::kUnderLoad) != std::string::npos;
  EXPECT_EQ(changed, 1);
  // A tactic with no time under the load (the round is incomplete): nothing changes.
  under_load["fake:b"] = 0;
  TuningSelector sel(config());
  EXPECT_EQ(sel.tune({problem(16)}, timer, options())[0].choice, "fake:a");
}

}  // namespace
}  // namespace fp8gemm::testing
