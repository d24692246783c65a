// small_m against the float64 reference: every tactic the backend offers, plus a sweep that
// reaches every kernel instantiation, on fresh random data with the output poisoned.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "backends/small_m/small_m_config.h"
#include "gpu_test_util.h"
#include "measure/verify.h"

namespace fp8gemm {
namespace {

Problem make(int64_t batch, int64_t m, int64_t n, int64_t k, DType a = DType::kE4M3, DType b = DType::kE4M3,
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

Backend& small_m_backend() {
  Backend* b = testing::test_context().backend("small_m");
  if (!b) throw std::runtime_error("small_m is not part of this build");
  return *b;
}

bool small_backend_can(const Problem& p, const Tactic& t) { return small_m_backend().can_implement(p, t).ok; }

void expect_ok(VerifyCase& vc, const Tactic& t) {
  SCOPED_TRACE(vc.problem().to_string() + " " + t.name());
  const CheckResult r = vc.run(testing::test_context(), t);
  EXPECT_TRUE(r.ok) << r.to_string();
}

TEST(SmallM, IsAvailableOnThisGpu) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  const Verdict v = small_m_backend().available();
  EXPECT_TRUE(v.ok) << v.reason;
}

// Every tactic tactics() returns, on shapes with odd M, tiny and ragged N, K tails, batch > 1.
TEST(SmallM, EveryOfferedTacticMatchesTheReference) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Backend& be = small_m_backend();
  const Problem problems[] = {
      make(1, 1, 16, 16),       make(1, 3, 48, 80),        make(2, 7, 4080, 272),
      make(1, 8, 4096, 1024),   make(3, 9, 160, 4112),     make(1, 16, 1280, 8192),
      make(1, 17, 96, 1040),    make(2, 24, 4080, 528),    make(1, 31, 48, 32768),
      make(1, 32, 512, 2064),   make(1, 5, 48, 32768),     make(4, 2, 64, 336),
  };
  uint64_t seed = 1;
  for (const Problem& p : problems) {
    const auto tactics = be.tactics(p);
    ASSERT_FALSE(tactics.empty()) << p;
    EXPECT_EQ(tactics.front(), be.default_tactic(p));
    VerifyCase vc(p, seed++);  // one reference per problem: the expensive part
    for (const Tactic& t : tactics) expect_ok(vc, t);
  }
}

TEST(SmallM, AllDtypePairsAndOutputTypes) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Backend& be = small_m_backend();
  const std::pair<DType, DType> pairs[] = {
      {DType::kE4M3, DType::kE4M3}, {DType::kE4M3, DType::kE5M2}, {DType::kE5M2, DType::kE4M3}};
  uint64_t seed = 100;
  for (auto [a, b] : pairs)
    for (DType out : {DType::kBF16, DType::kFP16})
      for (int64_t m : {1, 13, 32}) {
        const Problem p = make(2, m, 208, 1088, a, b, out);
        VerifyCase vc(p, seed++);
        for (const Tactic& t : be.tactics(p)) expect_ok(vc, t);
      }
}

// Every (rows, stages, m tiles) instantiation with a deterministic sample of warp counts,
// split-K 1..8 and PDL (the full cross product took > 75 s): each instantiation runs twice, the
// (warps, splitk) pairs rotating so that every warp count and split appears.
TEST(SmallM, EveryInstantiationAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Backend& be = small_m_backend();
  const int warps_list[] = {1, 2, 4, 8};
  const int splitk_list[] = {1, 2, 3, 8};
  uint64_t seed = 1000;
  int ran = 0, pick = 0;
  for (int64_t m : {1, 11, 19, 32}) {
    const Problem p = make(2, m, 176, 2064);  // 32 full 64-byte chunks and a 16-byte tail
    VerifyCase vc(p, seed++);
    for (int rows : {16, 32, 64})
      for (int stages : {1, 2, 4})
        for (int rep = 0; rep < 2; ++rep) {
          // Next (warps, splitk) in the rotation that this instantiation can run.
          for (int tries = 0; tries < 16; ++tries, ++pick) {
            const int warps = warps_list[pick % 4], splitk = splitk_list[(pick / 4 + pick) % 4];
            const small_m::Config c{rows, splitk, warps, stages, pick % 3 == 1};
            if (!small_m::config_exists(c)) break;  // no such instantiation
            const Tactic t{"small_m", c.to_string()};
            if (!be.can_implement(p, t)) continue;
            SCOPED_TRACE(p.to_string() + " " + t.name());
            const CheckResult r = vc.run(testing::test_context(), t);
            EXPECT_TRUE(r.ok) << r.to_string();
            ++ran;
            ++pick;
            break;
          }
        }
  }
  EXPECT_GT(ran, 30);
}

