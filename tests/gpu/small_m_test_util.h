// Shared by the small_m GPU tests: problems, the backend, configs by family, and the sweeps that run
// configs against the float64 reference on fresh random data with the output poisoned.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <utility>

#include "backends/small_m/small_m_config.h"
#include "backends/small_m/small_m_layout.h"
#include "gpu_test_util.h"
#include "fp8gemm/verify.h"

namespace fp8gemm::small_m_test {

inline Problem make(int64_t batch, int64_t m, int64_t n, int64_t k, DType a = DType::kE4M3, DType b = DType::kE4M3,
                    DType out = DType::kBF16) {
  Problem p;
  p.batch = batch;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_type = a;
  p.b_type = b;
  p.out_type = out;
  return p;
}

inline Backend& small_m_backend() {
  Backend* b = testing::test_context().backend("small_m");
  if (!b) throw std::runtime_error("small_m is not part of this build");
  return *b;
}

inline bool small_backend_can(const Problem& p, const Tactic& t) { return small_m_backend().can_implement(p, t).ok; }

using small_m::Pdl;

// A TMA ring config with PDL at start (pdl=1) or off (pdl=0), and any config with the late trigger.
inline small_m::Config tma(int rows, int splitk, int stages, bool pdl) {
  return small_m::tma_ring(rows, splitk, stages, pdl ? Pdl::kAtStart : Pdl::kOff);
}
inline small_m::Config late(small_m::Config c) { return small_m::with_pdl(c, Pdl::kAfterKLoop); }

// Every small_m kernel is sm_90a's.
#define SKIP_UNLESS_SM90()                                                          \
  do {                                                                              \
    FP8GEMM_SKIP_WITHOUT_GPU();                                                     \
    if (testing::test_context().device().compute_capability() != 90)                \
      GTEST_SKIP() << "small_m's wgmma kernels need sm_90";                          \
  } while (0)

inline void expect_ok(VerifyCase& vc, const Tactic& t) {
  SCOPED_TRACE(vc.problem().to_string() + " " + t.name());
  const CheckResult r = vc.run(testing::test_context(), t);
  EXPECT_TRUE(r.ok) << r.to_string();
}

// Runs t on vc's problem against the reference. A tactic the test means to run that the backend
// refuses is a failure too. Returns whether it ran.
inline bool passes_reference(Backend& be, const Problem& p, VerifyCase& vc, const Tactic& t) {
  const Verdict v = be.can_implement(p, t);
  if (!v) {
    ADD_FAILURE() << t.name() << ": " << v.reason;
    return false;
  }
  SCOPED_TRACE(p.to_string() + " " + t.name());
  const CheckResult r = vc.run(testing::test_context(), t);
  EXPECT_TRUE(r.ok) << r.to_string();
  return true;
}

// Every dtype pair x bf16/fp16 output on one ragged problem (batch 2, m 13 unless given, n 336, k
// 1088: a partial 128-row tile and a K tail), for each config (wrapped, e.g. with_cp_weights).
inline void passes_every_dtype_pair(Backend& be, uint64_t& seed, std::initializer_list<small_m::Config> configs,
                                    small_m::Config (*wrap)(small_m::Config) = [](small_m::Config c) { return c; },
                                    int64_t m = 13) {
  const std::pair<DType, DType> pairs[] = {
      {DType::kE4M3, DType::kE4M3}, {DType::kE4M3, DType::kE5M2}, {DType::kE5M2, DType::kE4M3}};
  for (auto [a, b] : pairs)
    for (DType out : {DType::kBF16, DType::kFP16}) {
      const Problem p = make(2, m, 336, 1088, a, b, out);
      VerifyCase vc(p, seed++);
      for (const small_m::Config& c : configs) passes_reference(be, p, vc, Tactic{"small_m", wrap(c).to_string()});
    }
}

// One weight path's sweep (configs wrapped, e.g. with_cp_weights): for m = 1, 8, 9, 16, 23, 32 on a
// batch-2 problem with n = 208 (ragged against 64- and 128-row tiles) and the given k, `reps`
// configs per entry of `rows_list`, walking ring depths 2..16 (the deepest that fits shared memory
// where the wanted one does not), split-K 1, 2, 3, 5, 8 and PDL on/off. Returns how many ran.
inline int sweep_weight_path(Backend& be, uint64_t& seed, int64_t k, std::initializer_list<int> rows_list, int reps,
                             small_m::Config (*wrap)(small_m::Config)) {
  const int stages_list[] = {2, 3, 4, 8, 12, 16};
  const int splitk_list[] = {1, 2, 3, 5, 8};
  int ran = 0, pick = 0;
  for (int64_t m : {1, 8, 9, 16, 23, 32}) {
    const Problem p = make(2, m, 208, k);
    VerifyCase vc(p, seed++);
    for (int rows : rows_list)
      for (int rep = 0; rep < reps; ++rep, ++pick) {
        const int splitk = splitk_list[(pick * 7) % 5];
        const bool pdl = (pick / 6) % 2 == 0;
        small_m::Config c = wrap(tma(rows, splitk, stages_list[pick % 6], pdl));
        while (c.stages > 2 && !small_backend_can(p, {"small_m", c.to_string()})) --c.stages;
        ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
      }
  }
  return ran;
}

// One-shot configs on each K of `ks` (by default 17 blocks with a 16-byte tail, 8 blocks and 1
// block), for each m: a TMA and a cp.async config from config_of(pick, k, pdl) with pdl 0/1/2 by
// turns, the ring shortened until the problem (problem_of(pick, m, k)) fits and early=stages/2 on
// every fourth TMA one with PDL, each run against the reference. Returns how many ran.
template <class ProblemOf, class ConfigOf>
inline int sweep_one_shot(Backend& be, uint64_t& seed, std::initializer_list<int64_t> ms, ProblemOf problem_of,
                          ConfigOf config_of, std::initializer_list<int64_t> ks = {2064, 1024, 128}) {
  int ran = 0, pick = 0;
  for (int64_t k : ks)
    for (int64_t m : ms) {
      const Problem p = problem_of(pick, m, k);
      VerifyCase vc(p, seed++);
      for (bool cp : {false, true}) {
        ++pick;
        const int pdl = pick % 3;
        small_m::Config c = config_of(pick, k, pdl > 0);
        if (pdl == 2) c = late(c);
        if (cp) c = small_m::with_cp_weights(c);
        while (c.stages > 2 && !small_backend_can(p, {"small_m", c.to_string()})) --c.stages;
        if (!cp && pdl > 0 && c.stages > 2 && pick % 4 == 0) c = small_m::with_early(c, c.stages / 2);
        ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
      }
    }
  return ran;
}

}  // namespace fp8gemm::small_m_test
