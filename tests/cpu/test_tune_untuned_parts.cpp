// Handing part of a bucket back to untuned auto (tune/policy/segment_checks.h untuned_parts): the
// parts run untuned auto's own answer at every M, found with few host queries.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "problem_util.h"
#include "test_tune_fakes.h"
#include "tune/policy/decide.h"
#include "tune/policy/segment_checks.h"

namespace fp8gemm::testing {
namespace {

using tuning::PolicyOptions;
using tuning::untuned_parts;

struct UntunedPartsTest : ::testing::Test {
  FakeBackend cublaslt{"cublaslt", {"a", "b", "c"}, "a"};
  std::vector<Backend*> backends() { return {&cublaslt}; }
  std::set<int64_t> asked;
  PolicyOptions answering(std::function<std::string(int64_t)> by_m) {
    PolicyOptions o;
    o.default_at = [this, by_m](const Problem& q) {
      asked.insert(q.m);
      return Tactic{"cublaslt", by_m(q.m)};
    };
    return o;
  }
  static std::vector<std::pair<int64_t, std::string>> spans(const std::vector<ChoiceSegment>& parts) {
    std::vector<std::pair<int64_t, std::string>> out;
    for (const ChoiceSegment& s : parts) {
      EXPECT_EQ(s.tactic, s.default_tactic);
      out.emplace_back(s.m_max, s.tactic);
    }
    return out;
  }
};

TEST_F(UntunedPartsTest, EachRunOfOneAnswerIsOnePartWithExactBoundsAndFewQueries) {
  const PolicyOptions o = answering([](int64_t m) { return m < 700 ? "a" : m < 1501 ? "b" : "c"; });
  const auto parts = untuned_parts(problem(4096), backends(), 1, 4000, "cublaslt:a", "why", o);
  const std::vector<std::pair<int64_t, std::string>> want{{699, "cublaslt:a"}, {1500, "cublaslt:b"},
                                                          {4000, "cublaslt:c"}};
  EXPECT_EQ(spans(parts), want);
  EXPECT_LT(asked.size(), 300u);  // 256 probes and two bisections, not 4000 queries
}

TEST_F(UntunedPartsTest, OneAnswerIsOnePart) {
  const PolicyOptions o = answering([](int64_t) { return "b"; });
  const std::vector<std::pair<int64_t, std::string>> want{{200, "cublaslt:b"}};
  EXPECT_EQ(spans(untuned_parts(problem(256), backends(), 193, 200, "cublaslt:a", "why", o)), want);
}

// Where untuned auto answers the heuristic's own kernel, the part runs the adaptive floor: the
// same kernel at each M, whatever the heuristic answers there.
TEST_F(UntunedPartsTest, TheHeuristicsOwnAnswersBecomeTheAdaptiveFloor) {
  cublaslt.adaptive = "heuristic";
  cublaslt.default_by_m = [](int64_t m) { return m < 230 ? "a" : "b"; };
  const PolicyOptions o = answering([](int64_t m) { return m < 230 ? "a" : m < 250 ? "b" : "c"; });
  const std::vector<std::pair<int64_t, std::string>> want{{249, "cublaslt:heuristic"}, {256, "cublaslt:c"}};
  EXPECT_EQ(spans(untuned_parts(problem(256), backends(), 193, 256, "cublaslt:a", "why", o)), want);
}

TEST_F(UntunedPartsTest, WithoutAnAnswerTheFallbackTakesThePart) {
  const std::vector<std::pair<int64_t, std::string>> want{{300, "cublaslt:c"}};
  EXPECT_EQ(spans(untuned_parts(problem(384), backends(), 257, 300, "cublaslt:c", "why", PolicyOptions{})), want);
  EXPECT_TRUE(untuned_parts(problem(384), backends(), 300, 299, "cublaslt:c", "why", PolicyOptions{}).empty());
}

}  // namespace
}  // namespace fp8gemm::testing
