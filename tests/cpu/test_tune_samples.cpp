// Below the bucket's edge (tune/policy/below_edge.h, docs/tuning.md "Segments"): the rule again at sampled M
// values, which candidates go there, and where each sampled choice holds.
#include "test_tune_policy_fixture.h"

namespace fp8gemm::testing {
namespace {

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
    return name == "cutlass:c1" && m < 60 ? 20.0 : t;  // ...but 2x slower than the default below the edge's segment
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
// short-round one (on the full round's scale): one slow full round does not keep from the samples
// a tactic that is the fastest below the edge. Here c0 is 9 us at the edge, 14 in its full round,
// and 7 below the edge, the best there.
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
  EXPECT_EQ(d.choice_for(53), "cutlass:c0") << explain_text(d);  // ...first by its short round
  EXPECT_EQ(d.choice_for(59), "cutlass:c0");
}

// A sampled M's choice holds above it as long as it needs no more M tiles there: the boundary
// to the next segment moves up (just above a sample its tiles still fit, while the next sample's
// choice may not), and the next sample is taken where that choice needs another tile, since up
// to there no other tactic can overtake it.
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
// M, and best there, takes that part of the bucket.
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
// the lower edge, even where the edge pruned it and it is not the fastest pruned: a tile fitted to
// the lower bucket's edge can be the best just above it and waste rows at this bucket's edge.
TEST_F(PolicyTest, TheLowerBucketsChoiceCompetesAtTheLowestSample) {
  timer.true_us["cutlass:c0"] = 15;      // pruned at the edge (> 1.3x heur's 10)...
  timer.true_us["cublaslt:enum0"] = 14;  // ...as is this one, the fastest pruned
  timer.at_m = [](const std::string& name, int64_t m, double t) { return m < 64 && name == "cutlass:c0" ? 6.0 : t; };
  PolicyOptions o;
  o.preferred = {"cutlass:c0", "cublaslt:h1"};  // best_of: the lower bucket's top segment first
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(64), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(53), "cutlass:c0");
  const CandidateReport* c0 = nullptr;  // its row where the sample timed it
  for (const CandidateReport& c : d.segments.front().candidates)
    if (!c0 && c.tactic == "cutlass:c0") c0 = &c;
  ASSERT_NE(c0, nullptr);
  EXPECT_EQ(c0->note, "the lower bucket's choice");
  // Only at the lowest sample: not at the other (59), where the edge's pruned enum0 is timed.
  ASSERT_EQ(d.sampled_ms, (std::vector<int64_t>{53, 59}));
  for (size_t i = 0; i < timer.measured.size(); ++i)
    if (timer.measured_m[i] == 59)
      for (const Tactic& t : timer.measured[i]) EXPECT_NE(t.name(), "cutlass:c0") << "M=" << timer.measured_m[i];
  // Without a lower bucket's choice (nothing preferred), the pruned c0 is not timed below the edge.
  const size_t rounds_before = timer.measured.size();
  EXPECT_EQ(run().choice_for(53), "cublaslt:heur");
  for (size_t i = rounds_before; i < timer.measured.size(); ++i)
    if (timer.measured_m[i] < 64)
      for (const Tactic& t : timer.measured[i]) EXPECT_NE(t.name(), "cutlass:c0") << "M=" << timer.measured_m[i];
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

// What `fp8gemm explain` prints and `tune --json` writes carry the segments: each sampled M's
// timings and choice, and where each choice holds.
TEST_F(PolicyTest, ExplainAndJsonShowTheSegments) {
  timer.true_us["cutlass:c1"] = 8;
  timer.true_us["cublaslt:h1"] = 9;
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    return name == "cutlass:c1" && m < 60 ? 20.0 : t;
  };
  const Decision d = run();
  const std::string text = explain_text(d);
  EXPECT_NE(text.find("at M=59 (its choice covers M up to 59"), std::string::npos) << text;  // 53 merged into it
  EXPECT_NE(text.find("segments  M<=59: cublaslt:h1"), std::string::npos) << text;
  EXPECT_NE(text.find("          M<=64: cutlass:c1"), std::string::npos) << text;
  const std::string json = decisions_to_json({d}, DeviceInfo{});
  for (const char* field : {"\"segments\"", "\"sampled_m\": 59", "\"phase_ms\"", "\"rounds\"", "\"samples\"",
                            "\"short_us\"", "\"timer_replays\"", "\"m\": 0"})
    EXPECT_NE(json.find(field), std::string::npos) << field;
  // The timer's share of the key: its own counters, only what this key spent.
  const double before = timer.replays_ms;
  const Decision again = run();
  ASSERT_TRUE(again.phase_ms.count("timer_replays"));
  EXPECT_DOUBLE_EQ(again.phase_ms.at("timer_replays"), timer.replays_ms - before);
  EXPECT_GT(again.phase_ms.at("timer_replays"), 0);
}

}  // namespace
}  // namespace fp8gemm::testing
