// The segment checks (tune/policy/segment_checks.h): each segment timed at its lowest M, the adaptive
// floor as a contender, the splits at the heuristic's switch, and kept floors that adapt.
#include "test_tune_policy_fixture.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace fp8gemm::testing {
namespace {

// c1 wins at the sample 53, h1 at 59, and the default keeps the edge: two segments below the edge
// whose choices are not the default, each checked at its lowest M (49 and 54) where the budget allows.
void two_winners_below_the_edge(PolicyTest& t) {
  t.timer.true_us["cutlass:c1"] = 8;
  t.timer.true_us["cublaslt:h1"] = 8;
  t.timer.at_m = [](const std::string& name, int64_t m, double us) {
    if (m == 64) return name == "cublaslt:heur" ? 7.0 : us;  // the default keeps the edge
    if (m == 53) return name == "cutlass:c1" ? 5.0 : us;      // c1 wins at 53, h1 at 59
    if (m == 59) return name == "cublaslt:h1" ? 5.0 : us;
    return us;
  };
}

// A segment whose choice is a challenger is timed again at its lowest M. A tactic fast at the
// sampled M but slower than the default at the bottom of its segment keeps only the part it was
// measured at (from the sampled M up); the default runs below. A mild loss at the bottom, within
// the threshold, keeps the challenger on the whole segment.
TEST_F(PolicyTest, SegmentLowEndCheckKeepsASlowerChoiceOnlyWhereItWasMeasured) {
  timer.true_us["cutlass:c1"] = 8;  // best at 53, 59 and the edge (64)...
  double bottom = 20;               // ...but 2x slower than the default at M <= 50
  timer.at_m = [&bottom](const std::string& name, int64_t m, double t) {
    return name == "cutlass:c1" && m <= 50 ? bottom : t;
  };
  PolicyOptions o;
  const Decision d = run(o);
  ASSERT_EQ(d.segments.size(), 2u) << d.reason;
  // The rule at the sample 53 chose c1 (8 us against 10): the check keeps it from M=49..52.
  EXPECT_EQ(d.segments[0].tactic, "cublaslt:heur");
  EXPECT_EQ(d.segments[0].m_max, 52);
  EXPECT_EQ(d.choice_for(49), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(52), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(53), "cutlass:c1");
  EXPECT_EQ(d.choice_for(54), "cutlass:c1");  // 54..59 checked at 54: c1 is the best there
  EXPECT_EQ(d.choice_for(64), "cutlass:c1");
  int low_end_rows = 0;
  bool said = false;
  for (const ChoiceSegment& s : d.segments)
    for (const CandidateReport& c : s.candidates) {
      low_end_rows += c.status == "low end";
      said |= c.status == "skipped" &&
              c.note.find("slower than the default at the segment's lowest M") != std::string::npos;
    }
  EXPECT_GE(low_end_rows, 2);
  EXPECT_TRUE(said) << explain_text(d);
  EXPECT_NE(explain_text(d).find("low end"), std::string::npos);
  // The lower part says where it was timed and what ran there.
  EXPECT_NE(explain_text(d).find("at M=49 (its choice covers M up to 52; default cublaslt:heur)"), std::string::npos)
      << explain_text(d);
  EXPECT_NE(d.reason.find("M<=52: the default at M=49"), std::string::npos) << d.reason;
  // 1% slower at the bottom (within the threshold, 1.5% with no noise), 25% faster at the top:
  // the challenger keeps its segment.
  bottom = 10.1;
  const Decision mild = run(o);
  EXPECT_EQ(mild.choice_for(49), "cutlass:c1");
  ASSERT_EQ(mild.segments.size(), 1u);
}

// The edge's own segment is checked too where its choice is not the default, with or without the
// adaptive floor: a choice 2x slower than the default below the edge keeps the edge alone.
TEST_F(PolicyTest, TheEdgesChoiceSlowerBelowTheEdgeKeepsOnlyTheEdge) {
  timer.true_us["cutlass:c1"] = 8;
  timer.true_us["cublaslt:h1"] = 9;
  timer.at_m = [](const std::string& name, int64_t m, double t) { return name == "cutlass:c1" && m < 64 ? 20.0 : t; };
  const Decision d = run();
  EXPECT_EQ(d.choice, "cutlass:c1") << d.reason;
  EXPECT_EQ(d.choice_for(59), "cublaslt:h1");
  EXPECT_EQ(d.choice_for(60), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(63), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(64), "cutlass:c1");
}

// Tuning never makes an M slower than the default beyond the threshold: a challenger 5% slower
// than the default at the bottom of its segment does not keep the bottom, however much it gains
// at the top, though its regret over the two ends (1.05) is below the default's (1.25).
TEST_F(PolicyTest, ASegmentNeverGoesToAChoiceSlowerThanTheDefaultAtEitherEnd) {
  timer.true_us["cutlass:c1"] = 8;
  timer.at_m = [](const std::string& name, int64_t m, double t) { return name == "cutlass:c1" && m <= 50 ? 10.5 : t; };
  const Decision d = run();
  EXPECT_EQ(d.choice_for(49), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(52), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(53), "cutlass:c1");  // where it was measured best
  EXPECT_EQ(d.choice_for(64), "cutlass:c1");
}

// A segment whose choice is not its default and whose lowest M cannot be checked within the key
// budget keeps its choice only from its sampled M up: below, nothing vouches for it, and the
// default runs there.
TEST_F(PolicyTest, AnUncheckedChoiceKeepsOnlyThePartItWasMeasuredAt) {
  two_winners_below_the_edge(*this);
  PolicyOptions o;
  o.key_budget_ms = 10;  // one low-end check below the edge fits (LowEndChecksBelowTheEdgeShare...)
  timer.measured_m.clear();
  const Decision d = run(o);
  ASSERT_EQ(d.sampled_ms, (std::vector<int64_t>{53, 59}));
  const bool checked_49 = std::count(timer.measured_m.begin(), timer.measured_m.end(), 49) > 0;
  const bool checked_54 = std::count(timer.measured_m.begin(), timer.measured_m.end(), 54) > 0;
  ASSERT_NE(checked_49, checked_54) << "one of the two checks fits the budget";
  // The unchecked segment's choice runs from its sampled M only; the default below it.
  const int64_t unchecked_sample = checked_49 ? 59 : 53;
  const std::string unchecked_choice = checked_49 ? "cublaslt:h1" : "cutlass:c1";
  EXPECT_EQ(d.choice_for(unchecked_sample), unchecked_choice) << explain_text(d);
  EXPECT_EQ(d.choice_for(unchecked_sample - 1), "cublaslt:heur") << explain_text(d);
  bool said = false;
  for (const ChoiceSegment& s : d.segments)
    for (const CandidateReport& c : s.candidates)
      said |= c.note.find("could not be checked within the key budget") != std::string::npos;
  EXPECT_TRUE(said);
}

// The low-end checks below the edge share one quarter of the key budget (the edge's segment has
// its own): at large M, where each check costs most, that is about one check per key.
TEST_F(PolicyTest, LowEndChecksBelowTheEdgeShareAQuarterOfTheKeyBudget) {
  two_winners_below_the_edge(*this);
  auto low_end_checks = [&](double key_budget_ms) {
    PolicyOptions o;
    o.key_budget_ms = key_budget_ms;
    timer.measured_m.clear();
    const Decision d = run(o);
    EXPECT_EQ(d.sampled_ms, (std::vector<int64_t>{53, 59})) << key_budget_ms;
    int checks = 0;
    for (int64_t m : timer.measured_m) checks += m == 49 || m == 54;  // the two segments' lowest M
    return checks;
  };
  EXPECT_EQ(low_end_checks(100), 2);
  // Two tactics at M=49 or 54 cost ~2.35 ms (roofline estimate): a 10 ms key allows one check.
  EXPECT_EQ(low_end_checks(10), 1);
}

// The adaptive floor ("cublaslt:heuristic" on the GPU): where the heuristic changes its mind
// inside a segment, its own choice at each M can beat the one kernel chosen where the segment
// was timed. The edge's segment (59, 64] is timed at its lowest M (60), where the heuristic
// already runs h1.
struct AdaptiveFloorTest : PolicyTest {
  void SetUp() override {
    PolicyTest::SetUp();
    cublaslt.adaptive = "adapt";
    cublaslt.default_by_m = [](int64_t m) { return m < 62 ? std::string("h1") : std::string("heur"); };
    timer.true_us["cublaslt:adapt"] = 0;  // timed as whatever the floor at that M is
    timer.at_m = [this](const std::string& name, int64_t m, double t) {
      if (name == "cublaslt:adapt") return time_of("cublaslt:" + cublaslt.default_by_m(m), m);
      return name == "cublaslt:heur" && m < 64 ? heur_below_edge : t;
    };
  }
  double heur_below_edge = 14;  // the edge's choice (heur, 10 us at 64) below the edge
  double time_of(const std::string& name, int64_t m) { return timer.at_m(name, m, timer.true_us.at(name)); }
  // The same tuning where the floor's backend has no adaptive tactic.
  Decision run_without_adaptive_floor(const PolicyOptions& o = {}) {
    const std::string adaptive = std::exchange(cublaslt.adaptive, "");
    const Decision d = run(o);
    cublaslt.adaptive = adaptive;
    return d;
  }
};

TEST_F(AdaptiveFloorTest, TakesTheEdgesSegmentWhereTheHeuristicsOwnChoiceRegretsLess) {
  const Decision fixed = run_without_adaptive_floor();
  EXPECT_EQ(fixed.choice_for(60), "cublaslt:heur");  // the failure mode: 14 us where h1 takes 10.5
  EXPECT_EQ(fixed.choice_for(64), "cublaslt:heur");

  const Decision d = run();
  EXPECT_EQ(d.choice_for(53), "cutlass:c1");      // the fastest at the samples (10.2 us), fixed
  EXPECT_EQ(d.choice_for(60), "cublaslt:adapt");  // h1 there, regret 1.0 against heur's 1.33
  EXPECT_EQ(d.choice_for(64), "cublaslt:adapt");  // heur there: the edge loses nothing
  EXPECT_EQ(d.choice, "cublaslt:adapt");          // the cache entry's edge choice follows
  EXPECT_NE(d.reason.find("takes it"), std::string::npos) << d.reason;
  bool said = false;
  for (const ChoiceSegment& s : d.segments)
    for (const CandidateReport& c : s.candidates)
      if (c.note.find("the adaptive floor takes the segment") != std::string::npos) {
        said = true;
        EXPECT_EQ(c.tactic, "cublaslt:adapt");
        EXPECT_EQ(c.status, "low end");
      }
  EXPECT_TRUE(said);
  // explain shows the edge's segment's timings; the segments merged below it keep theirs.
  EXPECT_NE(explain_text(d).find("the adaptive floor takes the segment"), std::string::npos);
  bool kept = false;
  for (const CandidateReport& c : d.segments[0].candidates)
    kept |= c.status == "low end" && c.note.find("at M=49") != std::string::npos;
  EXPECT_TRUE(kept) << "the low-end timings of the segment of 53, merged into the one of 59";
}

TEST_F(AdaptiveFloorTest, KeepsAFixedChoiceWhereTheHeuristicsChoiceIsSlower) {
  heur_below_edge = 10;  // heur holds its 10 us down the bucket...
  timer.true_us["cublaslt:h1"] = 13;  // ...and the heuristic's choice below 62 is slower
  const Decision d = run();
  EXPECT_EQ(d.choice_for(60), "cublaslt:heur");
  EXPECT_EQ(d.choice, "cublaslt:heur");
  for (const ChoiceSegment& s : d.segments) EXPECT_NE(s.tactic, "cublaslt:adapt");
}

TEST_F(AdaptiveFloorTest, NothingMoreIsTimedWhereTheHeuristicKeepsItsChoice) {
  cublaslt.default_by_m = nullptr;  // the heuristic answers heur at every M...
  heur_below_edge = 10;             // ...which is the best everywhere
  timer.at_m = nullptr;
  const int before = timer.measure_calls;
  const Decision off = run_without_adaptive_floor();
  const int calls_off = timer.measure_calls - before;
  const Decision on = run();
  EXPECT_EQ(timer.measure_calls - before - calls_off, calls_off);  // no low-end timing added
  EXPECT_EQ(off.choice, "cublaslt:heur");
  EXPECT_EQ(on.choice, "cublaslt:adapt");  // the kept floor adapts: heur, the same kernel, at every M
  for (const ChoiceSegment& s : on.segments)
    for (const CandidateReport& c : s.candidates) EXPECT_NE(c.status, "low end") << c.tactic;
}

// The adaptive floor's time at a sampled M is the floor's there, timed with the sample where the
// heuristic changes its mind inside that sample's segment: here it answers enum0 up to 54 and h1
// above, so the segment of 59 (from 54) times h1 at 59, although h1 lost the edge's short round.
TEST_F(AdaptiveFloorTest, TheFloorIsTimedAtASampleWhereTheHeuristicChangesItsMindBelowIt) {
  cublaslt.default_by_m = [](int64_t m) { return m <= 54 ? "enum0" : m < 62 ? "h1" : "heur"; };
  timer.true_us["cublaslt:enum0"] = 20;
  timer.true_us["cublaslt:h1"] = 14;  // pruned at the edge too (> 1.3x heur's 10)
  PolicyOptions o;
  o.sampled_pruned = 0;  // so nothing else brings the edge's pruned h1 to the samples
  const Decision d = run(o);
  ASSERT_EQ(d.sampled_ms, (std::vector<int64_t>{53, 59}));
  auto timed_at = [&](int64_t m, const std::string& name) {
    for (size_t i = 0; i < timer.measured.size(); ++i)
      if (timer.measured_m[i] == m)
        for (const Tactic& t : timer.measured[i])
          if (t.name() == name) return true;
    return false;
  };
  EXPECT_TRUE(timed_at(59, "cublaslt:h1"));
  for (const CandidateReport& c : d.candidates)
    if (c.tactic == "cublaslt:h1") EXPECT_EQ(c.status, "pruned");
}

// The floor's time at the edge, where the short round pruned it, is a short-round time, and the
// short and full rounds run in different states (heavy calls: one-call replays, unsettled): here
// every short-round time is 10% low, the default's 8% and the floor's 14%. Scaled by the default's
// full / short time, the heuristic's 10.8 us tile looks 10.1 us, within the threshold of the
// default's 10 at the edge, and the adaptive floor would take the whole edge segment on its 10.5
// us at M=60 (worse regret 1.01 against heur's 1.048). Timed again at the edge with the choice it
// is 10.8 us: the edge stays the default's, and the segment is split at the heuristic's switch
// (62), the adaptive floor below it.
TEST_F(AdaptiveFloorTest, AFloorPrunedAtTheEdgeIsTimedAgainThereBeforeItMayTakeTheSegment) {
  cublaslt.default_by_m = [](int64_t m) { return m < 62 ? std::string("h1") : std::string("enum0"); };
  timer.true_us["cublaslt:enum0"] = 10.8;  // the heuristic's own answer at the edge
  heur_below_edge = 11;
  timer.scale_for = [](const std::string& name, const MeasureOptions& o) {
    return o.warmup_replays != 0 ? 1.0 : name == "cublaslt:enum0" ? 0.86 : name == "cublaslt:heur" ? 0.92 : 0.9;
  };
  PolicyOptions o;
  o.rounds.max_finalists = 1;  // c1: enum0 is pruned
  const Decision d = run(o);
  const CandidateReport* floor = find(d, "cublaslt:enum0");
  ASSERT_NE(floor, nullptr);
  ASSERT_EQ(floor->status, "pruned");
  EXPECT_NEAR(floor->time_us, 10.8 * 0.86, 1e-9);  // its short-round time, as reported
  EXPECT_EQ(d.choice_for(64), "cublaslt:heur") << explain_text(d);
  EXPECT_EQ(d.choice_for(62), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(61), "cublaslt:adapt");
  EXPECT_EQ(d.choice, "cublaslt:heur");
  bool checked = false, again = false;  // timed at the segment's lowest M, and at its top
  for (const ChoiceSegment& s : d.segments)
    for (const CandidateReport& c : s.candidates) {
      checked |= c.tactic == "cublaslt:adapt" && c.status == "low end" && c.note.find("at M=60") != std::string::npos;
      again |= c.tactic == "cublaslt:enum0" && c.status == "top" && std::abs(c.time_us - 10.8) < 1e-9 &&
               c.note.find("at M=64") != std::string::npos;
    }
  EXPECT_TRUE(checked);
  EXPECT_TRUE(again);
  EXPECT_NE(explain_text(d).find("timed again"), std::string::npos);
  // Where that round gives no time (over the budget, or failed: here a zero) the scaled estimate
  // stands, and the adaptive floor takes the edge's whole segment.
  timer.scale_for = [](const std::string& name, const MeasureOptions& o) {
    return o.warmup_replays == 0 ? (name == "cublaslt:enum0" ? 0.86 : name == "cublaslt:heur" ? 0.92 : 0.9)
           : name == "cublaslt:enum0" && o.replays == 3 ? 0.0 : 1.0;
  };
  const Decision estimated = run(o);
  EXPECT_EQ(estimated.choice_for(62), "cublaslt:adapt") << explain_text(estimated);
  EXPECT_EQ(estimated.choice_for(64), "cublaslt:adapt");
}

// Where the default is the floor's own kernel at the top, it and the adaptive floor have the same
// time there, so the same worse regret when the top's is the larger; the adaptive floor, faster at
// the segment's lowest M, then takes the segment instead of the default. Here c1 wins the edge (9
// us against heur's 10) but is 12 us below it; at 60 heur takes 10.6 us and h1, the heuristic's
// answer there, 10.5: regrets c1 1.143, heur max(1.0095, 1.111) and the adaptive floor max(1,
// 1.111). (The adaptive floor is faster at 60 by less than the threshold: beyond it, the segment
// would be split at the heuristic's switch, ASegmentWhoseEndsDisagreeIsSplitWhereTheHeuristicChangesItsMind.)
TEST_F(AdaptiveFloorTest, OfTwoEqualRegretsTheContenderNoSlowerAtEitherEndTakesTheSegment) {
  timer.true_us["cublaslt:h1"] = 10.5;
  heur_below_edge = 10.6;
  timer.at_m = [this](const std::string& name, int64_t m, double t) {
    if (name == "cublaslt:adapt") return time_of("cublaslt:" + cublaslt.default_by_m(m), m);
    if (name == "cutlass:c1") return m < 64 ? 12.0 : 9.0;
    return name == "cublaslt:heur" && m < 64 ? heur_below_edge : t;
  };
  const Decision d = run();
  EXPECT_EQ(d.choice_for(60), "cublaslt:adapt") << explain_text(d);
  EXPECT_EQ(d.choice_for(64), "cublaslt:adapt");  // heur's kernel there: the edge loses nothing
  bool took = false;
  for (const ChoiceSegment& s : d.segments)
    for (const CandidateReport& c : s.candidates)
      took |= c.tactic == "cublaslt:adapt" && c.note.find("the adaptive floor takes the segment") != std::string::npos;
  EXPECT_TRUE(took) << "by the worse-regret rule, not a split";
  // Where the adaptive floor is slower at the lowest M, the default keeps the segment.
  timer.true_us["cublaslt:h1"] = 10.9;
  EXPECT_EQ(run().choice_for(60), "cublaslt:heur");
}

// Splitting at the heuristic's switch. The heuristic answers h1 below 62 and enum0 from 62; at
// the edge enum0 takes 10.6 us against the default heur's 10, at the edge segment's lowest M (60)
// the adaptive floor runs h1 in 9 us against heur's 10.6. Worse regrets: heur 1.18 (at 60), the
// adaptive floor 1.06 (at 64): whole, the segment would go to the adaptive floor and the edge
// would run enum0, 1.06x the best there. It is split where the heuristic turns to enum0 instead:
// the adaptive floor up to 61, heur above.
TEST_F(AdaptiveFloorTest, ASegmentWhoseEndsDisagreeIsSplitWhereTheHeuristicChangesItsMind) {
  cublaslt.default_by_m = [](int64_t m) { return m < 62 ? std::string("h1") : std::string("enum0"); };
  timer.true_us["cublaslt:enum0"] = 10.6;
  heur_below_edge = 10.6;
  double h1_below = 9;  // h1 from 62 on: 11 us
  timer.at_m = [&](const std::string& name, int64_t m, double t) {
    if (name == "cublaslt:adapt") return time_of("cublaslt:" + cublaslt.default_by_m(m), m);
    if (name == "cublaslt:h1") return m < 62 ? h1_below : 11.0;
    return name == "cublaslt:heur" && m < 64 ? heur_below_edge : t;
  };
  PolicyOptions o;
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(60), "cublaslt:adapt");
  EXPECT_EQ(d.choice_for(61), "cublaslt:adapt");
  EXPECT_EQ(d.choice_for(62), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(64), "cublaslt:heur");
  EXPECT_EQ(d.choice, "cublaslt:heur");
  bool said = false;
  for (const ChoiceSegment& s : d.segments)
    for (const CandidateReport& c : s.candidates)
      if (c.tactic == "cublaslt:adapt" && c.status == "low end" &&
          c.note.find("takes the lower part, up to M=61") != std::string::npos) {
        said = true;
        EXPECT_EQ(s.m_max, 61);
      }
  EXPECT_TRUE(said) << explain_text(d);
  EXPECT_NE(explain_text(d).find("takes the lower part"), std::string::npos);