// Runs t on vc's problem against the reference. A tactic the test means to run that the backend
// refuses is a failure too. Returns whether it ran.
bool passes_reference(Backend& be, const Problem& p, VerifyCase& vc, const Tactic& t) {
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
void passes_every_dtype_pair(Backend& be, uint64_t& seed, std::initializer_list<small_m::Config> configs,
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

// v3 (wgmma): every (rows, N instantiation) with ring depths 2..16, split-K 1..8 and PDL,
// ragged N against 64- and 128-row tiles, a K tail, batch 2, on one problem per m.
TEST(SmallM, WgmmaEveryInstantiationAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  const int stages_list[] = {2, 3, 4, 8, 12, 16};
  const int splitk_list[] = {1, 2, 3, 5, 8};
  uint64_t seed = 3000;
  int ran = 0, pick = 0;
  for (int64_t m : {1, 8, 9, 16, 23, 25, 32}) {
    const Problem p = make(2, m, 208, 2064);  // 3.25 tiles of 64 rows; 16 full K blocks + 16 bytes
    VerifyCase vc(p, seed++);
    for (int rows : {64, 128})
      for (int rep = 0; rep < 3; ++rep, ++pick) {
        const int splitk = splitk_list[(pick * 7) % 5];
        int stages = stages_list[pick % 6];
        // The deepest rings of the widest tiles do not fit shared memory: the deepest that does.
        while (stages > 2 && !small_backend_can(p, {"small_m", small_m::wgmma_config(rows, splitk, stages, false).to_string()}))
          --stages;
        const small_m::Config c = small_m::wgmma_config(rows, splitk, stages, (pick / 6) % 2 == 0, (pick % 4 == 1) ? 3 : (pick % 4 == 3) ? 64 : 0);
        ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
      }
  }
  EXPECT_EQ(ran, 42);
}

// One weight path's sweep (configs wrapped, e.g. with_cp_weights): for m = 1, 8, 9, 16, 23, 32 on a
// batch-2 problem with n = 208 (ragged against 64- and 128-row tiles) and the given k, `reps`
// configs per entry of `rows_list`, walking ring depths 2..16 (the deepest that fits shared memory
// where the wanted one does not), split-K 1, 2, 3, 5, 8 and PDL on/off. Returns how many ran.
int sweep_weight_path(Backend& be, uint64_t& seed, int64_t k, std::initializer_list<int> rows_list, int reps,
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
        small_m::Config c = wrap(small_m::wgmma_config(rows, splitk, stages_list[pick % 6], pdl));
        while (c.stages > 2 && !small_backend_can(p, {"small_m", c.to_string()})) --c.stages;
        ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
      }
  }
  return ran;
}

// v3 with cp.async weights (",wload=cp"): every (rows, N instantiation) with ring depths 2..16,
// split-K 1..8 (8 over 17 K blocks leaves the last ranks without K) and PDL on/off, ragged N
// (208 rows: zero-filled copies past n) against 64- and 128-row tiles, a 16-byte K tail
// (zero-filled chunks), batch 2; then every dtype pair and output type.
TEST(SmallM, WgmmaCpWeightsEveryInstantiationAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  uint64_t seed = 9000;
  // k = 2064: 16 full K blocks + 16 bytes.
  EXPECT_EQ(sweep_weight_path(be, seed, 2064, {64, 128}, 3, small_m::with_cp_weights), 36);
  passes_every_dtype_pair(be, seed, {small_m::wgmma_config(64, 2, 4, true), small_m::wgmma_config(128, 3, 8, false)},
                          small_m::with_cp_weights);
}

// One-shot configs on each K of `ks` (by default 17 blocks with a 16-byte tail, 8 blocks and 1
// block), for each m: a TMA and a cp.async config from config_of(pick, k, pdl) with pdl 0/1/2 by
// turns, the ring shortened until the problem (problem_of(pick, m, k)) fits and early=stages/2 on
// every fourth TMA one with PDL, each run against the reference. Returns how many ran.
template <class ProblemOf, class ConfigOf>
int sweep_one_shot(Backend& be, uint64_t& seed, std::initializer_list<int64_t> ms, ProblemOf problem_of,
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
        if (pdl == 2) c = small_m::with_late_trigger(c);
        if (cp) c = small_m::with_cp_weights(c);
        while (c.stages > 2 && !small_backend_can(p, {"small_m", c.to_string()})) --c.stages;
        if (!cp && pdl > 0 && c.stages > 2 && pick % 4 == 0) c = small_m::with_early(c, c.stages / 2);
        ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
      }
    }
  return ran;
}

