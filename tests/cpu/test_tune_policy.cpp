// The tuning policy against fake backends and a fake timer: the decision rule, noise, ties,
// outliers (FlashInfer fault 3), a backend that throws while listing (fault 4), failing
// backends and tactics, output mismatches and budgets.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <set>

#include "test_tune_fakes.h"
#include "tune/policy.h"
#include "tune/report.h"

namespace fp8gemm::testing {
namespace {

using tuning::decide;
using tuning::PolicyOptions;

struct PolicyTest : ::testing::Test {
  FakeBackend cublaslt{"cublaslt", {"enum0", "heur", "h1"}, "heur"};
  FakeBackend cutlass{"cutlass", {"c0", "c1"}, "c0"};
  FakeTimer timer;
  Tactic def{"cublaslt", "heur"};

  void SetUp() override {
    timer.true_us = {{"cublaslt:heur", 10}, {"cublaslt:enum0", 12}, {"cublaslt:h1", 10.5},
                     {"cutlass:c0", 11}, {"cutlass:c1", 10.2}};
  }
  std::vector<Backend*> backends() { return {&cublaslt, &cutlass}; }
  Decision run(const PolicyOptions& o = {}, const Problem& p = problem(64)) {
    return decide(p, backends(), def, def, timer, o);
  }
  static const CandidateReport* find(const Decision& d, const std::string& name) {
    for (auto& c : d.candidates)
      if (c.tactic == name) return &c;
    return nullptr;
  }
};

TEST_F(PolicyTest, ClearlyFasterChallengerWins) {
  timer.true_us["cutlass:c1"] = 8;
  const Decision d = run();
  EXPECT_EQ(d.choice, "cutlass:c1");
  EXPECT_TRUE(d.measured);
  EXPECT_DOUBLE_EQ(d.choice_us, 8);
  EXPECT_DOUBLE_EQ(d.default_us, 10);
  EXPECT_NE(d.reason.find("faster"), std::string::npos) << d.reason;
  // Checked against the default before winning: at the edge first, then at each sampled M.
  ASSERT_EQ(timer.compare_calls, 1 + int(d.sampled_ms.size()));
  EXPECT_EQ(timer.compared[0].front().name(), "cutlass:c1");
}

// The choice must hold for every M of the bucket (DESIGN "Keys"), not only for the edge it is
// tuned at: a tactic that wins at M=64 but collapses below it gets only the part of the bucket
// where it was measured best; the parts below go to what won at the sampled M values.
TEST_F(PolicyTest, ChoiceHoldsAcrossTheBucketNotOnlyAtItsEdge) {
  EXPECT_EQ(tuning::bucket_sample_ms(64, 2), (std::vector<int64_t>{53, 59}));  // bucket (48, 64] in thirds
  EXPECT_EQ(tuning::bucket_sample_ms(2, 2), std::vector<int64_t>{});            // bucket (1, 2]: M=2 only
  EXPECT_EQ(tuning::bucket_sample_ms(4, 2), std::vector<int64_t>{3});           // (2, 4]: 3, then the edge
  EXPECT_EQ(tuning::bucket_sample_ms(64, 3), (std::vector<int64_t>{52, 56, 60}));
  EXPECT_EQ(tuning::bucket_sample_ms(64, 1), std::vector<int64_t>{56});
  EXPECT_EQ(tuning::bucket_sample_ms(64, 0), std::vector<int64_t>{});
  EXPECT_EQ(tuning::bucket_sample_ms(300, 2), (std::vector<int64_t>{299, 341}));  // bucket (256, 384]
  timer.true_us["cutlass:c1"] = 8;  // fastest at the edge...
  timer.true_us["cublaslt:h1"] = 9;
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    return name == "cutlass:c1" && m < 64 ? 20.0 : t;  // ...but 2x slower than the default below it
  };
  const Decision d = run();
  EXPECT_EQ(d.sampled_ms, (std::vector<int64_t>{53, 59}));
  EXPECT_EQ(d.choice, "cutlass:c1") << d.reason;
  ASSERT_EQ(d.segments.size(), 2u) << d.reason;  // 53 and 59 chose the same: one segment
  EXPECT_EQ(d.segments[0].m_max, 59);
  EXPECT_EQ(d.segments[0].tactic, "cublaslt:h1");
  EXPECT_EQ(d.segments[1].m_max, 64);
  EXPECT_EQ(d.segments[1].tactic, "cutlass:c1");
  for (int64_t m : {49, 53, 59}) EXPECT_EQ(d.choice_for(m), "cublaslt:h1") << m;
  for (int64_t m : {60, 64}) EXPECT_EQ(d.choice_for(m), "cutlass:c1") << m;
  EXPECT_NE(d.reason.find("M<=59: cublaslt:h1"), std::string::npos) << d.reason;
  // Each sampled M's challengers were checked against the default's output at that M.
  EXPECT_GE(timer.compare_calls, 3);
}

// The edge's finalists go to the samples by the better of their full-round time and their
// short-round one (on the full round's scale): one slow full round does not keep a tactic from
// the samples (H200 session 24, 8192x1024, m<=48: CUTLASS 64x128 PDL 4.46 us in the short round,
// 5.04 in the full one, timed at neither sample, and the fastest from M=37 to 48 in bench). Here
// c0 is 9 us at the edge, 14 in its full round, and 7 below the edge, the best there.
TEST_F(PolicyTest, AFinalistWithOneSlowFullRoundStillCompetesAtTheSamples) {
  timer.true_us["cutlass:c0"] = 9;
  timer.at_m = [](const std::string& name, int64_t m, double t) { return name == "cutlass:c0" && m < 64 ? 7.0 : t; };
  timer.scale_for = [this](const std::string& name, const MeasureOptions& o) {
    const bool edge_full_round = timer.measured_m.back() == 64 && o.calls_per_replay == 0 && o.warmup_replays == 1;
    return name == "cutlass:c0" && edge_full_round ? 14.0 / 9.0 : 1.0;
  };
  PolicyOptions o;
  o.sampled_finalists = 2;  // the default and one finalist
  const Decision d = run(o);
  const CandidateReport* c0 = find(d, "cutlass:c0");
  ASSERT_NE(c0, nullptr);
  EXPECT_EQ(c0->status, "finalist");
  EXPECT_DOUBLE_EQ(c0->time_us, 14);  // last of the finalists in the full round...
  EXPECT_EQ(d.choice_for(53), "cutlass:c0") << tuning::explain_text(d);  // ...first by its short round
  EXPECT_EQ(d.choice_for(59), "cutlass:c0");
}

// A sampled M's choice holds above it as long as it needs no more M tiles there: the boundary
// to the next segment moves up (the H200's M=300 ran best with the two 152-row tiles measured
// at 299, not with the next sample's choice), and the next sample is taken where that choice
// needs another tile, since up to there no other tactic can overtake it.
TEST_F(PolicyTest, ASampledChoiceHoldsUpToWhereItNeedsAnotherTile) {
  timer.true_us["cutlass:c1"] = 8;
  timer.true_us["cublaslt:h1"] = 9;
  cublaslt.tile_height["h1"] = 30;  // two tiles at 53: the same two up to M=60
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    return name == "cutlass:c1" && m < 64 ? 20.0 : t;
  };
  const Decision d = run();
  EXPECT_EQ(d.sampled_ms, (std::vector<int64_t>{53, 61}));  // 61: h1's third tile
  ASSERT_EQ(d.segments.size(), 2u) << d.reason;
  EXPECT_EQ(d.segments[0].tactic, "cublaslt:h1");
  EXPECT_EQ(d.segments[0].m_max, 63);  // chosen again at 61, up to the edge's own sample
  EXPECT_EQ(d.choice_for(63), "cublaslt:h1");
  EXPECT_EQ(d.choice_for(64), "cutlass:c1");
  // The next sample is no lower than its place in the bucket: a 4-row tile reaches only 56,
  // the second sample still goes to 59.
  cublaslt.tile_height["h1"] = 4;
  EXPECT_EQ(run().sampled_ms, (std::vector<int64_t>{53, 59}));
  // Never past the next segment's own sampled M: a height of 100 would reach 100, but the edge
  // (64) was measured, so h1 stops at 63, and no second sample is needed below the edge.
  cublaslt.tile_height["h1"] = 100;
  const Decision wide = run();
  EXPECT_EQ(wide.sampled_ms, std::vector<int64_t>{53});
  ASSERT_EQ(wide.segments.size(), 2u);
  EXPECT_EQ(wide.segments[0].m_max, 63);
  // Nor past a sampled M that chose something else, even when that choice is merged with the
  // edge's: h1 best only at 53 (two 30-row tiles, up to 60), c1 at 61 and 64 -> h1 up to 60.
  cublaslt.tile_height["h1"] = 30;
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    if (m == 53) return name == "cublaslt:h1" ? 5.0 : name == "cutlass:c1" ? 20.0 : t;
    return t;  // c1 (8) is the best at 61 and at the edge
  };
  const Decision split = run();
  ASSERT_EQ(split.segments.size(), 2u) << split.reason;
  EXPECT_EQ(split.segments[0].tactic, "cublaslt:h1");
  EXPECT_EQ(split.segments[0].m_max, 60);
  EXPECT_EQ(split.choice_for(61), "cutlass:c1");
}

// Opt-in: a sub-bucket challenger is timed again at its segment's lowest M. A tactic that is
// fast at the sampled M but slow at the bottom of its segment (H200: CUTLASS 64x128 at M=193 vs
// 213) loses the segment to the default when the default regrets less over both ends; a mild
// loss at the bottom keeps the challenger.
// The low-end check is on for every tuning entry point (tune, explain, lazy tuning: all map
// TuneOptions through policy_options), and can be switched off.
TEST(PolicyOptionsTest, SegmentLowEndCheckIsOnByDefaultForTuning) {
  EXPECT_TRUE(tuning::policy_options(TuneOptions{}).check_segment_low_ends);
  TuneOptions off;
  off.check_segment_ends = false;
  EXPECT_FALSE(tuning::policy_options(off).check_segment_low_ends);
}