  // Nothing is split where the ends agree within the threshold: enum0 1% slower at the edge.
  timer.true_us["cublaslt:enum0"] = 10.1;
  EXPECT_EQ(run(o).choice_for(64), "cublaslt:adapt");
  // ... nor where the adaptive floor is not clearly the fastest at the lowest M.
  timer.true_us["cublaslt:enum0"] = 10.6;
  h1_below = 10.5;
  EXPECT_EQ(run(o).choice_for(60), "cublaslt:heur");
}

// The low end's kernel keeps its tiles: the adaptive floor takes the edge's segment (59, 64] on its
// time at 60, where the heuristic answers h1; h1's one M tile reaches 64, and at 61-62 the heuristic
// answers h3, timed nowhere (the adaptive floor would run it there). h1 itself keeps (59, 63]; the
// adaptive floor keeps the rest.
TEST_F(AdaptiveFloorTest, TheLowEndsKernelKeepsItsTilesWhereTheHeuristicAnswersAnUntimedOne) {
  cublaslt.default_by_m = [](int64_t m) {
    return m < 61 ? std::string("h1") : m < 63 ? std::string("h3") : std::string("heur");
  };
  cublaslt.tile_height["h1"] = 64;
  timer.true_us["cublaslt:h3"] = 30;
  const Decision d = run();
  EXPECT_EQ(d.choice_for(60), "cublaslt:h1");
  EXPECT_EQ(d.choice_for(62), "cublaslt:h1");
  EXPECT_EQ(d.choice_for(63), "cublaslt:h1");
  EXPECT_EQ(d.choice_for(64), "cublaslt:adapt");
  bool said = false;
  for (const ChoiceSegment& seg : d.segments)
    for (const CandidateReport& c : seg.candidates)
      said |= c.note.find("keeps the M up to 63") != std::string::npos &&
              c.note.find("answers cublaslt:h3 at M=61") != std::string::npos;
  EXPECT_TRUE(said);
  // Where the heuristic answers only the two timed kernels, nothing changes.
  cublaslt.default_by_m = [](int64_t m) { return m < 62 ? std::string("h1") : std::string("heur"); };
  EXPECT_EQ(run().choice_for(61), "cublaslt:adapt");
}