// rows=32 (K pairs: the block's 32 weight rows for two K blocks per stage, the halves added in the
// epilogue), TMA and cp.async weights: m = 1, 7, 8, 9, 16 (both N instantiations), n = 208 (6.5
// tiles of 32: zero-filled rows past n), batch 2, and K of 17 blocks with a 16-byte tail (an odd
// count: the last pair reads past the tensor), 8 blocks (whole pairs) and 1 block (half a pair);
// split-K 1..8 as far as every rank gets a pair, rings 2..16, pdl 0/1/2 and early; then every
// dtype pair and output type.
TEST(SmallM, WgmmaKPairsEveryInstantiationAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  const int stages_list[] = {2, 3, 5, 8, 12, 16};
  const int splitk_list[] = {1, 2, 3, 5, 8};
  uint64_t seed = 9700;
  const int ran = sweep_one_shot(
      be, seed, {1, 7, 8, 9, 16}, [](int, int64_t m, int64_t k) { return make(2, m, 208, k); },
      [&](int pick, int64_t k, bool pdl) {
        const int pairs = int((k + 255) / 256);
        return small_m::wgmma_config(32, std::min(splitk_list[(pick * 7) % 5], pairs), stages_list[pick % 6], pdl);
      });
  EXPECT_EQ(ran, 30);
  passes_every_dtype_pair(be, seed, {small_m::wgmma_config(32, 1, 6, true), small_m::wgmma_config(32, 3, 4, false)});
  passes_every_dtype_pair(be, seed, {small_m::wgmma_config(32, 2, 8, true), small_m::wgmma_config(32, 1, 16, false)},
                          small_m::with_cp_weights);
}

// rows=32 with kblocks=2 (two K pairs, four K blocks, a stage), TMA and cp.async weights: m = 1,
// 7, 8, 9, 16 (both N instantiations), n = 208 (zero-filled rows past n), batch 2, K of 17 blocks
// with a 16-byte tail (9 pairs: the last stage holds one pair and a zero-filled one, and the last
// pair is half past the tensor), 8 blocks (whole stages), 5 blocks (3 pairs) and 1 block (half a
// pair in a stage of two); split-K 1..8 as far as every rank gets a pair (ranks' ranges end
// mid-stage), rings 2..12, pdl 0/1/2 and early; then every dtype pair and output type.
TEST(SmallM, WgmmaKPairsTwoAStageEveryInstantiationAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  const int stages_list[] = {2, 3, 5, 8, 12};
  const int splitk_list[] = {1, 2, 3, 5, 8};
  uint64_t seed = 9750;
  const auto two_pairs = [](small_m::Config c) { return small_m::with_kblocks(c, 2); };
  const int ran = sweep_one_shot(
      be, seed, {1, 7, 8, 9, 16}, [](int, int64_t m, int64_t k) { return make(2, m, 208, k); },
      [&](int pick, int64_t k, bool pdl) {
        const int pairs = int((k + 255) / 256);
        return two_pairs(
            small_m::wgmma_config(32, std::min(splitk_list[(pick * 3) % 5], pairs), stages_list[pick % 5], pdl));
      },
      {2064, 1024, 640, 128});
  EXPECT_EQ(ran, 40);
  passes_every_dtype_pair(be, seed, {two_pairs(small_m::wgmma_config(32, 1, 5, true)),
                                     two_pairs(small_m::wgmma_config(32, 3, 3, false))});
  passes_every_dtype_pair(be, seed, {two_pairs(small_m::wgmma_config(32, 2, 4, true)),
                                     two_pairs(small_m::wgmma_config(32, 1, 8, false))},
                          small_m::with_cp_weights);
}

// Fitted rows (33..127 but 64): one and two warpgroups whose MMA rows past the block's rows are
// never stored (with TMA weights they read the activation tile and the next stage; cp.async
// zero-fills them): rows 33..127
// over every N instantiation (m 1..32), 208 and 336 rows (a partial last block), K of 17 blocks
// with a 16-byte tail, 8 blocks and 1 block, split-K up to 8, rings 2..16, pdl 0/1/2 and early,
// batch 2, both weight paths; then every dtype pair and output type.
TEST(SmallM, WgmmaFittedRowsEveryInstantiationAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  const int rows_list[] = {33, 40, 47, 63, 65, 100, 127};
  const int stages_list[] = {2, 3, 5, 8, 12, 16};
  const int splitk_list[] = {1, 2, 3, 5, 8};
  uint64_t seed = 9800;
  const int ran = sweep_one_shot(
      be, seed, {1, 8, 9, 17, 32}, [](int pick, int64_t m, int64_t k) { return make(2, m, pick % 2 ? 336 : 208, k); },
      [&](int pick, int64_t k, bool pdl) {
        const int kblocks = int((k + 127) / 128);
        return small_m::wgmma_config(rows_list[pick % 7], std::min(splitk_list[(pick * 3) % 5], kblocks),
                                     stages_list[pick % 6], pdl);
      });
  EXPECT_EQ(ran, 30);
  passes_every_dtype_pair(be, seed, {small_m::wgmma_config(34, 1, 6, true), small_m::wgmma_config(100, 3, 4, false)});
  passes_every_dtype_pair(be, seed, {small_m::wgmma_config(71, 2, 8, true), small_m::wgmma_config(47, 1, 16, false)},
                          small_m::with_cp_weights);
}