TEST_F(PolicyTest, SegmentLowEndCheckGivesTheSegmentToTheDefaultWhereItRegretsLess) {
  timer.true_us["cutlass:c1"] = 8;  // best at 53, 59 and the edge (64)...
  double bottom = 20;               // ...but 2x slower than the default at M <= 50
  timer.at_m = [&bottom](const std::string& name, int64_t m, double t) {
    return name == "cutlass:c1" && m <= 50 ? bottom : t;
  };
  const Decision off = run();
  EXPECT_EQ(off.choice_for(49), "cutlass:c1");  // the failure mode, without the check
  PolicyOptions o;
  o.check_segment_low_ends = true;
  const Decision d = run(o);
  ASSERT_EQ(d.segments.size(), 2u) << d.reason;
  EXPECT_EQ(d.segments[0].tactic, "cublaslt:heur");  // regret 1.25 at 53 beats 2.0 at 49
  EXPECT_EQ(d.segments[0].m_max, 53);
  EXPECT_EQ(d.choice_for(49), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(54), "cutlass:c1");  // 54..59 checked at 54: c1 is the best there
  EXPECT_EQ(d.choice_for(64), "cutlass:c1");
  int low_end_rows = 0;
  for (const ChoiceSegment& s : d.segments)
    for (const CandidateReport& c : s.candidates) {
      low_end_rows += c.status == "low end";
      if (c.note.find("the default takes the segment") != std::string::npos)
        EXPECT_EQ(c.tactic, "cublaslt:heur");  // said on the default's own row
    }
  EXPECT_GE(low_end_rows, 2);
  EXPECT_NE(tuning::explain_text(d).find("low end"), std::string::npos);
  // When the challenger's segment reached above its sampled M (two 30-row tiles from 53 up to
  // 60), the default takes it only up to the sampled M, and the next segment starts at 54.
  cutlass.tile_height["c1"] = 30;
  const Decision reach = run(o);
  EXPECT_EQ(reach.sampled_ms, (std::vector<int64_t>{53, 61}));
  EXPECT_EQ(reach.choice_for(53), "cublaslt:heur");
  EXPECT_EQ(reach.choice_for(54), "cutlass:c1");
  cutlass.tile_height.erase("c1");
  // 5% slower at the bottom, 25% faster at the top: the challenger keeps its segment.
  bottom = 10.5;
  const Decision mild = run(o);
  EXPECT_EQ(mild.choice_for(49), "cutlass:c1");
  ASSERT_EQ(mild.segments.size(), 1u);
}

// The adaptive floor ("cublaslt:heuristic" on the GPU): where the heuristic changes its mind
// inside a segment, its own choice at each M can beat the one kernel chosen where the segment
// was timed (H200, 1280x8192: M=3000 ran the 256x128 tile the heuristic picks at 3072, 1.107x
// the best, while the heuristic's choice at 3000 was the best). The edge's segment (59, 64] is
// timed at its lowest M (60), where the heuristic already runs h1.
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
  static PolicyOptions options(bool adaptive) {
    PolicyOptions o;
    o.check_segment_low_ends = true;
    o.adaptive_floor = adaptive;
    return o;
  }
};

TEST_F(AdaptiveFloorTest, TakesTheEdgesSegmentWhereTheHeuristicsOwnChoiceRegretsLess) {
  const Decision fixed = run(options(false));
  EXPECT_EQ(fixed.choice_for(60), "cublaslt:heur");  // the failure mode: 14 us where h1 takes 10.5
  EXPECT_EQ(fixed.choice_for(64), "cublaslt:heur");

  const Decision d = run(options(true));
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
  EXPECT_NE(tuning::explain_text(d).find("the adaptive floor takes the segment"), std::string::npos);
  bool kept = false;
  for (const CandidateReport& c : d.segments[0].candidates)
    kept |= c.status == "low end" && c.note.find("at M=49") != std::string::npos;
  EXPECT_TRUE(kept) << "the low-end timings of the segment of 53, merged into the one of 59";
}

// PolicyOptions::adaptive_floor_interior: the check times the adaptive floor at the segment's two
// ends; where the heuristic answers a third kernel in between, that kernel was never timed (H200,
// 10240x8192: it took (2816, 3072] at 2817 and ran a 256x160 tile at M=3000, 1.15x the best). Here
// h3 answers at M = 61-62, inside the edge's segment (59, 64], whose ends run h1 and heur.
TEST_F(AdaptiveFloorTest, WithTheInteriorCheckItCompetesOnlyWhereItsKernelsInsideWereTimed) {
  cublaslt.default_by_m = [](int64_t m) {
    return m < 61 ? std::string("h1") : m < 63 ? std::string("h3") : std::string("heur");
  };
  timer.true_us["cublaslt:h3"] = 30;  // what the adaptive floor would run at M = 61-62
  PolicyOptions o = options(true);
  o.kept_floor_adapts = true;  // as in tuning: it must not undo the check's refusal either
  EXPECT_FALSE(o.adaptive_floor_interior);  // off by default
  EXPECT_EQ(run(o).choice_for(62), "cublaslt:adapt");  // the failure mode: h3 at 62, never timed

  o.adaptive_floor_interior = true;
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(62), "cublaslt:heur");  // the edge's fixed choice keeps its segment
  EXPECT_EQ(d.choice_for(64), "cublaslt:heur");
  EXPECT_EQ(d.choice, "cublaslt:heur");
  bool said = false;
  for (const CandidateReport& c : d.segments.back().candidates)
    if (c.tactic == "cublaslt:adapt" && c.status == "skipped") {
      said = true;
      EXPECT_NE(c.note.find("the heuristic answers cublaslt:h3"), std::string::npos) << c.note;
    }
  EXPECT_TRUE(said);

  // Where the heuristic's answers inside are the ends' kernels, nothing changes.
  cublaslt.default_by_m = [](int64_t m) { return m < 62 ? std::string("h1") : std::string("heur"); };
  EXPECT_EQ(run(o).choice_for(60), "cublaslt:adapt");
  EXPECT_TRUE(tuning::policy_options([] {
                TuneOptions t;
                t.adaptive_floor_interior = true;
                return t;
              }())
                  .adaptive_floor_interior);
  EXPECT_FALSE(tuning::policy_options(TuneOptions{}).adaptive_floor_interior);
}

// PolicyOptions::floor_keeps_low_kernel: the adaptive floor takes the edge's segment (59, 64] on its
// time at 60, where the heuristic answers h1; h1's one M tile reaches 64, and at 61-62 the heuristic
// answers h3, timed nowhere. h1 itself keeps (59, 63]; the adaptive floor keeps the rest. (H200:
// 6144x4096 at M=200 ran 128x104, 3.3% slower than the 64x200 tile timed at 193.)
TEST_F(AdaptiveFloorTest, TheLowEndsKernelKeepsItsTilesWhereTheHeuristicAnswersAnUntimedOne) {
  cublaslt.default_by_m = [](int64_t m) {
    return m < 61 ? std::string("h1") : m < 63 ? std::string("h3") : std::string("heur");
  };
  cublaslt.tile_height["h1"] = 64;
  timer.true_us["cublaslt:h3"] = 30;
  PolicyOptions o = options(true);
  EXPECT_EQ(run(o).choice_for(62), "cublaslt:adapt");  // the failure mode: h3 at 62
  o.floor_keeps_low_kernel = true;
  const Decision d = run(o);
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
  EXPECT_EQ(run(o).choice_for(61), "cublaslt:adapt");
  EXPECT_TRUE(tuning::policy_options(TuneOptions{}).floor_keeps_low_kernel);
  TuneOptions off;
  off.floor_keeps_low_kernel = false;
  EXPECT_FALSE(tuning::policy_options(off).floor_keeps_low_kernel);
}