// The low end's kernel keeps its tiles in the lower part of a split at the heuristic's switch too:
// the heuristic answers h1 below 61, h3 (timed nowhere) at 61 and enum0 from 62. The split gives
// the adaptive floor (59, 61], timed at 60 only, where it ran h1; at 61 it would run h3. h1 itself
// takes the part its M tiles reach.
TEST_F(AdaptiveFloorTest, TheSplitsLowerPartKeepsTheKernelTimedAtItsLowestM) {
  cublaslt.default_by_m = [](int64_t m) { return m < 61 ? "h1" : m < 62 ? "h3" : "enum0"; };
  cublaslt.tile_height["h1"] = 64;
  timer.true_us["cublaslt:enum0"] = 10.6;
  timer.true_us["cublaslt:h3"] = 30;
  heur_below_edge = 10.6;
  timer.at_m = [&](const std::string& name, int64_t m, double t) {
    if (name == "cublaslt:adapt") return time_of("cublaslt:" + cublaslt.default_by_m(m), m);
    // the fastest at 60-62 only, not at the samples
    if (name == "cublaslt:h1") return m >= 60 && m <= 62 ? 9.0 : 11.0;
    return name == "cublaslt:heur" && m < 64 ? heur_below_edge : t;
  };
  PolicyOptions o;
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(60), "cublaslt:h1") << explain_text(d);
  EXPECT_EQ(d.choice_for(61), "cublaslt:h1");  // h1's one 64-row tile reaches the part's top
  EXPECT_EQ(d.choice_for(62), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(64), "cublaslt:heur");
  EXPECT_NE(explain_text(d).find("answers cublaslt:h3 at M=61"), std::string::npos);

  // Where h1's tiles end inside the lower part, h1 takes what they reach and the adaptive floor
  // the rest: h3 at 61-62, enum0 from 63, so the lower part is (59, 62]; h1's 61-row tile reaches 61.
  cublaslt.default_by_m = [](int64_t m) { return m < 61 ? "h1" : m < 63 ? "h3" : "enum0"; };
  cublaslt.tile_height["h1"] = 61;
  const Decision short_reach = run(o);
  EXPECT_EQ(short_reach.choice_for(60), "cublaslt:h1") << explain_text(short_reach);
  EXPECT_EQ(short_reach.choice_for(61), "cublaslt:h1");
  // The adaptive floor would run h3 at 62, slower than untuned auto there: the middle check hands
  // 62 to it (docs/tuning.md "Never slower than the default").
  EXPECT_EQ(short_reach.choice_for(62), "cublaslt:heur");
  EXPECT_EQ(short_reach.choice_for(63), "cublaslt:heur");

  // Without a third kernel the lower part stays the adaptive floor's.
  cublaslt.default_by_m = [](int64_t m) { return m < 62 ? std::string("h1") : std::string("enum0"); };
  const Decision two = run(o);
  EXPECT_EQ(two.choice_for(60), "cublaslt:adapt") << explain_text(two);
  EXPECT_EQ(two.choice_for(61), "cublaslt:adapt");
  EXPECT_EQ(two.choice_for(62), "cublaslt:heur");
}

