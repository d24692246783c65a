// Shared by the mid_m GPU tests: problems, the backend, its device limits, and running configs
// against the float64 reference on fresh random data with the output poisoned (VerifyCase).
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "backends/mid_m/mid_m_config.h"
#include "backends/mid_m/mid_m_layout.h"
#include "backends/mid_m/mid_m_select.h"
#include "gpu_test_util.h"
#include "fp8gemm/verify.h"

namespace fp8gemm::mid_m_test {

inline Problem make(int64_t batch, int64_t m, int64_t n, int64_t k, DType a = DType::kE4M3, DType b = DType::kE4M3,
                    DType out = DType::kBF16) {
  return testing::make_problem(batch, m, n, k, a, b, out);
}

inline Backend& mid_m_backend() {
  Backend* b = testing::test_context().backend("mid_m");
  if (!b) throw std::runtime_error("mid_m is not part of this build");
  return *b;
}

inline mid_m::DeviceLimits limits() { return mid_m::DeviceLimits::of(testing::test_context().device()); }

inline Tactic tactic(const mid_m::Config& c) { return Tactic{"mid_m", c.to_string()}; }

// Every mid_m kernel is sm_90a's.
#define SKIP_UNLESS_SM90()                                                   \
  do {                                                                       \
    FP8GEMM_SKIP_WITHOUT_GPU();                                              \
    if (testing::test_context().device().compute_capability() != 90)         \
      GTEST_SKIP() << "mid_m's wgmma kernels need sm_90";                    \
  } while (0)

// Runs `c` on vc's problem against the reference; a config the test means to run that the backend
// refuses is a failure too. Returns whether it ran.
inline bool passes_reference(VerifyCase& vc, const mid_m::Config& c) {
  const Problem& p = vc.problem();
  const Tactic t = tactic(c);
  const Verdict v = mid_m_backend().can_implement(p, t);
  if (!v) {
    ADD_FAILURE() << t.name() << " on " << p << ": " << v.reason;
    return false;
  }
  SCOPED_TRACE(p.to_string() + " " + t.name());
  const CheckResult r = vc.run(testing::test_context(), t);
  EXPECT_TRUE(r.ok) << r.to_string();
  return true;
}

// `c` with its ring shortened until it fits `p` (the widest tiles do not hold every depth).
inline mid_m::Config fitted(const Problem& p, mid_m::Config c) {
  while (c.stages > mid_m::kMinStages && !mid_m::can_implement(p, c, limits())) --c.stages;
  return c;
}

}  // namespace fp8gemm::mid_m_test