// The adaptive floor's time at a sampled M is the floor's there, timed with the sample where the
// heuristic changes its mind inside that sample's segment: here it answers enum0 up to 54 and h1
// above, so the segment of 59 (from 54) times h1 at 59, although h1 lost the edge's short round.
TEST_F(AdaptiveFloorTest, TheFloorIsTimedAtASampleWhereTheHeuristicChangesItsMindBelowIt) {
  cublaslt.default_by_m = [](int64_t m) { return m <= 54 ? "enum0" : m < 62 ? "h1" : "heur"; };
  timer.true_us["cublaslt:enum0"] = 20;
  timer.true_us["cublaslt:h1"] = 14;  // pruned at the edge too (> 1.3x heur's 10)
  PolicyOptions o = options(true);
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

TEST_F(AdaptiveFloorTest, KeepsAFixedChoiceWhereTheHeuristicsChoiceIsSlower) {
  heur_below_edge = 10;  // heur holds its 10 us down the bucket...
  timer.true_us["cublaslt:h1"] = 13;  // ...and the heuristic's choice below 62 is slower
  const Decision d = run(options(true));
  EXPECT_EQ(d.choice_for(60), "cublaslt:heur");
  EXPECT_EQ(d.choice, "cublaslt:heur");
  for (const ChoiceSegment& s : d.segments) EXPECT_NE(s.tactic, "cublaslt:adapt");
}

// The floor's time at the edge, where the short round pruned it, is a short-round time; the short
// and full rounds run in different states (heavy calls: one-call replays, unsettled), here every
// short-round time 10% low and the floor's 14% (on the H200 the floor's tile lost more to the power
// cap). Compared as it stood with the full round's times, it made the heuristic's 10.8 us tile look
// faster than the default's 10 us and gave the edge's segment to the adaptive floor (H200 session
// 19, 10240x8192 at M=4096: 1.06x the best in bench); scaled by the default's full / short time it
// is 10.32 us and still takes it (session 20: 1.065x). Timed again at the edge with the choice it is
// 10.8 us, and the default keeps its segment: 1.048x the adaptive floor at the segment's lowest M
// (11 against 10.5), not 1.08x at the edge.
TEST_F(AdaptiveFloorTest, AFloorPrunedAtTheEdgeIsTimedAgainThereBeforeItMayTakeTheSegment) {
  cublaslt.default_by_m = [](int64_t m) { return m < 62 ? std::string("h1") : std::string("enum0"); };
  timer.true_us["cublaslt:enum0"] = 10.8;  // the heuristic's own answer at the edge
  heur_below_edge = 11;
  timer.scale_for = [](const std::string& name, const MeasureOptions& o) {
    return o.warmup_replays != 0 ? 1.0 : name == "cublaslt:enum0" ? 0.86 : 0.9;
  };
  PolicyOptions o = options(true);
  o.rounds.max_finalists = 1;  // c1: enum0 is pruned
  const Decision d = run(o);
  const CandidateReport* floor = find(d, "cublaslt:enum0");
  ASSERT_NE(floor, nullptr);
  ASSERT_EQ(floor->status, "pruned");
  EXPECT_NEAR(floor->time_us, 10.8 * 0.86, 1e-9);  // its short-round time, as reported
  EXPECT_EQ(d.choice_for(64), "cublaslt:heur") << d.reason;
  EXPECT_EQ(d.choice_for(60), "cublaslt:heur");
  EXPECT_EQ(d.choice, "cublaslt:heur");
  bool checked = false, again = false;  // timed at the segment's lowest M, and at its top
  for (const CandidateReport& c : d.segments.back().candidates) {
    checked |= c.tactic == "cublaslt:adapt" && c.status == "low end";
    again |= c.tactic == "cublaslt:enum0" && c.status == "top" && std::abs(c.time_us - 10.8) < 1e-9 &&
             c.note.find("at M=64") != std::string::npos;
  }
  EXPECT_TRUE(checked);
  EXPECT_TRUE(again);
  EXPECT_NE(tuning::explain_text(d).find("timed again"), std::string::npos);
  // Where that round gives no time (over the budget, or failed: here a zero) the scaled estimate
  // (10.32 us) stands, and the floor takes the segment, as in session 20's acceptance.
  timer.scale_for = [](const std::string& name, const MeasureOptions& o) {
    return o.warmup_replays == 0 ? (name == "cublaslt:enum0" ? 0.86 : 0.9)
           : name == "cublaslt:enum0" && o.replays == 3 ? 0.0 : 1.0;
  };
  EXPECT_EQ(run(o).choice_for(64), "cublaslt:adapt");
}

// Where the default is the floor's own kernel at the top, it and the adaptive floor have the same
// time there, so the same worse regret when the top's is the larger; the adaptive floor, faster at
// the segment's lowest M, then takes the segment instead of the default (H200 session 20, 8192x1024
// at M=342: 7.51 against 7.82 us). Here c1 wins the edge (9 us against heur's 10) but is 12 us
// below it; at 60 heur takes 10.6 us and h1, the heuristic's answer there, 10.3: regrets c1 1.165,
// heur max(1.029, 1.111) and the adaptive floor max(1, 1.111).
TEST_F(AdaptiveFloorTest, OfTwoEqualRegretsTheContenderNoSlowerAtEitherEndTakesTheSegment) {
  timer.true_us["cublaslt:h1"] = 10.3;
  heur_below_edge = 10.6;
  timer.at_m = [this](const std::string& name, int64_t m, double t) {
    if (name == "cublaslt:adapt") return time_of("cublaslt:" + cublaslt.default_by_m(m), m);
    if (name == "cutlass:c1") return m < 64 ? 12.0 : 9.0;
    return name == "cublaslt:heur" && m < 64 ? heur_below_edge : t;
  };
  const Decision d = run(options(true));
  EXPECT_EQ(d.choice_for(60), "cublaslt:adapt") << d.reason;
  EXPECT_EQ(d.choice_for(64), "cublaslt:adapt");  // heur's kernel there: the edge loses nothing
  // Where the adaptive floor is slower at the lowest M, the default keeps the segment.
  timer.true_us["cublaslt:h1"] = 10.9;
  EXPECT_EQ(run(options(true)).choice_for(60), "cublaslt:heur");
}

// PolicyOptions::split_at_floor_switch. The heuristic answers h1 below 62 and enum0 from 62; at
// the edge enum0 takes 10.6 us against the default heur's 10, at the edge segment's lowest M (60)
// the adaptive floor runs h1 in 9 us against heur's 10.6. Worse regrets: heur 1.18 (at 60), the
// adaptive floor 1.06 (at 64), so without the option it takes the whole segment and the edge runs
// enum0, 1.06x the best there (H200 session 22, 4480x15680 at M=4096: 1.049x in bench). With it the
// segment is split where the heuristic turns to enum0: the adaptive floor up to 61, heur above.
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
  PolicyOptions o = options(true);
  EXPECT_FALSE(o.split_at_floor_switch);  // off here, on for tuning
  EXPECT_TRUE(tuning::policy_options(TuneOptions{}).split_at_floor_switch);
  const Decision whole = run(o);
  EXPECT_EQ(whole.choice_for(60), "cublaslt:adapt");
  EXPECT_EQ(whole.choice_for(64), "cublaslt:adapt");  // the failure mode: enum0 at the edge

  o.split_at_floor_switch = true;
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
  EXPECT_TRUE(said) << tuning::explain_text(d);
  EXPECT_NE(tuning::explain_text(d).find("takes the lower part"), std::string::npos);

  // Nothing is split where the ends agree within the threshold: enum0 1% slower at the edge.
  timer.true_us["cublaslt:enum0"] = 10.1;
  EXPECT_EQ(run(o).choice_for(64), "cublaslt:adapt");
  // ... nor where the adaptive floor is not clearly the fastest at the lowest M.
  timer.true_us["cublaslt:enum0"] = 10.6;
  h1_below = 10.5;
  EXPECT_EQ(run(o).choice_for(60), "cublaslt:heur");
}

// PolicyOptions::floor_keeps_low_kernel in the lower part of split_at_floor_switch: the heuristic
// answers h1 below 61, h3 (timed nowhere) at 61 and enum0 from 62. The split gives the adaptive
// floor (59, 61], timed at 60 only, where it ran h1; at 61 it would run h3. h1 itself takes the
// part its M tiles reach. (H200 sessions 28 and 30, 6144x4096: the split at the heuristic's switch
// to 192x56 at 209 gave the adaptive floor 193-208, timed at 193 as 64x200; it ran 128x104 at
// 200-208, and M=200 was 1.034-1.046x the best in bench.)
TEST_F(AdaptiveFloorTest, TheSplitsLowerPartKeepsTheKernelTimedAtItsLowestM) {
  cublaslt.default_by_m = [](int64_t m) { return m < 61 ? "h1" : m < 62 ? "h3" : "enum0"; };
  cublaslt.tile_height["h1"] = 64;
  timer.true_us["cublaslt:enum0"] = 10.6;
  timer.true_us["cublaslt:h3"] = 30;
  heur_below_edge = 10.6;
  timer.at_m = [&](const std::string& name, int64_t m, double t) {
    if (name == "cublaslt:adapt") return time_of("cublaslt:" + cublaslt.default_by_m(m), m);
    if (name == "cublaslt:h1") return m == 60 ? 9.0 : 11.0;  // the fastest at 60 only, not at the samples
    return name == "cublaslt:heur" && m < 64 ? heur_below_edge : t;
  };
  PolicyOptions o = options(true);
  o.split_at_floor_switch = true;
  const Decision before = run(o);
  EXPECT_EQ(before.choice_for(61), "cublaslt:adapt") << tuning::explain_text(before);  // h3 at 61
  EXPECT_EQ(before.choice_for(62), "cublaslt:heur");

  o.floor_keeps_low_kernel = true;
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(60), "cublaslt:h1") << tuning::explain_text(d);
  EXPECT_EQ(d.choice_for(61), "cublaslt:h1");  // h1's one 64-row tile reaches the part's top
  EXPECT_EQ(d.choice_for(62), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(64), "cublaslt:heur");
  EXPECT_NE(tuning::explain_text(d).find("answers cublaslt:h3 at M=61"), std::string::npos);

  // Where h1's tiles end inside the lower part, h1 takes what they reach and the adaptive floor
  // the rest: h3 at 61-62, enum0 from 63, so the lower part is (59, 62]; h1's 61-row tile reaches 61.
  cublaslt.default_by_m = [](int64_t m) { return m < 61 ? "h1" : m < 63 ? "h3" : "enum0"; };
  cublaslt.tile_height["h1"] = 61;
  const Decision short_reach = run(o);
  EXPECT_EQ(short_reach.choice_for(60), "cublaslt:h1") << tuning::explain_text(short_reach);
  EXPECT_EQ(short_reach.choice_for(61), "cublaslt:h1");
  EXPECT_EQ(short_reach.choice_for(62), "cublaslt:adapt");
  EXPECT_EQ(short_reach.choice_for(63), "cublaslt:heur");

  // Without a third kernel the lower part stays the adaptive floor's.
  cublaslt.default_by_m = [](int64_t m) { return m < 62 ? std::string("h1") : std::string("enum0"); };
  const Decision two = run(o);
  EXPECT_EQ(two.choice_for(60), "cublaslt:adapt") << tuning::explain_text(two);
  EXPECT_EQ(two.choice_for(61), "cublaslt:adapt");
  EXPECT_EQ(two.choice_for(62), "cublaslt:heur");
}

// With PolicyOptions::low_end_ties, a tactic that tied with the choice at the top joins the check
// without its output ever compared with the default's (that happens only where it takes the
// segment). The split at the heuristic's switch must not give it the upper part: here c1, 0.5%
// faster than heur at the edge (a tie) and slower at 60, with an output far off, would be the
// fastest fixed contender at the top; heur takes the upper part instead.
TEST_F(AdaptiveFloorTest, TheSplitsUpperPartGoesToAContenderWhoseOutputWasCompared) {
  cublaslt.default_by_m = [](int64_t m) { return m < 62 ? std::string("h1") : std::string("enum0"); };
  timer.true_us["cublaslt:enum0"] = 10.6;
  heur_below_edge = 10.6;
  timer.output_diff["cutlass:c1"] = 1.0;  // far beyond the tolerance
  timer.at_m = [&](const std::string& name, int64_t m, double t) {
    if (name == "cublaslt:adapt") return time_of("cublaslt:" + cublaslt.default_by_m(m), m);
    if (name == "cublaslt:h1") return m < 62 ? 9.0 : 11.0;
    if (name == "cutlass:c1") return m < 64 ? 12.0 : 9.95;
    return name == "cublaslt:heur" && m < 64 ? heur_below_edge : t;
  };
  PolicyOptions o = options(true);
  o.split_at_floor_switch = true;
  o.low_end_ties = true;
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(60), "cublaslt:adapt") << tuning::explain_text(d);
  EXPECT_EQ(d.choice_for(64), "cublaslt:heur") << tuning::explain_text(d);
  EXPECT_EQ(d.choice, "cublaslt:heur");
}