// Rings of 17..32 stages (one-shot kernels, run when named): K pairs, fitted rows (34, 48) and
// 64-row blocks (two warpgroups' stages are too large for 17), on K of 72 blocks with a 16-byte
// tail (the ring wraps two to four times) and 32 blocks (it does not), m 1..16, split-K 1..3, pdl
// 0/1/2 and early, batch 2, both weight paths.
TEST(SmallM, WgmmaDeepRingsEveryKindAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  const int rows_list[] = {32, 34, 48, 64};
  const int stages_list[] = {17, 24, 32};
  uint64_t seed = 9900;
  const int ran = sweep_one_shot(
      be, seed, {1, 9, 16}, [](int, int64_t m, int64_t k) { return make(2, m, 208, k); },
      [&](int pick, int64_t, bool pdl) {
        return small_m::wgmma_config(rows_list[pick % 4], 1 + (pick / 4) % 3, stages_list[pick % 3], pdl);
      },
      {9232, 4096});
  EXPECT_EQ(ran, 12);
  int deep = 0;  // the sweep shortens rings that do not fit: count those it kept deep
  for (int rows : rows_list)
    for (bool cp : {false, true}) {
      small_m::Config c = small_m::wgmma_config(rows, 1, 32, true);
      if (cp) c = small_m::with_cp_weights(c);
      while (!small_backend_can(make(2, 16, 208, 9232), {"small_m", c.to_string()})) --c.stages;
      deep += c.stages > small_m::kWgmmaMaxStages;
    }
  EXPECT_EQ(deep, 8);
}

// kblocks=2 and 4 (K blocks per ring stage, the one-shot TMA and cp.async kernels): 64 and 128
// rows, fitted rows of one and two warpgroups (with cp.async on the compact tiles), m 1..32, K of
// 17 blocks with a 16-byte tail (a last stage of one K block), 8 and 1 (a stage with fewer K
// blocks than it holds), split-K 1..5 (ranges that end mid-stage), rings 2..12, pdl 0/1/2 and
// early (TMA), ragged n (208 rows) and batch 2, both weight paths; then every dtype pair and
// output type.
TEST(SmallM, WgmmaKBlocksPerStageEveryKindAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  const int rows_list[] = {64, 34, 128, 47, 100, 78};  // cp.async: 34, 47 and 78 on compact tiles
  const int stages_list[] = {2, 3, 5, 8, 12};
  const int splitk_list[] = {1, 2, 3, 5};
  uint64_t seed = 10100;
  int ran = 0, pick = 0;
  for (int64_t k : {2064, 1024, 128})
    for (int64_t m : {1, 8, 9, 17, 32}) {
      const Problem p = make(2, m, 208, k);
      VerifyCase vc(p, seed++);
      for (int kb : {2, 4})
        for (bool cp : {false, true}) {
          ++pick;
          const int kblocks = int((k + 127) / 128), pdl = pick % 3;
          small_m::Config c = small_m::wgmma_config(rows_list[pick % 6], std::min(splitk_list[pick % 4], kblocks),
                                                    stages_list[(pick * 3) % 5], pdl > 0);
          c.kblocks = kb;
          if (cp) c = small_m::with_cp_weights(c);
          if (pdl == 2) c = small_m::with_late_trigger(c);
          while (c.stages > 2 && !small_backend_can(p, {"small_m", c.to_string()})) --c.stages;
          if (!cp && pdl > 0 && c.stages > 2 && pick % 4 == 1) c = small_m::with_early(c, c.stages / 2);
          ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
        }
    }
  EXPECT_EQ(ran, 60);
  small_m::Config a = small_m::wgmma_config(34, 1, 6, true), b = small_m::wgmma_config(100, 3, 4, false);
  a.kblocks = 4;
  b.kblocks = 2;
  small_m::Config a_cp = small_m::with_cp_weights(a);
  a_cp.stages = 4;  // four K blocks of the compact 48-row tile and up to 32 activation rows: <= 40 KB a stage
  passes_every_dtype_pair(be, seed, {a, b, a_cp, small_m::with_cp_weights(b)});
}

// The compact cp.async tile (fitted rows up to 48 on a 48-row tile, 65..80 on an 80-row one) at
// every activation-row count (the wgmma's N, 8..32): the MMA's rows past the tile read the unit's
// activation rows and then the stage's pad, so a wrong pad or stride shows as a wrong output or a
// fault. The edge rows of both tiles, 1..4 K blocks a stage, pdl 0/1/2, ragged n (208), a K of 17
// blocks with a 16-byte tail, batch 2, the deepest ring up to 12 that fits.
TEST(SmallM, WgmmaCpCompactTileEveryN) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  uint64_t seed = 10700;
  int ran = 0, pick = 0;
  for (int64_t m : {1, 9, 17, 24, 32}) {
    const Problem p = make(2, m, 208, 2064);
    VerifyCase vc(p, seed++);
    for (int rows : {34, 48, 65, 80})
      for (int kb : {1, 2, 4}) {
        const int pdl = pick++ % 3;
        small_m::Config c = small_m::with_cp_weights(small_m::wgmma_config(rows, 1, 12, pdl > 0));
        c.kblocks = kb;
        if (pdl == 2) c = small_m::with_late_trigger(c);
        while (c.stages > 2 && !small_backend_can(p, {"small_m", c.to_string()})) --c.stages;
        ASSERT_TRUE(small_m::cp_compact_tile(c.rows)) << c.to_string();
        ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
      }
  }
  EXPECT_EQ(ran, 60);
  // Every dtype pair and output type at m = 24 (the N=24 kernels of each pair's object).
  small_m::Config one = small_m::wgmma_config(41, 1, 4, true), two = small_m::wgmma_config(72, 1, 3, false);
  one.kblocks = 4;
  two.kblocks = 2;
  passes_every_dtype_pair(be, seed, {one, two}, small_m::with_cp_weights, 24);
}

