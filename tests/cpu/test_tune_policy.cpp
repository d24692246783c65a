// The rule at the bucket's edge against fake backends and a fake timer (tune/policy/decide.h): noise,
// the retime of a challenger held back by it, ties, outliers (FlashInfer fault 3), a backend that
// throws while listing (fault 4), failing backends and tactics, output mismatches, budgets.
#include "test_tune_policy_fixture.h"

#include <cmath>
#include <set>

namespace fp8gemm::testing {
namespace {

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

// The retime of a challenger held back by noise. The rounds see 4% noise (threshold 8%), the longer retime
// round (7 replays, calls of >= 300 us a replay) none.
struct RetimeTest : PolicyTest {
  static bool is_retime(const MeasureOptions& o) { return o.replays == 7 && o.calls_per_replay >= 30; }
  void SetUp() override {
    PolicyTest::SetUp();
    timer.repeat_scale_for = [](const MeasureOptions& o) { return is_retime(o) ? 1.0 : 1.04; };
  }
  // The measure() calls that timed [default, challenger, default] as a retime.
  int retimes(const std::string& challenger) const {
    int n = 0;
    for (const auto& list : timer.measured)
      n += list.size() == 3 && list[0] == def && list[2] == def && list[1].name() == challenger;
    return n;
  }
};

TEST_F(RetimeTest, AChallengerHeldBackByNoiseWinsWhenTheLongerRoundIsQuiet) {
  timer.true_us["cutlass:c1"] = 9.4;  // 6% faster: inside 2x 4% noise
  const Decision d = run();
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
  const Decision d = run();
  EXPECT_EQ(d.choice, "cublaslt:heur");
  EXPECT_GE(retimes("cutlass:c1"), 1);
  EXPECT_NE(d.reason.find("not beyond"), std::string::npos) << d.reason;
}

TEST_F(RetimeTest, ItsOutputIsCheckedBeforeItMayWin) {
  timer.true_us["cutlass:c1"] = 9.4;
  timer.output_diff["cutlass:c1"] = 0.5;
  const Decision d = run();
  EXPECT_EQ(d.choice, "cublaslt:heur");
  EXPECT_EQ(find(d, "cutlass:c1")->status, "mismatch");
  EXPECT_NE(find(d, "cutlass:c1")->note.find("differs"), std::string::npos);
}

TEST_F(RetimeTest, NothingIsRetimedInsideTheMinimumGainOrBeyondTheThreshold) {
  timer.true_us["cutlass:c1"] = 9.9;  // 1%: inside min_gain
  EXPECT_EQ(run().choice, "cublaslt:heur");
  EXPECT_EQ(retimes("cutlass:c1"), 0);
  timer.true_us["cutlass:c1"] = 9.0;  // 10%: beyond the threshold, the rule alone decides
  EXPECT_EQ(run().choice, "cutlass:c1");
  EXPECT_EQ(retimes("cutlass:c1"), 0);
}

TEST_F(RetimeTest, ARetimeOverTheKeysBudgetIsSkippedAndSaysSo) {
  for (auto& [name, us] : timer.true_us) us *= 400;  // 4 ms calls: a retime would take ~290 ms
  timer.true_us["cutlass:c1"] = 9.4 * 400;
  const Decision d = run({}, problem(4096));
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

// `fp8gemm tune` ends with where the run's time went: the policy's phases, then the timer's.
TEST(PhaseSummary, SumsEachPhaseOverTheKeysLargestFirst) {
  Decision a, b;
  a.phase_ms = {{"rounds", 1500}, {"samples", 500}, {"timer_capture", 300}, {"timer_replays", 900}};
  b.phase_ms = {{"rounds", 1000}, {"samples", 2500}, {"timer_capture", 200}};
  EXPECT_EQ(phase_summary({a, b}), "samples 3.0 s, rounds 2.5 s; timer: replays 0.9 s, capture 0.5 s");
  EXPECT_EQ(phase_summary({}), "");
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