// A segment that a low-end check hands to another contender keeps as much of the bucket above its
// sampled M as the new contender's own M tiles reach; the adaptive floor's reach is that of its
// kernel at the sampled M, while the heuristic still answers it (H200 session 23, 22656x4480: the
// check at 257 gave the segment of 299, whose 128x152 tile reached 304, to the adaptive floor and
// cut it back to 299; M=300 then ran the next segment's 176xM/3 tile, 1.20x the best). Here the
// sample 53 keeps the floor's h1 (two 30-row tiles, up to 60), the check at 49 gives its segment
// to the adaptive floor, and the sample 61 keeps the table's c1, 20 us at M <= 60.
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
  PolicyOptions o = options(true);
  o.default_at = [this](const Problem& q) {
    return q.m >= 61 ? Tactic{"cutlass", "c1"} : Tactic{"cublaslt", cublaslt.default_by_m(q.m)};
  };
  const Decision d = run(o);
  ASSERT_EQ(d.sampled_ms, (std::vector<int64_t>{53, 61})) << tuning::explain_text(d);
  EXPECT_EQ(d.choice_for(49), "cublaslt:adapt") << tuning::explain_text(d);  // enum0 there, 9 us
  EXPECT_EQ(d.choice_for(53), "cublaslt:adapt");
  EXPECT_EQ(d.choice_for(57), "cublaslt:adapt");  // h1 there; the cut-back segment gave it c1 (20 us)
  EXPECT_EQ(d.choice_for(60), "cublaslt:adapt");
  EXPECT_EQ(d.choice_for(61), "cutlass:c1");
  EXPECT_EQ(d.choice_for(64), "cutlass:c1");
  // Only while the heuristic still answers h1: from 58 it answers h3, never timed, so the segment
  // ends at 57.
  cublaslt.default_by_m = [](int64_t m) { return m <= 50 ? "enum0" : m < 58 ? "h1" : m < 62 ? "h3" : "heur"; };
  const Decision h3 = run(o);
  EXPECT_EQ(h3.choice_for(57), "cublaslt:adapt") << tuning::explain_text(h3);
  EXPECT_EQ(h3.choice_for(58), "cutlass:c1");
}

TEST_F(AdaptiveFloorTest, NothingMoreIsTimedWhereTheHeuristicKeepsItsChoice) {
  cublaslt.default_by_m = nullptr;  // the heuristic answers heur at every M...
  heur_below_edge = 10;             // ...which is the best everywhere
  timer.at_m = nullptr;
  const int before = timer.measure_calls;
  const Decision off = run(options(false));
  const int calls_off = timer.measure_calls - before;
  const Decision on = run(options(true));
  EXPECT_EQ(timer.measure_calls - before - calls_off, calls_off);  // no low-end timing added
  EXPECT_EQ(on.choice, off.choice);
  EXPECT_EQ(on.choice, "cublaslt:heur");
}

// PolicyOptions::kept_floor_adapts (H200, session 9: llama70b.down M=300 ran the 128x176 tile
// that the heuristic answers at the sample 341, where it had been kept as the default, 1.15x the
// best; the heuristic answers 128x152 at 300). Here the floor answers h1 up to 55 and heur above;
// the sample 59 keeps its default heur, whose segment starts at 54, where heur is slow; its lowest
// M is not timed (no segment checks). With the option the segment runs the adaptive floor: h1 at
// 54-55, heur (the same kernel as the one timed) at 56-59.
TEST_F(AdaptiveFloorTest, AKeptFloorAnswerBecomesTheAdaptiveFloor) {
  cublaslt.default_by_m = [](int64_t m) { return m <= 55 ? std::string("h1") : std::string("heur"); };
  timer.at_m = [this](const std::string& name, int64_t m, double t) {
    if (name == "cublaslt:adapt") return time_of("cublaslt:" + cublaslt.default_by_m(m), m);
    return name == "cublaslt:heur" && m <= 55 ? 14.0 : t;
  };
  PolicyOptions o;
  o.adaptive_floor = true;
  o.default_at = [this](const Problem& q) { return Tactic{"cublaslt", cublaslt.default_by_m(q.m)}; };
  const Decision fixed = run(o);
  ASSERT_EQ(fixed.sampled_ms, (std::vector<int64_t>{53, 59}));
  EXPECT_EQ(fixed.choice_for(54), "cublaslt:heur");  // the failure mode: 14 us where h1 takes 10.5
  o.kept_floor_adapts = true;
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(54), "cublaslt:adapt");
  EXPECT_EQ(d.choice_for(59), "cublaslt:adapt");
  EXPECT_EQ(d.choice_for(53), fixed.choice_for(53));  // a challenger's win stays
  EXPECT_NE(d.choice_for(53), "cublaslt:adapt");
  EXPECT_EQ(d.choice, "cublaslt:adapt");  // the edge kept heur, the floor's answer there
  EXPECT_NE(d.reason.find("runs the adaptive floor"), std::string::npos) << d.reason;
  // A default that is not the floor's answer (a table rule) is kept as it is.
  o.default_at = [](const Problem&) { return Tactic{"cublaslt", "enum0"}; };
  timer.true_us["cublaslt:enum0"] = 9.9;
  for (const ChoiceSegment& seg : run(o).segments)
    if (seg.sampled_m < 64) EXPECT_NE(seg.tactic, "cublaslt:adapt") << seg.sampled_m;
  // Without the adaptive floor nothing changes.
  o.adaptive_floor = false;
  o.default_at = [this](const Problem& q) { return Tactic{"cublaslt", cublaslt.default_by_m(q.m)}; };
  EXPECT_EQ(run(o).choice_for(54), "cublaslt:heur");
}

TEST(PolicyOptionsTest, AdaptiveFloorIsOnByDefaultForTuning) {
  EXPECT_TRUE(tuning::policy_options(TuneOptions{}).adaptive_floor);
  EXPECT_FALSE(PolicyOptions{}.adaptive_floor);
  TuneOptions off;
  off.adaptive_floor = false;
  EXPECT_FALSE(tuning::policy_options(off).adaptive_floor);
}

TEST(PolicyOptionsTest, AKeptFloorAdaptsByDefaultForTuning) {
  EXPECT_TRUE(tuning::policy_options(TuneOptions{}).kept_floor_adapts);
  EXPECT_FALSE(PolicyOptions{}.kept_floor_adapts);
  TuneOptions off;
  off.kept_floor_adapts = false;
  EXPECT_FALSE(tuning::policy_options(off).kept_floor_adapts);
}

// A tactic the edge's short round pruned (a tile that wastes a wave at the edge) is timed at the
// samples too, the fastest pruned one only, and wins where it is the best.
TEST_F(PolicyTest, TheFastestTacticPrunedAtTheEdgeCompetesAtTheSamples) {
  timer.true_us["cublaslt:enum0"] = 14;  // pruned at the edge (> 1.3x heur's 10)...
  timer.true_us["cutlass:c0"] = 15;      // ...and this one too, slower
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    return m < 64 && name == "cublaslt:enum0" ? 6.0 : m < 64 && name == "cutlass:c0" ? 5.0 : t;
  };
  const Decision d = run();
  EXPECT_EQ(PolicyOptions{}.sampled_pruned, 1);
  EXPECT_EQ(d.choice_for(53), "cublaslt:enum0");  // c0 would be faster there, but only the fastest pruned is timed
  EXPECT_EQ(d.choice_for(64), "cublaslt:heur");
  PolicyOptions none;
  none.sampled_pruned = 0;
  EXPECT_EQ(run(none).choice_for(53), "cublaslt:heur");
}

// The lower bucket's choice (the first of `preferred`) is timed at the lowest sample, just above
// the lower edge, even where the edge pruned it and it is not the fastest pruned: on the H200 a
// 64xM/1 tile, the choice at M <= 192, was 3-4% faster at M=200 than what (192, 256] chose.
TEST_F(PolicyTest, TheLowerBucketsChoiceCompetesAtTheLowestSample) {
  timer.true_us["cutlass:c0"] = 15;      // pruned at the edge (> 1.3x heur's 10)...
  timer.true_us["cublaslt:enum0"] = 14;  // ...as is this one, the fastest pruned
  timer.at_m = [](const std::string& name, int64_t m, double t) { return m < 64 && name == "cutlass:c0" ? 6.0 : t; };
  PolicyOptions o;
  o.preferred = {"cutlass:c0", "cublaslt:h1"};  // best_of: the lower bucket's top segment first
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(64), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(53), "cutlass:c0");
  const CandidateReport* c0 = nullptr;
  for (const CandidateReport& c : d.segments.front().candidates)
    if (c.tactic == "cutlass:c0") c0 = &c;
  ASSERT_NE(c0, nullptr);
  EXPECT_EQ(c0->note, "the lower bucket's choice");
  // Only at the lowest sample.
  for (size_t i = 0; i < timer.measured.size(); ++i)
    if (timer.measured_m[i] != 53 && timer.measured_m[i] != 64)
      for (const Tactic& t : timer.measured[i]) EXPECT_NE(t.name(), "cutlass:c0") << "M=" << timer.measured_m[i];
  o.lower_choice_at_first_sample = false;
  EXPECT_EQ(run(o).choice_for(53), "cublaslt:heur");
  EXPECT_TRUE(tuning::policy_options(TuneOptions{}).lower_choice_at_first_sample);
  TuneOptions off;
  off.lower_choice_at_first_sample = false;
  EXPECT_FALSE(tuning::policy_options(off).lower_choice_at_first_sample);
}