// aonce=1 (K pairs, two a stage, the activation row copied once, whole; m = 1): rings of 2-7
// stages, pdl 0/1/2, ragged n (208), K of 17 K blocks with a 16-byte tail (2064: an odd pair and
// an odd last stage), of 8 (1024) and of 2 (256: one stage), batch 2; then every dtype pair and
// output type.
TEST(SmallM, WgmmaKPairsActivationOnce) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  uint64_t seed = 11500;
  int ran = 0, pick = 0;
  for (int64_t k : {2064, 1024, 256}) {
    const Problem p = make(2, 1, 208, k);
    VerifyCase vc(p, seed++);
    for (int stages = 2; stages <= 7; ++stages, ++pick) {
      small_m::Config c = small_m::with_aonce(small_m::with_kblocks(small_m::wgmma_config(32, 1, stages, pick % 3 > 0), 2));
      if (pick % 3 == 2) c = small_m::with_late_trigger(c);
      ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
    }
  }
  EXPECT_EQ(ran, 18);
  const small_m::Config one = small_m::with_aonce(small_m::with_kblocks(small_m::wgmma_config(32, 1, 6, true), 2));
  passes_every_dtype_pair(be, seed, {one}, [](small_m::Config c) { return c; }, 1);
}

// pdl=2 (dependents released after the K loop) on the TMA and cp.async one-shot kernels: the same
// sweep (every rows x N instantiation, rings 2..16, split-K 1..8), PDL always on.
TEST(SmallM, WgmmaLateTriggerEveryInstantiationAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  uint64_t seed = 9300;
  const auto late_tma = [](small_m::Config c) {
    c.pdl = true;
    return small_m::with_late_trigger(c);
  };
  const auto late_cp = [](small_m::Config c) {
    c.pdl = true;
    return small_m::with_late_trigger(small_m::with_cp_weights(c));
  };
  EXPECT_EQ(sweep_weight_path(be, seed, 2064, {64, 128}, 2, late_tma), 24);
  EXPECT_EQ(sweep_weight_path(be, seed, 2064, {64, 128}, 2, late_cp), 24);
}

// early=E (only E ring stages requested before the wait, the rest after it) on the one-shot TMA
// kernel: every rows x N instantiation, rings 3..16 with E from 1 to stages-1, split-K 1..8,
// pdl=1 and 2, ragged N (208 rows), a 16-byte K tail, batch 2; then every dtype pair.
TEST(SmallM, WgmmaEarlyEveryInstantiationAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  const int stages_list[] = {3, 4, 8, 12, 16};
  const int splitk_list[] = {1, 2, 3, 5, 8};
  uint64_t seed = 9500;
  int ran = 0, pick = 0;
  for (int64_t m : {1, 8, 9, 16, 23, 32}) {
    const Problem p = make(2, m, 208, 2064);
    VerifyCase vc(p, seed++);
    for (int rows : {64, 128})
      for (int rep = 0; rep < 2; ++rep, ++pick) {
        small_m::Config c = small_m::wgmma_config(rows, splitk_list[(pick * 7) % 5], stages_list[pick % 5], true);
        if (pick % 2) c = small_m::with_late_trigger(c);
        while (c.stages > 3 && !small_backend_can(p, {"small_m", small_m::with_early(c, 1).to_string()})) --c.stages;
        const int e = pick % 3 == 0 ? 1 : pick % 3 == 1 ? c.stages / 2 : c.stages - 1;
        ran += passes_reference(be, p, vc, Tactic{"small_m", small_m::with_early(c, e).to_string()});
      }
  }
  EXPECT_EQ(ran, 24);
  passes_every_dtype_pair(be, seed, {small_m::wgmma_config(64, 2, 8, true), small_m::wgmma_config(128, 3, 6, true)},
                          [](small_m::Config c) { return small_m::with_early(c, 4); });
}