// A segment that a low-end check hands to another contender keeps as much of the bucket above its
// sampled M as the new contender's own M tiles reach; the adaptive floor's reach is that of its
// kernel at the sampled M, while the heuristic still answers it (cut back to the sampled M, the M
// just above it would fall to the next segment's choice). Here the sample 53 keeps the floor's h1
// (two 30-row tiles, up to 60), the check at 49 gives its segment to the adaptive floor, and the
// sample 61 keeps the table's c1, 20 us at M <= 60.
TEST_F(AdaptiveFloorTest, ASegmentTheCheckHandsOverReachesAsFarAsItsNewTacticsTiles) {
  cublaslt.default_by_m = [](int64_t m) { return m <= 50 ? "enum0" : m < 62 ? "h1" : "heur"; };
  cublaslt.tile_height["h1"] = 30;
  timer.true_us["cublaslt:h3"] = 30;
  timer.at_m = [this](const std::string& name, int64_t m, double t) {
    if (name == "cublaslt:adapt") return time_of("cublaslt:" + cublaslt.default_by_m(m), m);
    if (name == "cutlass:c1") return m <= 60 ? 20.0 : 8.0;
    if (name == "cublaslt:enum0" && m <= 50) return 9.0;
    return name == "cublaslt:heur" && m < 64 ? heur_below_edge : t;
  };
  PolicyOptions o;
  o.default_at = [this](const Problem& q) {
    return q.m >= 61 ? Tactic{"cutlass", "c1"} : Tactic{"cublaslt", cublaslt.default_by_m(q.m)};
  };
  const Decision d = run(o);
  ASSERT_EQ(d.sampled_ms, (std::vector<int64_t>{53, 61})) << explain_text(d);
  EXPECT_EQ(d.choice_for(49), "cublaslt:adapt") << explain_text(d);  // enum0 there, 9 us
  EXPECT_EQ(d.choice_for(53), "cublaslt:adapt");
  EXPECT_EQ(d.choice_for(57), "cublaslt:adapt");  // h1 there; the cut-back segment gave it c1 (20 us)
  EXPECT_EQ(d.choice_for(60), "cublaslt:adapt");
  EXPECT_EQ(d.choice_for(61), "cutlass:c1");
  EXPECT_EQ(d.choice_for(64), "cutlass:c1");
  // Only while the heuristic still answers h1: from 58 it answers h3, never timed, so the segment
  // ends at 57.
  cublaslt.default_by_m = [](int64_t m) { return m <= 50 ? "enum0" : m < 58 ? "h1" : m < 62 ? "h3" : "heur"; };
  const Decision h3 = run(o);
  EXPECT_EQ(h3.choice_for(57), "cublaslt:adapt") << explain_text(h3);
  EXPECT_EQ(h3.choice_for(58), "cutlass:c1");
}