// Opt-in: where each end of a segment prefers another tactic by more
// than the threshold (c1 25% faster at 53, 40% slower at 49), the lowest M's best takes the lower
// half instead of one of them taking it all.
TEST_F(PolicyTest, SplitSegmentsBisectsWhereTheTwoEndsChoicesCross) {
  // c1 wins at the sample 53 (8 against 10) and loses at the segment's lowest M, 49 (14), up to
  // M=50: the two ends each prefer their own.
  timer.true_us["cutlass:c1"] = 8;
  timer.at_m = [](const std::string& name, int64_t m, double t) { return name == "cutlass:c1" && m <= 50 ? 14.0 : t; };
  PolicyOptions o;
  o.check_segment_low_ends = true;
  const Decision whole = run(o);
  EXPECT_EQ(whole.choice_for(49), "cublaslt:heur");  // smaller worse regret: 1.25 against 1.4
  EXPECT_EQ(whole.choice_for(52), "cublaslt:heur");  // where c1 is 8 us
  o.split_segments = true;
  const size_t rounds_before = timer.measured_m.size();
  const Decision d = run(o);
  // The rounds of two (c1 first): the low-end check at 49, then the bisection at 51 (c1 faster:
  // the crossing is below) and 50 (heur faster: it is between 50 and 51), then the next
  // segment's low-end check at 54.
  std::vector<int64_t> bisected;
  for (size_t r = rounds_before; r < timer.measured_m.size(); ++r)
    if (timer.measured[r].size() == 2 && timer.measured[r][0].name() == "cutlass:c1") bisected.push_back(timer.measured_m[r]);
  EXPECT_EQ(bisected, (std::vector<int64_t>{49, 51, 50, 54}));
  EXPECT_EQ(d.choice_for(49), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(50), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(51), "cutlass:c1");
  EXPECT_EQ(d.choice_for(52), "cutlass:c1");
  EXPECT_EQ(d.choice_for(64), "cutlass:c1");
  bool said = false;
  int split_rows = 0;
  for (const ChoiceSegment& s : d.segments)
    for (const CandidateReport& c : s.candidates) {
      said |= c.note.find("takes the lower part, up to M=50") != std::string::npos;
      split_rows += c.status == "split";
    }
  EXPECT_TRUE(said);
  EXPECT_EQ(split_rows, 4);  // two tactics at each of 51 and 50
  // A loss at the low end within the threshold (1%; the threshold is 1.5%) splits nothing.
  timer.at_m = [](const std::string& name, int64_t m, double t) { return name == "cutlass:c1" && m <= 50 ? 10.1 : t; };
  EXPECT_EQ(run(o).choice_for(49), "cutlass:c1");
  EXPECT_FALSE(PolicyOptions{}.split_segments);
  EXPECT_FALSE(tuning::policy_options(TuneOptions{}).split_segments);
}

// A bisection round that fails (here the first, at 51) leaves the crossing unknown between the
// ends: the split is then in the middle, 49 + (53 - 49) / 2.
TEST_F(PolicyTest, SplitSegmentsWhoseBisectionFailsSplitsInTheMiddle) {
  struct FailsAt51 : FakeTimer {
    std::vector<Timing> measure(const Problem& p, const std::vector<Tactic>& c, const MeasureOptions& o) override {
      std::vector<Timing> out = FakeTimer::measure(p, c, o);
      if (p.m == 51)
        for (Timing& t : out) t.ok = false;
      return out;
    }
  } failing;
  failing.true_us = timer.true_us;
  failing.true_us["cutlass:c1"] = 8;
  failing.at_m = [](const std::string& name, int64_t m, double t) { return name == "cutlass:c1" && m <= 50 ? 14.0 : t; };
  PolicyOptions o;
  o.check_segment_low_ends = true;
  o.split_segments = true;
  const Decision d = decide(problem(64), backends(), def, def, failing, o);
  EXPECT_EQ(d.choice_for(49), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(51), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(52), "cutlass:c1");
  for (const ChoiceSegment& s : d.segments)
    for (const CandidateReport& c : s.candidates) EXPECT_NE(c.status, "split") << c.tactic << " " << c.note;
}

// PolicyOptions::low_end_ties (H200, session 10, 4608x4096: cuBLASLt's 128x72 tile, the
// heuristic's answer, and 80x128 were within 1% at the sample 213, and 128x72 was 1.15x the best
// at 200). Here c1 ties with the default heur at the sample 53 (0.5% slower) and is 1.3x faster
// at the segment's lowest M (49): with the option it takes (48, 53]; without, heur keeps it.
TEST_F(PolicyTest, ATieAtTheSampledMCompetesAtTheSegmentsLowestM) {
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    if (name == "cublaslt:heur" && m <= 50) return 13.0;
    if (name == "cutlass:c1" && m <= 53) return 10.05;
    return t;
  };
  PolicyOptions o;
  o.check_segment_low_ends = true;
  const Decision off = run(o);
  ASSERT_EQ(off.sampled_ms, (std::vector<int64_t>{53, 59}));
  EXPECT_EQ(off.choice_for(49), "cublaslt:heur");  // the failure mode: 13 us where c1 takes 10.05
  o.low_end_ties = true;
  const int compares_before = timer.compare_calls;
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(49), "cutlass:c1") << d.reason;
  EXPECT_EQ(d.choice_for(53), "cutlass:c1");
  EXPECT_EQ(d.choice_for(54), "cublaslt:heur");  // the next segment, timed at 59, is unchanged
  EXPECT_EQ(d.choice_for(64), "cublaslt:heur");
  EXPECT_GE(timer.compare_calls - compares_before, 2);  // its output, at both ends, before it won
  bool said = false;
  for (const ChoiceSegment& seg : d.segments)
    for (const CandidateReport& c : seg.candidates)
      said |= c.tactic == "cutlass:c1" && c.note.find("tied with the choice") != std::string::npos;
  EXPECT_TRUE(said);
  // An output that differs at either end keeps it out.
  timer.output_diff_at = [](const std::string& name, int64_t m) { return name == "cutlass:c1" && m == 53 ? 1.0 : 0.0; };
  EXPECT_EQ(run(o).choice_for(49), "cublaslt:heur");
  timer.output_diff_at = [](const std::string& name, int64_t) {
    return name == "cutlass:c1" ? std::nan("") : 0.0;
  };
  EXPECT_EQ(run(o).choice_for(49), "cublaslt:heur");
  timer.output_diff_at = nullptr;
  // Not a tie (2.5% slower at 53, beyond the 1.5% threshold): not a contender.
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    if (name == "cublaslt:heur" && m <= 50) return 13.0;
    if (name == "cutlass:c1" && m <= 53) return 10.25;
    return t;
  };
  EXPECT_EQ(run(o).choice_for(49), "cublaslt:heur");
  EXPECT_FALSE(PolicyOptions{}.low_end_ties);
  EXPECT_FALSE(tuning::policy_options(TuneOptions{}).low_end_ties);
}

// The low-end checks below the edge share one quarter of the key budget (the edge's segment has
// its own): at large M, where each check costs most, that is about one check per key.
TEST_F(PolicyTest, LowEndChecksBelowTheEdgeShareAQuarterOfTheKeyBudget) {
  timer.true_us["cutlass:c1"] = 8;
  timer.true_us["cublaslt:h1"] = 8;
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    if (m == 64) return name == "cublaslt:heur" ? 7.0 : t;  // the default keeps the edge
    if (m == 53) return name == "cutlass:c1" ? 5.0 : t;      // c1 wins at 53, h1 at 59
    if (m == 59) return name == "cublaslt:h1" ? 5.0 : t;
    return t;
  };
  auto low_end_checks = [&](double key_budget_ms) {
    PolicyOptions o;
    o.check_segment_low_ends = true;
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

// What `fp8gemm explain` prints and `tune --json` writes carry the segments: each sampled M's
// timings and choice, and where each choice holds.
TEST_F(PolicyTest, ExplainAndJsonShowTheSegments) {
  timer.true_us["cutlass:c1"] = 8;
  timer.true_us["cublaslt:h1"] = 9;
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    return name == "cutlass:c1" && m < 64 ? 20.0 : t;
  };
  const Decision d = run();
  const std::string text = tuning::explain_text(d);
  EXPECT_NE(text.find("at M=59 (its choice covers M up to 59"), std::string::npos) << text;  // 53 merged into it
  EXPECT_NE(text.find("segments  M<=59: cublaslt:h1"), std::string::npos) << text;
  EXPECT_NE(text.find("          M<=64: cutlass:c1"), std::string::npos) << text;
  const std::string json = tuning::decisions_to_json({d}, DeviceInfo{});
  for (const char* field : {"\"segments\"", "\"sampled_m\": 59", "\"phase_ms\"", "\"rounds\"", "\"samples\"",
                            "\"short_us\"", "\"timer_replays\""})
    EXPECT_NE(json.find(field), std::string::npos) << field;
  // The timer's share of the key: its own counters, only what this key spent.
  const double before = timer.replays_ms;
  const Decision again = run();
  ASSERT_TRUE(again.phase_ms.count("timer_replays"));
  EXPECT_DOUBLE_EQ(again.phase_ms.at("timer_replays"), timer.replays_ms - before);
  EXPECT_GT(again.phase_ms.at("timer_replays"), 0);
}

// With FP8GEMM_RECORD_CLOCK=1 the timer reports the SM clock of each measurement: the decision
// keeps the edge's full round's, and the JSON shows it; without it the field is left out.
TEST_F(PolicyTest, TheEdgeRoundsClockIsInTheDecisionWhenRecorded) {
  timer.true_us["cutlass:c1"] = 8;
  timer.true_us["cublaslt:h1"] = 9;
  const Decision plain = run();
  EXPECT_EQ(plain.clock_mhz, 0);
  EXPECT_EQ(tuning::decisions_to_json({plain}, DeviceInfo{}).find("clock_mhz"), std::string::npos);
  timer.sm_clock_mhz = 1455;
  const Decision d = run();
  EXPECT_EQ(d.clock_mhz, 1455);
  EXPECT_NE(tuning::decisions_to_json({d}, DeviceInfo{}).find("\"clock_mhz\": 1455"), std::string::npos);
}

