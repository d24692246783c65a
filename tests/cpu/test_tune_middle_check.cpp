// The middle check (tune/policy/segment_checks.h check_middles): a segment's choice timed against
// untuned auto inside the segment, not only at its ends.
#include "test_tune_policy_fixture.h"

namespace fp8gemm::testing {
namespace {

// c1 is the best at the samples 53 and 59 and at the edge 64, and no slower than the default at
// each segment's lowest M (49, 54, 60), but `inside` at M = 55..58: the middle of the segment
// (53, 59], M = 56, is timed too, and where c1 is slower there beyond the threshold the default
// takes the segment's part below 59.
struct MiddleCheckTest : PolicyTest {
  double inside = 14;
  void SetUp() override {
    PolicyTest::SetUp();
    timer.true_us["cutlass:c1"] = 8;
    timer.at_m = [this](const std::string& name, int64_t m, double t) {
      return name == "cutlass:c1" && m >= 55 && m <= 58 ? inside : t;
    };
  }
};

TEST_F(MiddleCheckTest, AChoiceSlowerInsideItsSegmentKeepsOnlyWhereItWasMeasured) {
  const Decision d = run();
  EXPECT_EQ(d.choice_for(53), "cutlass:c1") << explain_text(d);
  EXPECT_EQ(d.choice_for(54), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(56), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(58), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(59), "cutlass:c1");
  EXPECT_EQ(d.choice_for(64), "cutlass:c1");
  bool timed = false, said = false;
  for (const ChoiceSegment& s : d.segments)
    for (const CandidateReport& c : s.candidates) {
      timed |= c.status == "middle" && c.note.find("at M=56") != std::string::npos;
      said |= c.status == "skipped" && c.note.find("slower than the default inside the segment") != std::string::npos;
    }
  EXPECT_TRUE(timed) << explain_text(d);
  EXPECT_TRUE(said) << explain_text(d);
}

// The side handed back runs what untuned auto runs at each of its M (here its answer changes at
// M=57), not its answer at the middle where the check timed it.
TEST_F(MiddleCheckTest, AHandedBackSideRunsUntunedAutosAnswerAtEachM) {
  PolicyOptions o;
  o.default_at = [](const Problem& q) { return Tactic{"cublaslt", q.m < 57 ? "heur" : "h1"}; };
  const Decision d = run(o);
  EXPECT_EQ(d.choice_for(53), "cutlass:c1") << explain_text(d);
  EXPECT_EQ(d.choice_for(56), "cublaslt:heur");
  EXPECT_EQ(d.choice_for(57), "cublaslt:h1");
  EXPECT_EQ(d.choice_for(58), "cublaslt:h1");
  EXPECT_EQ(d.choice_for(59), "cutlass:c1");
}

// Within the threshold (1.5% with no noise) the choice keeps its whole segment.
TEST_F(MiddleCheckTest, AMildLossInsideKeepsTheSegment) {
  inside = 10.1;
  const Decision d = run();
  EXPECT_EQ(d.choice_for(49), "cutlass:c1") << explain_text(d);
  EXPECT_EQ(d.choice_for(56), "cutlass:c1");
  ASSERT_EQ(d.segments.size(), 1u);
}

// The middle checks share a quarter of the key budget; one that does not fit leaves the segment
// as it is (its ends were checked).
TEST_F(MiddleCheckTest, AMiddleOverTheBudgetIsNotTimed) {
  PolicyOptions o;
  o.key_budget_ms = 0.001;
  timer.measured_m.clear();
  run(o);
  for (int64_t m : timer.measured_m) EXPECT_NE(m, 56);
}

}  // namespace
}  // namespace fp8gemm::testing
