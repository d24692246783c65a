// The fixture of the policy's tests (test_tune_policy.cpp, test_tune_samples.cpp,
// test_tune_segment_checks.cpp): two fake backends, a fake timer, and decide() at the edge M=64
// of the bucket (48, 64], whose samples are 53 and 59.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_tune_fakes.h"
#include "tune/policy/decide.h"
#include "fp8gemm/tune_report.h"

namespace fp8gemm::testing {

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

}  // namespace fp8gemm::testing