// `fp8gemm tune` ends with where the run's time went: the policy's phases, then the timer's.
TEST(PhaseSummary, SumsEachPhaseOverTheKeysLargestFirst) {
  Decision a, b;
  a.phase_ms = {{"rounds", 1500}, {"samples", 500}, {"timer_capture", 300}, {"timer_replays", 900}};
  b.phase_ms = {{"rounds", 1000}, {"samples", 2500}, {"timer_capture", 200}};
  EXPECT_EQ(tuning::phase_summary({a, b}), "samples 3.0 s, rounds 2.5 s; timer: replays 0.9 s, capture 0.5 s");
  EXPECT_EQ(tuning::phase_summary({}), "");
}

// A sampled M applies the same rule as the edge: a challenger inside the threshold keeps the
// default there, and one whose output differs there cannot take its segment.
TEST_F(PolicyTest, SampledMKeepsTheDefaultUnlessClearlyFasterAndMatching) {
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    if (m == 53 && name == "cutlass:c1") return 9.95;  // 0.5% faster: inside the 1.5% minimum
    if (m == 59 && name == "cutlass:c0") return 5.0;   // much faster, but wrong (below)
    return t;
  };
  timer.output_diff["cutlass:c0"] = 0.5;
  const Decision d = run();
  ASSERT_EQ(d.segments.size(), 1u) << d.reason;
  EXPECT_EQ(d.segments[0].tactic, "cublaslt:heur");
  EXPECT_EQ(d.choice_for(53), "cublaslt:heur");
}

// PolicyOptions::samples_follow_edge: at a sampled M where the edge's choice is faster than the
// default by less than the threshold (a tie by the rule), the sample takes the edge's choice, so
// the bucket keeps one tactic; not where it is slower there, nor where its output differs there.
// (H200, session 8: llama70b_tp8.qkv M=3 kept the default while the edge's cp.async twin, 7.4%
// faster at M=4, was 1.2% faster at 3 in the tune and 7.7% in the bench.)
TEST_F(PolicyTest, TieAtASampledMFollowsTheEdgesChoice) {
  timer.true_us["cutlass:c1"] = 8;  // wins at the edge, 64
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    if (m < 64 && name == "cutlass:c1") return m == 53 ? 9.9 : 10.1;  // 1% faster at 53, 1% slower at 59
    return t;
  };
  PolicyOptions on;
  on.samples_follow_edge = true;
  const Decision d = run(on);
  EXPECT_EQ(d.choice, "cutlass:c1");
  EXPECT_EQ(d.choice_for(53), "cutlass:c1") << d.reason;  // the tie follows the edge
  EXPECT_EQ(d.choice_for(59), "cublaslt:heur") << d.reason;  // slower there: the default
  bool noted = false;
  for (const ChoiceSegment& seg : d.segments)
    for (const CandidateReport& c : seg.candidates) noted |= c.note.find("the edge's choice") != std::string::npos;
  EXPECT_TRUE(noted);
  // Off (PolicyOptions{}): the rule alone, so both samples keep their default.
  const Decision off = run();
  EXPECT_EQ(off.choice_for(53), "cublaslt:heur");
  EXPECT_EQ(off.choice_for(59), "cublaslt:heur");
  // A different output at the sample (only there) keeps the default there.
  timer.output_diff_at = [](const std::string& name, int64_t m) { return name == "cutlass:c1" && m < 64 ? 0.5 : 0.0; };
  const Decision wrong = run(on);
  EXPECT_EQ(wrong.choice, "cutlass:c1");
  EXPECT_EQ(wrong.choice_for(53), "cublaslt:heur");
  // The edge kept its default: nothing to follow.
  timer.output_diff_at = nullptr;
  timer.true_us["cutlass:c1"] = 9.95;
  timer.at_m = nullptr;
  for (const ChoiceSegment& seg : run(on).segments) EXPECT_EQ(seg.tactic, "cublaslt:heur");
}

// Below the edge the reference is what `auto` runs there untuned (PolicyOptions::default_at:
// table or floor, which is cuBLASLt's heuristic answer at that M), so a segment is never slower
// than the untuned default at its M.
TEST_F(PolicyTest, SampledMIsComparedWithItsOwnDefault) {
  PolicyOptions o;
  o.default_at = [](const Problem& q) { return Tactic{"cublaslt", q.m < 64 ? "enum0" : "heur"}; };
  timer.true_us["cublaslt:enum0"] = 12;
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    if (m < 64 && name == "cublaslt:enum0") return 7.0;  // the heuristic's answer below 64 is best there
    return t;
  };
  const Decision d = run(o);
  ASSERT_EQ(d.segments.size(), 2u) << d.reason;
  EXPECT_EQ(d.segments[0].default_tactic, "cublaslt:enum0");
  EXPECT_EQ(d.segments[0].tactic, "cublaslt:enum0");
  EXPECT_EQ(d.segments[1].tactic, "cublaslt:heur");
}

// cuBLASLt's heuristic lists different tactics at different M: a tactic listed only at a sampled
// M, and best there, takes that part of the bucket (on the H200, M=300 of llama8b.o ran 1.33x
// slower than a tactic that only M<=320's heuristic listed).
TEST_F(PolicyTest, TacticListedOnlyBelowTheEdgeCanWinItsPartOfTheBucket) {
  cublaslt.listed_up_to_m[59] = {"low1", "low2"};
  timer.true_us["cublaslt:low1"] = 9;
  timer.true_us["cublaslt:low2"] = 30;
  const Decision d = run();
  EXPECT_EQ(d.choice, "cublaslt:heur") << d.reason;  // not listed at the edge: not timed there
  ASSERT_EQ(d.segments.size(), 2u) << d.reason;
  EXPECT_EQ(d.segments[0].tactic, "cublaslt:low1");
  bool noted = false;
  for (const CandidateReport& c : d.segments[0].candidates)
    noted |= c.tactic == "cublaslt:low1" && c.note.find("not at the edge") != std::string::npos;
  EXPECT_TRUE(noted);
  // Without newcomers the same data keeps the edge's candidates.
  PolicyOptions o;
  o.sample_newcomers = 0;
  for (const ChoiceSegment& s : run(o).segments) EXPECT_NE(s.tactic, "cublaslt:low1");
}

// Timing below the edge has its own budget (the key's again, split over the sampled M): at
// large M, where one call takes milliseconds, fewer tactics are timed there, or none.
TEST_F(PolicyTest, SamplesStayWithinTheirBudget) {
  PolicyOptions o;
  o.key_budget_ms = 0.5;  // 250 us per sampled M: not even the default and one challenger
  const Decision d = run(o);
  EXPECT_TRUE(d.sampled_ms.empty());
  ASSERT_EQ(d.segments.size(), 1u);
  EXPECT_EQ(d.segments[0].m_max, 64);
}

TEST_F(PolicyTest, EveryCandidateIsReported) {
  const Decision d = run();
  for (const char* n : {"cublaslt:heur", "cublaslt:enum0", "cublaslt:h1", "cutlass:c0", "cutlass:c1"})
    EXPECT_NE(find(d, n), nullptr) << n;
  EXPECT_EQ(find(d, "cublaslt:heur")->status, "default");
}

TEST_F(PolicyTest, ChallengerInsideMinimumGainKeepsDefault) {
  timer.true_us["cutlass:c1"] = 9.9;  // 1% faster, below the 1.5% minimum
  const Decision d = run();
  EXPECT_EQ(d.choice, "cublaslt:heur");
  EXPECT_DOUBLE_EQ(d.threshold, 0.015);
  EXPECT_NE(d.reason.find("kept the default"), std::string::npos);
}

TEST_F(PolicyTest, ChallengerInsideNoiseFloorKeepsDefault) {
  timer.reference_repeat_scale = 1.04;  // the default timed twice differs by 4%: threshold 8%
  timer.true_us["cutlass:c1"] = 9.4;    // 6% faster: inside 2x noise
  Decision d = run();
  EXPECT_NEAR(d.noise, 0.04, 1e-9);
  EXPECT_NEAR(d.threshold, 0.08, 1e-9);
  EXPECT_EQ(d.choice, "cublaslt:heur");

  timer.true_us["cutlass:c1"] = 9.0;  // 10% faster: beyond the noise
  d = run();
  EXPECT_EQ(d.choice, "cutlass:c1");
}

// PolicyOptions::retime_in_noise. The rounds see 4% noise (threshold 8%), the longer retime
// round (7 replays, calls of >= 300 us a replay) none.
struct RetimeTest : PolicyTest {
  static bool is_retime(const MeasureOptions& o) { return o.replays == 7 && o.calls_per_replay >= 30; }
  void SetUp() override {
    PolicyTest::SetUp();
    timer.repeat_scale_for = [](const MeasureOptions& o) { return is_retime(o) ? 1.0 : 1.04; };
  }
  PolicyOptions on() {
    PolicyOptions o;
    o.retime_in_noise = true;
    return o;
  }
  // The measure() calls that timed [default, challenger, default] as a retime.
  int retimes(const std::string& challenger) const {
    int n = 0;
    for (const auto& list : timer.measured)
      n += list.size() == 3 && list[0] == def && list[2] == def && list[1].name() == challenger;
    return n;
  }
};

TEST(PolicyOptionsTest, RetimeInNoiseIsOnByDefaultForTuning) {
  EXPECT_FALSE(PolicyOptions{}.retime_in_noise);
  EXPECT_TRUE(TuneOptions{}.retime_in_noise);
  EXPECT_TRUE(tuning::policy_options(TuneOptions{}).retime_in_noise);
}