// Stream-K (",streamk=B"): every (rows, N instantiation), 1..4 blocks per SM (1..2 at 128 rows),
// rings 2..16, PDL on/off, on problems whose tiles are cut in every way: runs crossing tiles and
// batches (64 tiles x 3 batches x 9 K blocks), one unit per block with every tile shared by 64
// blocks (2 tiles x 64 K blocks), ragged N with a K tail (n 208, k 2064), and long K (20 tiles x
// 256 K blocks, ~7 blocks per tile). Afterwards every flag of the stream is zero again.
TEST(SmallM, WgmmaStreamKEveryInstantiationAndCut) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  const int stages_list[] = {2, 3, 4, 8, 12, 16};
  const int64_t shapes[][3] = {{3, 4080, 1040}, {1, 128, 8192}, {2, 208, 2064}, {1, 1280, 32768}};
  uint64_t seed = 9700;
  int ran = 0, pick = 0, which = 0;
  for (int64_t m : {1, 8, 9, 16, 23, 32}) {
    const auto& s = shapes[which++ % 4];
    const Problem p = make(s[0], m, s[1], s[2]);
    VerifyCase vc(p, seed++);
    for (int rows : {64, 128})
      for (int per_sm = 1; per_sm <= (rows == 64 ? 4 : 2); ++per_sm, ++pick) {
        small_m::Config c = small_m::streamk_config(rows, stages_list[pick % 6], pick % 3 != 1, per_sm);
        while (c.stages > 2 && !small_backend_can(p, {"small_m", c.to_string()})) --c.stages;
        ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
      }
  }
  EXPECT_EQ(ran, 36);
  uint64_t seed2 = 9800;
  passes_every_dtype_pair(be, seed2, {small_m::streamk_config(64, 4, true, 2), small_m::streamk_config(128, 6, false, 1)});
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const Workspace ws = testing::test_context().flags(nullptr);
  std::vector<unsigned> flags(ws.flag_count, 1u);
  ASSERT_EQ(cudaMemcpy(flags.data(), ws.flags, flags.size() * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::count(flags.begin(), flags.end(), 0u), std::ptrdiff_t(flags.size())) << "a launch left a flag set";
}

// Stream-K without its workspace is refused before any launch, naming what is missing.
TEST(SmallM, StreamKNeedsItsWorkspace) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  const Problem p = make(1, 8, 4096, 4096);
  const Tactic t{"small_m", small_m::streamk_config(64, 8, true, 2).to_string()};
  EXPECT_GT(be.workspace_bytes(p, t), 0u);
  GemmArgs args;  // never dereferenced: the checks come first
  try {
    be.run(p, t, args, Workspace{}, nullptr);
    ADD_FAILURE() << "ran without a workspace";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("stream-K partial sums"), std::string::npos) << e.what();
  }
  Workspace scratch_only = testing::test_context().workspace(nullptr);
  scratch_only.flags = nullptr;
  scratch_only.flag_count = 0;
  try {
    be.run(p, t, args, scratch_only, nullptr);
    ADD_FAILURE() << "ran without flags";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("flags (one per block)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// v3 with weights in registers (",wload=reg"): every (rows, N instantiation) with activation rings
// of 2..16 slots (2 slots over 9 wrap four times), split-K 1..8 in whole 512-byte slots (8 over 9
// slots leaves the last ranks without K; the last slot holds 16 bytes: zero-filled weights and
// activations past k), PDL on/off, ragged N (208 rows: rows past n read row n-1, not stored), batch 2; then
// every dtype pair and output type.
TEST(SmallM, WgmmaRegWeightsEveryInstantiationAndSplit) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  uint64_t seed = 9500;
  // k = 4112: 8 full 512-byte slots + 16 bytes.
  EXPECT_EQ(sweep_weight_path(be, seed, 4112, {64}, 5, small_m::with_reg_weights), 30);
  passes_every_dtype_pair(be, seed, {small_m::wgmma_config(64, 2, 4, true), small_m::wgmma_config(64, 1, 2, false)},
                          small_m::with_reg_weights);
}

// Persistent v3 (persist=P): more units (row tile, batch) than clusters, so every cluster loops;
// rings shallower than a unit's K (they cross unit boundaries) and deeper (they hold several
// units); splits whose last ranks get no K at all (9 K blocks over 8); PDL on and off.
TEST(SmallM, WgmmaPersistentLoopsAndSplits) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  struct Case {
    int rows, splitk, stages, persist;
    bool pdl;
  };
  const Case cases[] = {{64, 1, 4, 1, true},  {64, 2, 16, 1, false}, {64, 8, 8, 2, true}, {128, 3, 6, 1, true},
                        {128, 5, 2, 2, false}, {128, 8, 12, 1, true}, {64, 4, 3, 4, true}};
  uint64_t seed = 7000;
  int ran = 0;
  for (int64_t m : {1, 8, 9, 16, 23, 32}) {
    const Problem p = make(3, m, 4080, 1040);  // 64 (rows 64) or 32 (rows 128) tiles per batch; 8 K blocks + 16 bytes
    VerifyCase vc(p, seed++);
    for (const Case& k : cases) {
      small_m::Config c = small_m::wgmma_config(k.rows, k.splitk, k.stages, k.pdl, 0, k.persist);
      while (c.stages > 2 && !small_backend_can(p, {"small_m", c.to_string()})) --c.stages;
      ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
    }
  }
  EXPECT_EQ(ran, 42);
}

