// The untimed-default check (tune/policy/segment_checks.h check_untimed_defaults): a segment's
// choice timed against each kernel untuned auto runs inside the segment, in the run of M where it
// runs it.
#include <algorithm>

#include "test_tune_policy_fixture.h"

namespace fp8gemm::testing {
namespace {

// c1 is the best at the samples 53 and 59 and at the edge 64, against untuned auto's heur. At
// M = 57..58 untuned auto runs h1 instead, which is faster there (`h1_there`): neither the low end
// (54) nor the middle (56) of the segment (53, 59] sees it.
struct UntimedDefaultTest : PolicyTest {
  double h1_there = 6;
  PolicyOptions o;
  void SetUp() override {
    PolicyTest::SetUp();
    timer.true_us["cutlass:c1"] = 8;
    timer.at_m = [this](const std::string& name, int64_t m, double t) {
      return name == "cublaslt:h1" && m >= 57 && m <= 58 ? h1_there : t;
    };
    o.default_at = [](const Problem& q) { return Tactic{"cublaslt", q.m >= 57 && q.m <= 58 ? "h1" : "heur"}; };
  }
  static bool has_row(const Decision& d, const std::string& status, const std::string& text) {
    for (const ChoiceSegment& s : d.segments)
      for (const CandidateReport& c : s.candidates)
        if (c.status == status && c.note.find(text) != std::string::npos) return true;
    return false;
  }
};

TEST_F(UntimedDefaultTest, ARunWhereUntunedAutosKernelIsFasterGoesBackToIt) {
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(56), "cutlass:c1") << explain_text(d);
  EXPECT_EQ(d.choice_for(57), "cublaslt:h1");
  EXPECT_EQ(d.choice_for(58), "cublaslt:h1");
  EXPECT_EQ(d.choice_for(59), "cutlass:c1");
  EXPECT_EQ(d.choice_for(64), "cutlass:c1");
  EXPECT_TRUE(has_row(d, "middle", "at M=57, where untuned auto runs another kernel")) << explain_text(d);
  EXPECT_TRUE(has_row(d, "skipped", "slower than untuned auto's kernel there")) << explain_text(d);
  // The choice's part below the run still names where it was timed (59), and the rows timed
  // there stay with the part that holds 59.
  for (const ChoiceSegment& s : d.segments) {
    if (s.m_max == 56) EXPECT_EQ(s.sampled_m, 59);
    if (s.m_max == 59) EXPECT_FALSE(s.candidates.empty());
    for (const CandidateReport& c : s.candidates)  // each check's row holds the M it was timed at
      if (c.note.find("where untuned auto runs another kernel") != std::string::npos) EXPECT_EQ(c.m, 57);
  }
}

// Within the threshold (1.5% with no noise) the choice keeps the run; the timing is reported.
TEST_F(UntimedDefaultTest, AMildLossKeepsTheRun) {
  h1_there = 8.05;
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(57), "cutlass:c1") << explain_text(d);
  EXPECT_EQ(d.choice_for(58), "cutlass:c1");
  EXPECT_TRUE(has_row(d, "middle", "at M=57, where untuned auto runs another kernel")) << explain_text(d);
}

// Where the middle check already timed untuned auto's kernel inside its run (h1 at 55..58, the
// middle 56), that run is not timed again.
TEST_F(UntimedDefaultTest, ARunTheMiddleCheckTimedIsNotTimedAgain) {
  o.default_at = [](const Problem& q) { return Tactic{"cublaslt", q.m >= 55 && q.m <= 58 ? "h1" : "heur"}; };
  timer.measured_m.clear();
  run(o);
  EXPECT_EQ(std::count(timer.measured_m.begin(), timer.measured_m.end(), 56), 1);
  EXPECT_EQ(std::count(timer.measured_m.begin(), timer.measured_m.end(), 57), 0);
}

// The check shares a quarter of the key budget; one that does not fit leaves the run as it is.
TEST_F(UntimedDefaultTest, ACheckOverTheBudgetIsNotTimed) {
  o.key_budget_ms = 0.001;
  timer.measured_m.clear();
  run(o);
  EXPECT_EQ(std::count(timer.measured_m.begin(), timer.measured_m.end(), 57), 0);
}

// The adaptive floor's own kernel can change inside its segment while untuned auto's does not:
// here the heuristic answers h1 below 62, heur from 62, but enum0 (20 us) at M = 63, and untuned
// auto runs heur throughout (14 us below the edge). The adaptive floor takes the edge's segment on
// its times at 60 and 64; M = 63, where it would run enum0, goes back to untuned auto's heur.
struct AdaptiveUntimedTest : PolicyTest {
  PolicyOptions o;
  void SetUp() override {
    PolicyTest::SetUp();
    cublaslt.adaptive = "adapt";
    cublaslt.default_by_m = [](int64_t m) { return m < 62 ? "h1" : m == 63 ? "enum0" : "heur"; };
    timer.true_us["cublaslt:adapt"] = 0;  // timed as whatever the floor at that M is
    timer.true_us["cublaslt:enum0"] = 20;
    timer.at_m = [this](const std::string& name, int64_t m, double) {
      const std::string kernel = name == "cublaslt:adapt" ? "cublaslt:" + cublaslt.default_by_m(m) : name;
      return kernel == "cublaslt:heur" && m < 64 ? 14.0 : timer.true_us.at(kernel);
    };
    o.default_at = [](const Problem&) { return Tactic{"cublaslt", "heur"}; };
  }
};

TEST_F(AdaptiveUntimedTest, ARunWhereTheAdaptiveFloorRunsAnotherKernelIsChecked) {
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(60), "cublaslt:adapt") << explain_text(d);
  EXPECT_EQ(d.choice_for(63), "cublaslt:heur") << explain_text(d);
  EXPECT_EQ(d.choice_for(64), "cublaslt:adapt");
  EXPECT_TRUE(UntimedDefaultTest::has_row(d, "middle", "at M=63, where the adaptive floor or untuned auto"))
      << explain_text(d);
}

}  // namespace
}  // namespace fp8gemm::testing