TEST_F(RetimeTest, AChallengerHeldBackByNoiseWinsWhenTheLongerRoundIsQuiet) {
  timer.true_us["cutlass:c1"] = 9.4;  // 6% faster: inside 2x 4% noise
  EXPECT_EQ(run().choice, "cublaslt:heur");  // off: held back
  EXPECT_EQ(retimes("cutlass:c1"), 0);

  const Decision d = run(on());
  EXPECT_EQ(d.choice, "cutlass:c1");
  EXPECT_NEAR(d.threshold, 0.08, 1e-9);  // the round's rule is unchanged
  EXPECT_NE(d.reason.find("within"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("timed again"), std::string::npos) << d.reason;
  EXPECT_NE(find(d, "cutlass:c1")->note.find("it wins"), std::string::npos) << find(d, "cutlass:c1")->note;
  // At the edge and at both sampled M, each within the quarter of the key budget (3 x 7.2 ms).
  EXPECT_EQ(retimes("cutlass:c1"), 3);
  ASSERT_EQ(d.segments.size(), 1u);
  EXPECT_EQ(d.segments[0].tactic, "cutlass:c1");
}

TEST_F(RetimeTest, ANoisyLongerRoundStillHoldsItBack) {
  timer.true_us["cutlass:c1"] = 9.4;
  timer.repeat_scale_for = nullptr;
  timer.reference_repeat_scale = 1.04;  // as noisy in the retime
  const Decision d = run(on());
  EXPECT_EQ(d.choice, "cublaslt:heur");
  EXPECT_GE(retimes("cutlass:c1"), 1);
  EXPECT_NE(d.reason.find("not beyond"), std::string::npos) << d.reason;
}

// PolicyOptions::retime_close_calls. The fixture's calls (10 us) are under kCloseCallUs.
struct CloseCallTest : RetimeTest {
  PolicyOptions close() {
    PolicyOptions o = on();
    o.retime_close_calls = true;
    return o;
  }
  // measure() calls that timed [a, b, a] in a retime's longer replays.
  int retimes_of(const std::string& a, const std::string& b) const {
    int n = 0;
    for (size_t i = 0; i < timer.measured.size(); ++i) {
      const auto& l = timer.measured[i];
      n += l.size() == 3 && l[0].name() == a && l[1].name() == b && l[2].name() == a;
    }
    return n;
  }
  // `name` takes `factor` x its time in the retime's longer replays only.
  void in_longer_replays(const std::string& name, double factor) {
    timer.scale_for = [name, factor](const std::string& n, const MeasureOptions& o) {
      return n == name && is_retime(o) ? factor : 1.0;
    };
  }
};

TEST(PolicyOptionsTest, RetimeCloseCallsIsOffByDefault) {
  EXPECT_FALSE(PolicyOptions{}.retime_close_calls);
  EXPECT_FALSE(TuneOptions{}.retime_close_calls);
  EXPECT_FALSE(tuning::policy_options(TuneOptions{}).retime_close_calls);
  TuneOptions t;
  t.retime_close_calls = true;
  EXPECT_TRUE(tuning::policy_options(t).retime_close_calls);
}

TEST_F(CloseCallTest, AChallengerSlowerInTheRoundButFasterInLongerReplaysTakesThePoint) {
  // c1: 10.2 us in the rounds (2% slower than the default), 8.67 in longer replays.
  in_longer_replays("cutlass:c1", 0.85);
  EXPECT_EQ(run(on()).choice, "cublaslt:heur");  // without the option: not timed again
  EXPECT_EQ(retimes_of("cublaslt:heur", "cutlass:c1"), 0);
  const Decision d = run(close());
  EXPECT_EQ(d.choice, "cutlass:c1") << d.reason;
  EXPECT_NE(d.reason.find("takes the point: a close call"), std::string::npos) << d.reason;
  EXPECT_GE(retimes_of("cublaslt:heur", "cutlass:c1"), 1);
  EXPECT_GE(timer.compare_calls, 1);  // its output was checked before it won
  // Its output differs: it does not.
  timer.output_diff["cutlass:c1"] = 0.5;
  EXPECT_EQ(run(close()).choice, "cublaslt:heur");
}

TEST_F(CloseCallTest, AWinnerThatLosesLongerReplaysToTheDefaultGivesThePointBack) {
  timer.repeat_scale_for = nullptr;  // no noise: the threshold is min_gain, 1.5%
  timer.true_us["cutlass:c1"] = 9.7;  // 3% faster in the round: it wins there
  in_longer_replays("cutlass:c1", 1.1);  // 10.67 in longer replays
  EXPECT_EQ(run(on()).choice, "cutlass:c1");
  const Decision d = run(close());
  EXPECT_EQ(d.choice, "cublaslt:heur") << d.reason;
  EXPECT_NE(d.reason.find("kept the default: cutlass:c1 beat it in the round"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("the default takes the point back"), std::string::npos) << d.reason;
  EXPECT_GE(retimes_of("cutlass:c1", "cublaslt:heur"), 1);
}

TEST_F(CloseCallTest, AnotherChallengerTakesItFromTheWinnerOnlyWithTheDefaultsOutput) {
  timer.repeat_scale_for = nullptr;
  timer.true_us["cutlass:c1"] = 9.7;   // the round's winner
  timer.true_us["cublaslt:h1"] = 9.9;  // within 5% of it, not beyond the threshold of the default
  in_longer_replays("cublaslt:h1", 0.9);
  const int compares = timer.compare_calls;
  const Decision d = run(close());
  EXPECT_EQ(d.choice, "cublaslt:h1") << d.reason;
  EXPECT_NE(d.reason.find("takes the point"), std::string::npos) << d.reason;
  EXPECT_GE(retimes_of("cutlass:c1", "cublaslt:h1"), 1);
  // Compared with the default, not only with the winner it beat.
  bool with_default = false;
  for (size_t i = size_t(compares); i < timer.compared.size(); ++i)
    with_default |= timer.compared_with[i] == def && timer.compared[i].size() == 1 &&
                    timer.compared[i][0].name() == "cublaslt:h1";
  EXPECT_TRUE(with_default);
  timer.output_diff["cublaslt:h1"] = 0.5;
  EXPECT_EQ(run(close()).choice, "cutlass:c1");
}

TEST_F(CloseCallTest, NotAtLongCallsNorBeyondTheMargin) {
  in_longer_replays("cutlass:c1", 0.85);
  for (auto& [name, us] : timer.true_us) us *= 2;  // 20 us calls: a round's replays are long enough
  EXPECT_EQ(run(close()).choice, "cublaslt:heur");
  EXPECT_EQ(retimes_of("cublaslt:heur", "cutlass:c1"), 0);
  for (auto& [name, us] : timer.true_us) us /= 2;
  timer.true_us["cutlass:c1"] = 10.6;  // 6% slower in the round: beyond the 5% margin
  timer.true_us["cublaslt:h1"] = 10.7;
  EXPECT_EQ(run(close()).choice, "cublaslt:heur");
  EXPECT_EQ(retimes_of("cublaslt:heur", "cutlass:c1"), 0);
}

TEST_F(RetimeTest, ItsOutputIsCheckedBeforeItMayWin) {
  timer.true_us["cutlass:c1"] = 9.4;
  timer.output_diff["cutlass:c1"] = 0.5;
  const Decision d = run(on());
  EXPECT_EQ(d.choice, "cublaslt:heur");
  EXPECT_EQ(find(d, "cutlass:c1")->status, "mismatch");
  EXPECT_NE(find(d, "cutlass:c1")->note.find("differs"), std::string::npos);
}

TEST_F(RetimeTest, NothingIsRetimedInsideTheMinimumGainOrBeyondTheThreshold) {
  timer.true_us["cutlass:c1"] = 9.9;  // 1%: inside min_gain
  EXPECT_EQ(run(on()).choice, "cublaslt:heur");
  EXPECT_EQ(retimes("cutlass:c1"), 0);
  timer.true_us["cutlass:c1"] = 9.0;  // 10%: beyond the threshold, the rule alone decides
  EXPECT_EQ(run(on()).choice, "cutlass:c1");
  EXPECT_EQ(retimes("cutlass:c1"), 0);
}

TEST_F(RetimeTest, ARetimeOverTheKeysBudgetIsSkippedAndSaysSo) {
  for (auto& [name, us] : timer.true_us) us *= 400;  // 4 ms calls: a retime would take ~290 ms
  timer.true_us["cutlass:c1"] = 9.4 * 400;
  const Decision d = run(on(), problem(4096));
  EXPECT_EQ(d.choice, "cublaslt:heur");
  EXPECT_EQ(retimes("cutlass:c1"), 0);
  EXPECT_NE(find(d, "cutlass:c1")->note.find("over the key's budget"), std::string::npos);
}

TEST_F(PolicyTest, TiesAreResolvedByCandidateOrderNotByChance) {
  timer.true_us["cublaslt:h1"] = 8;
  timer.true_us["cutlass:c1"] = 8;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run().choice, "cublaslt:h1");
  // A challenger exactly as fast as the default never replaces it.
  timer.true_us["cublaslt:h1"] = 10;
  timer.true_us["cutlass:c1"] = 10;
  EXPECT_EQ(run().choice, "cublaslt:heur");
}

// FlashInfer fault 3: it profiled with warm L2 and took the mean. A challenger whose first
// (warm) replay and one outlier are very fast, but whose typical replay is slower than the
// default, must lose: only the median of the round-robin replays counts.
TEST_F(PolicyTest, WarmFirstSamplesAndOutliersCannotWin) {
  timer.true_us["cutlass:c1"] = 11;
  timer.sample = [](const std::string& name, int replay, double v) {
    if (name == "cutlass:c1" && (replay == 0 || replay == 3)) return 0.5;  // warm / glitch
    return v;
  };
  const Decision d = run();
  EXPECT_EQ(d.choice, "cublaslt:heur");
  // The mean of c1's full-round samples would have beaten the default's 10 us.
  EXPECT_GT(find(d, "cutlass:c1")->time_us, 10.0);

  // An outlier in the default's own samples does not let a not-really-faster challenger win.
  timer.true_us["cutlass:c1"] = 9.95;
  timer.sample = [](const std::string& name, int replay, double v) {
    return name == "cublaslt:heur" && replay == 2 ? 10 * v : v;
  };
  EXPECT_EQ(run().choice, "cublaslt:heur");
}

// FlashInfer fault 4: a backend that throws while listing its tactics killed the process.
TEST_F(PolicyTest, BackendThrowingWhileListingIsExcludedAndTuningFinishes) {
  FakeBackend cudnn{"cudnn", {"d0"}, "d0"};
  cudnn.throw_on_list = true;
  timer.true_us["cutlass:c1"] = 8;
  const Decision d = decide(problem(64), {&cublaslt, &cudnn, &cutlass}, def, def, timer, {});
  EXPECT_EQ(d.choice, "cutlass:c1");
  ASSERT_EQ(d.excluded_backends.size(), 1u);
  EXPECT_NE(d.excluded_backends[0].find("cudnn"), std::string::npos);
  EXPECT_NE(d.excluded_backends[0].find("two copies of libcudart"), std::string::npos);
}

TEST_F(PolicyTest, UnavailableBackendAndFailingTacticsAreExcluded) {
  FakeBackend cudnn{"cudnn", {"d0"}, "d0"};
  cudnn.unavailable = true;
  timer.true_us["cutlass:c1"] = 5;
  timer.failing.insert("cutlass:c1");  // fastest on paper, but it fails to run
  timer.true_us["cublaslt:h1"] = 8;
  const Decision d = decide(problem(64), {&cublaslt, &cudnn, &cutlass}, def, def, timer, {});
  EXPECT_EQ(d.choice, "cublaslt:h1");
  EXPECT_EQ(find(d, "cutlass:c1")->status, "failed");
  ASSERT_EQ(d.excluded_backends.size(), 1u);
  EXPECT_NE(d.excluded_backends[0].find("not available"), std::string::npos);
}

TEST_F(PolicyTest, AllBackendsButTheDefaultsFailingKeepsDefault) {
  cutlass.throw_on_list = true;
  for (auto n : {"cublaslt:enum0", "cublaslt:h1"}) timer.failing.insert(n);
  const Decision d = run();
  EXPECT_EQ(d.choice, "cublaslt:heur");
}

TEST_F(PolicyTest, DefaultThatFailsToRunIsKeptWithReason) {
  timer.failing.insert("cublaslt:heur");
  timer.true_us["cutlass:c1"] = 5;
  const Decision d = run();
  EXPECT_EQ(d.choice, "cublaslt:heur");
  EXPECT_NE(d.reason.find("failed to run"), std::string::npos) << d.reason;
}

TEST_F(PolicyTest, OutputMismatchDisqualifies) {
  timer.true_us["cutlass:c1"] = 7;   // fastest, but wrong
  timer.true_us["cublaslt:h1"] = 8;  // next, and right
  timer.output_diff["cutlass:c1"] = 0.5;
  Decision d = run();
  EXPECT_EQ(d.choice, "cublaslt:h1");
  EXPECT_EQ(find(d, "cutlass:c1")->status, "mismatch");
  EXPECT_DOUBLE_EQ(find(d, "cutlass:c1")->output_diff, 0.5);

  timer.output_diff["cublaslt:h1"] = NAN;  // NaN output must not pass either
  d = run();
  EXPECT_EQ(d.choice, "cublaslt:heur");
  EXPECT_NE(d.reason.find("different output"), std::string::npos) << d.reason;
}

TEST_F(PolicyTest, OutputWithinToleranceMayWin) {
  timer.true_us["cutlass:c1"] = 8;
  timer.output_diff["cutlass:c1"] = 0.01;  // accumulation-order differences
  EXPECT_EQ(run().choice, "cutlass:c1");
}

TEST_F(PolicyTest, OnlyTheDefaultMeansNothingIsMeasured) {
  FakeBackend lonely{"cublaslt", {"heur"}, "heur"};
  const Decision d = decide(problem(64), {&lonely}, def, def, timer, {});
  EXPECT_EQ(d.choice, "cublaslt:heur");
  EXPECT_FALSE(d.measured);
  EXPECT_EQ(timer.measure_calls, 0);
}

TEST_F(PolicyTest, KeyBudgetTrimsCandidatesOfLargeProblems) {
  std::vector<std::string> many;
  for (int i = 0; i < 40; ++i) many.push_back("t" + std::to_string(i));
  FakeBackend big{"cublaslt", many, "t0"};
  const Tactic t0{"cublaslt", "t0"};
  for (auto& c : many) timer.true_us["cublaslt:" + c] = 10000;
  const Problem huge = problem(16384, 57344, 8192);  // ~15 TFLOP a call: ~15 ms
  PolicyOptions o;
  o.key_budget_ms = 100;
  const Decision d = decide(huge, {&big}, t0, t0, timer, o);
  ASSERT_FALSE(timer.measured.empty());
  std::set<std::string> measured;
  for (auto& t : timer.measured[0]) measured.insert(t.name());
  EXPECT_LT(measured.size(), 40u);
  EXPECT_GE(measured.size(), 2u);  // at least the default and one challenger
  EXPECT_EQ(timer.measured[0][0], t0);  // the default is always measured
  size_t skipped = 0;
  for (auto& c : d.candidates) skipped += c.status == "skipped";
  EXPECT_EQ(skipped, 40u - measured.size());

  // A small problem fits: every candidate is measured.
  timer.measured.clear();
  for (auto& c : many) timer.true_us["cublaslt:" + c] = 10;
  decide(problem(16), {&big}, t0, t0, timer, o);
  EXPECT_EQ(timer.measured[0].size(), 40u);
}

TEST(PolicyPlan, SmallProblemsStayWithinTheKeyBudget) {
  for (int64_t m : {1, 64, 1024, 4096}) {
    const Problem p = problem(m, 6144, 4096);
    const auto plan = tuning::plan_rounds(p, 60, PolicyOptions{});
    const double t = tuning::estimate_call_us(p);
    const MeasureOptions& sr = plan.rounds.short_round;
    const double short_ms = plan.keep * double(sr.replays + sr.warmup_replays) * sr.calls_per_replay * t / 1000;
    // One call per replay (>= 150 us) scatters: three replays, median.
    if (sr.calls_per_replay == 1) EXPECT_EQ(sr.replays, 3) << p;
    EXPECT_LE(short_ms, 100 * 0.41) << p;
    EXPECT_GE(plan.rounds.full_round.replays, 5);
    EXPECT_GE(plan.rounds.max_finalists, 1);
  }
}

// Light calls' short round has no warm-up round and no settling (a third of a light key's GPU
// time); mid-sized calls keep one warm-up; calls of >= 150 us take the median of three replays
// and are settled by the timer when heavy.
TEST(PolicyPlan, OnlyLightShortRoundsSkipTheWarmUp) {
  const auto short_round = [](int64_t m, int64_t n, int64_t k) {
    return tuning::plan_rounds(problem(m, n, k), 60, PolicyOptions{}).rounds.short_round;
  };
  const MeasureOptions light = short_round(1, 6144, 4096);
  EXPECT_GE(light.calls_per_replay, 4);
  EXPECT_EQ(light.warmup_replays, 0);
  EXPECT_FALSE(light.settle);
  for (int64_t m : {256, 1024, 16384}) {
    const MeasureOptions r = short_round(m, 28672, 4096);
    EXPECT_LT(r.calls_per_replay, 4) << m;
    EXPECT_TRUE(r.settle) << m;
    EXPECT_EQ(r.warmup_replays + r.replays >= 2, true) << m;
  }
  EXPECT_TRUE(tuning::plan_rounds(problem(1, 6144, 4096), 60, PolicyOptions{}).rounds.full_round.settle);
}

// Unlisted preferred tactics join the candidates only where their backend can run the problem.
TEST(PolicyPlan, UnlistedPreferredTacticsJoinWhereTheirBackendCanRunThem) {
  FakeBackend lt{"cublaslt", {"x"}, "x"};
  lt.listed_up_to_m[1] = {"extra", "refused"};  // known to the backend, listed at M = 1 only
  lt.cannot_implement = {"refused"};
  lt.adaptive = "adapt";
  FakeBackend cl{"cutlass", {"y"}, "y"};
  cl.throw_on_list = true;
  FakeBackend dn{"cudnn", {"z"}, "z"};
  const Problem p = problem(64);
  std::vector<Backend*> backends{&lt, &cl, &dn};
  tuning::Candidates c = tuning::gather_candidates(p, backends, Tactic{"cublaslt", "x"}, {"cublaslt", "cutlass"});
  ASSERT_EQ(c.excluded_backends.size(), 1u);
  EXPECT_EQ(c.excluded_names, (std::set<std::string>{"cutlass"}));
  const std::vector<std::string> added = tuning::add_unlisted_preferred(
      c, p, backends,
      {"cublaslt:x", "cublaslt:refused", "cutlass:y", "cublaslt:adapt", "cudnn:z", "not a tactic", "cublaslt:extra",
       "cublaslt:extra", "cublaslt:unknown"},
      {"cublaslt", "cutlass"});
  std::vector<std::string> names;
  for (const Tactic& t : c.tactics) names.push_back(t.name());
  // x listed already; refused and unknown cannot run; cutlass excluded (it threw while listing);
  // adapt is the adaptive tactic; cudnn is not allowed; extra once.
  EXPECT_EQ(names, (std::vector<std::string>{"cublaslt:x", "cublaslt:extra"}));
  EXPECT_EQ(added, (std::vector<std::string>{"cublaslt:extra"}));
}

TEST(PolicyPlan, TrimInterleavesBackendsInTheirOwnOrder) {
  std::vector<Tactic> all = {{"cublaslt", "d"}, {"cublaslt", "a1"}, {"cublaslt", "a2"}, {"cublaslt", "a3"},
                             {"cutlass", "b1"}, {"cutlass", "b2"}};
  const auto kept = tuning::trim_candidates(all, 4);
  ASSERT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept[0].config, "d");
  EXPECT_EQ(kept[1].config, "a1");
  EXPECT_EQ(kept[2].config, "b1");
  EXPECT_EQ(kept[3].config, "a2");
  // Preferred tactics (a neighbouring bucket's best) come right after the default, if listed.
  const auto pref = tuning::trim_candidates(all, 4, {"cutlass:b2", "cublaslt:gone", "cublaslt:a3"});
  ASSERT_EQ(pref.size(), 4u);
  EXPECT_EQ(pref[0].config, "d");
  EXPECT_EQ(pref[1].config, "b2");
  EXPECT_EQ(pref[2].config, "a3");
  EXPECT_EQ(pref[3].config, "a1");
}

}  // namespace
}  // namespace fp8gemm::testing