// v3 on larger and odd shapes: K up to 32768, K < 128, n = 16, batch 3, every dtype pair.
TEST(SmallM, WgmmaShapesAndDtypes) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  const Problem problems[] = {make(1, 1, 16, 16),     make(1, 5, 48, 80),       make(3, 3, 4096, 1040),
                              make(1, 31, 1280, 32768), make(1, 16, 4096, 4096), make(2, 2, 8192, 1024)};
  uint64_t seed = 5000;
  for (const Problem& p : problems) {
    VerifyCase vc(p, seed++);
    for (const small_m::Config& c : {small_m::wgmma_config(64, 1, 4, false), small_m::wgmma_config(128, 8, 8, true),
                                     small_m::wgmma_config(64, 4, 16, true), small_m::wgmma_config(64, 2, 2, true, 64), small_m::wgmma_config(128, 1, 4, true, 8),
                                     small_m::with_reg_weights(small_m::wgmma_config(64, 1, 4, false)),
                                     small_m::with_reg_weights(small_m::wgmma_config(64, 8, 4, true))}) {
      const Tactic t{"small_m", c.to_string()};
      if (!small_backend_can(p, t)) continue;
      SCOPED_TRACE(p.to_string() + " " + t.name());
      const CheckResult r = vc.run(testing::test_context(), t);
      EXPECT_TRUE(r.ok) << r.to_string();
    }
  }
  passes_every_dtype_pair(be, seed, {small_m::wgmma_config(64, 2, 4, true), small_m::wgmma_config(128, 1, 8, false)});
}

// Diagnostic for the v3 data paths (TMA, cp.async and register weights): exact small-integer inputs, so that any wrong element is
// wrong by a visible amount; prints which output rows / columns / K blocks are affected.
TEST(SmallM, WgmmaExactIntegersWithMismatchPattern) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  if (testing::test_context().device().compute_capability() != 90) GTEST_SKIP() << "wgmma tactics need sm_90";
  Backend& be = small_m_backend();
  const int64_t batch = 2, m = 11, n = 208, k = 400;  // K: 3 full 128-byte blocks and a 16-byte tail
  Problem p = make(batch, m, n, k);
  const uint8_t code[5] = {0xC0, 0xB8, 0x00, 0x38, 0x40};  // e4m3 -2, -1, 0, 1, 2
  std::mt19937 rng(7);
  std::vector<int> av(size_t(batch * m * k)), wv(size_t(batch * n * k));
  std::vector<uint8_t> ab(av.size()), wb(wv.size());
  for (size_t i = 0; i < av.size(); ++i) { const int c = int(rng() % 5); av[i] = c - 2; ab[i] = code[c]; }
  for (size_t i = 0; i < wv.size(); ++i) { const int c = int(rng() % 5); wv[i] = c - 2; wb[i] = code[c]; }
  const float sa = 0.5f, sb = 0.25f;
  void *da, *dw, *dout;
  float* ds;
  ASSERT_EQ(cudaMalloc(&da, ab.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dw, wb.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dout, size_t(batch * m * n) * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&ds), 2 * sizeof(float)), cudaSuccess);
  const float scales[2] = {sa, sb};
  cudaMemcpy(da, ab.data(), ab.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dw, wb.data(), wb.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(ds, scales, sizeof(scales), cudaMemcpyHostToDevice);
  for (const small_m::Config& c : {small_m::wgmma_config(64, 1, 2, false), small_m::wgmma_config(128, 2, 3, true, 1),
                                   small_m::with_cp_weights(small_m::wgmma_config(64, 2, 3, true)),
                                   small_m::with_cp_weights(small_m::wgmma_config(128, 1, 2, false)),
                                   small_m::with_reg_weights(small_m::wgmma_config(64, 1, 3, true)),
                                   small_m::with_reg_weights(small_m::wgmma_config(64, 1, 2, false)),
                                   small_m::streamk_config(64, 3, true, 2), small_m::streamk_config(128, 2, false, 1),
                                   small_m::wgmma_config(32, 2, 2, true),
                                   small_m::with_cp_weights(small_m::wgmma_config(32, 1, 3, false)),
                                   small_m::wgmma_config(40, 2, 3, true),
                                   small_m::with_cp_weights(small_m::wgmma_config(100, 1, 2, false))}) {
    const Tactic t{"small_m", c.to_string()};
    cudaMemset(dout, 0xFF, size_t(batch * m * n) * 2);
    GemmArgs args;
    args.a = da;
    args.b = dw;
    args.a_scale = ds;
    args.b_scale = ds + 1;
    args.out = dout;
    be.run(p, t, args, testing::test_context().workspace(nullptr), nullptr);  // stream-K: its partials and flags
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << t.name();
    std::vector<uint16_t> out(size_t(batch * m * n));
    cudaMemcpy(out.data(), dout, out.size() * 2, cudaMemcpyDeviceToHost);
    int bad = 0;
    std::map<int, int> by_n64, by_m, by_nmod64;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double ref = 0;
          for (int64_t q = 0; q < k; ++q) ref += double(av[size_t((b * m + i) * k + q)]) * wv[size_t((b * n + j) * k + q)];
          ref *= sa * sb;
          const uint32_t bits = uint32_t(out[size_t((b * m + i) * n + j)]) << 16;
          float got;
          std::memcpy(&got, &bits, 4);
          if (!(std::fabs(got - ref) <= 0.01 * std::fabs(ref) + 1e-6)) {
            if (bad < 12)
              std::printf("  %s: b=%lld m=%lld n=%lld got %g want %g\n", t.name().c_str(), (long long)b, (long long)i,
                          (long long)j, got, ref);
            ++bad;
            ++by_n64[int(j / 64)];
            ++by_m[int(i)];
            ++by_nmod64[int(j % 64)];
          }
        }
    if (bad) {
      std::printf("  %s: %d of %lld wrong\n  by n/64:", t.name().c_str(), bad, (long long)(batch * m * n));
      for (auto [key, v] : by_n64) std::printf(" %d:%d", key, v);
      std::printf("\n  by m:");
      for (auto [key, v] : by_m) std::printf(" %d:%d", key, v);
      std::printf("\n  by n%%64:");
      for (auto [key, v] : by_nmod64) std::printf(" %d:%d", key, v);
      std::printf("\n");
    }
    EXPECT_EQ(bad, 0) << t.name();
  }
  cudaFree(da);
  cudaFree(dw);
  cudaFree(dout);
  cudaFree(ds);
}