// A kept floor adapts: a sample that kept its default, the floor's fixed answer there, was never
// chosen over the floor, only not beaten, and where its segment's lowest M was not timed the
// heuristic may answer a better-fitting kernel there. Here the floor answers h1 up to 55 and heur
// above; the sample 59 keeps its default heur, whose segment starts at 54, where heur is slow (14
// us, h1 10.5). A 10 ms key leaves the checks below the edge one round, which goes to the segment
// of 53: 54 is not timed. The segment runs the adaptive floor: h1 at 54-55, heur (the kernel
// timed at 59) at 56-59.
TEST_F(AdaptiveFloorTest, AKeptFloorAnswerBecomesTheAdaptiveFloor) {
  cublaslt.default_by_m = [](int64_t m) { return m <= 55 ? std::string("h1") : std::string("heur"); };
  timer.at_m = [this](const std::string& name, int64_t m, double t) {
    if (name == "cublaslt:adapt") return time_of("cublaslt:" + cublaslt.default_by_m(m), m);
    return name == "cublaslt:heur" && m <= 55 ? 14.0 : t;
  };
  PolicyOptions o;
  o.key_budget_ms = 10;
  o.default_at = [this](const Problem& q) { return Tactic{"cublaslt", cublaslt.default_by_m(q.m)}; };
  const Decision d = run(o);
  ASSERT_EQ(d.sampled_ms, (std::vector<int64_t>{53, 59}));
  EXPECT_EQ(std::count(timer.measured_m.begin(), timer.measured_m.end(), 54), 0) << "the lowest M of 59's segment";
  EXPECT_EQ(d.choice_for(54), "cublaslt:adapt") << explain_text(d);
  EXPECT_EQ(d.choice_for(59), "cublaslt:adapt");
  EXPECT_EQ(d.choice_for(53), "cutlass:c1");  // a challenger's win stays
  EXPECT_EQ(d.choice, "cublaslt:adapt");      // the edge kept heur, the floor's answer there
  EXPECT_NE(d.reason.find("runs the adaptive floor"), std::string::npos) << d.reason;
  // A default that is not the floor's answer (a table rule) is kept as it is.
  o.default_at = [](const Problem&) { return Tactic{"cublaslt", "enum0"}; };
  timer.true_us["cublaslt:enum0"] = 9.9;
  for (const ChoiceSegment& seg : run(o).segments)
    if (seg.sampled_m < 64) EXPECT_NE(seg.tactic, "cublaslt:adapt") << seg.sampled_m;
  // Without an adaptive floor the kept floor stays where untuned auto runs it; at 54-55, where
  // untuned auto runs h1 and heur is slower, the untimed-default check gives h1 back.
  o.default_at = [this](const Problem& q) { return Tactic{"cublaslt", cublaslt.default_by_m(q.m)}; };
  const Decision fixed = run_without_adaptive_floor(o);
  EXPECT_EQ(fixed.choice_for(54), "cublaslt:h1") << explain_text(fixed);
  EXPECT_EQ(fixed.choice_for(55), "cublaslt:h1");
  EXPECT_EQ(fixed.choice_for(56), "cublaslt:heur");
}

}  // namespace
}  // namespace fp8gemm::testing