TEST(SmallM, RejectsWhatItCannotRun) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Backend& be = small_m_backend();
  const Problem big_m = make(1, 33, 256, 256);
  EXPECT_TRUE(be.tactics(big_m).empty());
  EXPECT_THROW(be.default_tactic(big_m), Error);
  EXPECT_FALSE(be.can_implement(make(1, 8, 256, 256), Tactic{"small_m", "rows=32"}));
  EXPECT_FALSE(be.can_implement(make(1, 8, 256, 256), Tactic{"cublaslt", "rows=32,splitk=1,warps=8,stages=2,pdl=0"}));
  EXPECT_FALSE(be.can_implement(make(1, 8, 256, 256), Tactic{"small_m", "wgmma,rows=64,splitk=1,stages=1,l2pf=0,pdl=0"}));
  if (testing::test_context().device().compute_capability() != 90)
    EXPECT_FALSE(be.can_implement(make(1, 8, 256, 256), Tactic{"small_m", "wgmma,rows=64,splitk=1,stages=4,l2pf=0,pdl=0"}));
}

// Split-K is reduced in a fixed order: the same inputs give the same bits every time.
TEST(SmallM, SplitKIsDeterministic) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  const Problem p = make(1, 16, 1280, 8192);
  std::vector<std::string> names{"rows=32,splitk=8,warps=8,stages=2,pdl=1"};
  if (testing::test_context().device().compute_capability() == 90)
    names.push_back(small_m::wgmma_config(64, 8, 4, true).to_string());
  if (testing::test_context().device().compute_capability() == 90)
    names.push_back(small_m::wgmma_config(64, 5, 6, true, 0, 1).to_string());
  if (testing::test_context().device().compute_capability() == 90)
    names.push_back(small_m::with_cp_weights(small_m::wgmma_config(64, 8, 4, true)).to_string());
  if (testing::test_context().device().compute_capability() == 90)
    names.push_back(small_m::with_reg_weights(small_m::wgmma_config(64, 8, 4, true)).to_string());
  if (testing::test_context().device().compute_capability() == 90)
    names.push_back(small_m::with_cp_weights(small_m::wgmma_config(32, 8, 4, true)).to_string());
  if (testing::test_context().device().compute_capability() == 90)
    names.push_back(small_m::wgmma_config(40, 8, 4, true).to_string());
  if (testing::test_context().device().compute_capability() == 90)
    names.push_back(small_m::streamk_config(64, 4, true, 2).to_string());  // 20 tiles x 64 K blocks over 264 blocks: every tile cut
  for (const std::string& name : names) {
    const Tactic t{"small_m", name};
    const CheckResult a = verify_tactic(testing::test_context(), p, t, 77);
    const CheckResult b = verify_tactic(testing::test_context(), p, t, 77);
    EXPECT_TRUE(a.ok) << name << " " << a.to_string();
    EXPECT_EQ(a.fro_rel, b.fro_rel) << name;  // bitwise-equal outputs give bitwise-equal error norms
    EXPECT_EQ(a.worst_ratio, b.worst_ratio) << name;
  }
}

}  // namespace
}  // namespace fp8gemm
