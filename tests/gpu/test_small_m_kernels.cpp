// Each small_m kernel family against the float64 reference: sweeps that reach every kernel
// instantiation (rows x MMA N x units per stage) with split-K, ring depths, PDL modes and early,
// on ragged shapes with K tails and batch 2, then every dtype pair and output type.
#include <gtest/gtest.h>

#include <algorithm>

#include "small_m_test_util.h"

namespace fp8gemm {
namespace {

using namespace small_m_test;

// The TMA ring: every (rows, N instantiation) with ring depths 2..16, split-K 1..8 and PDL,
// ragged N against 64- and 128-row tiles, a K tail, batch 2, on one problem per m.
TEST(SmallM, WgmmaEveryInstantiationAndSplit) {
  SKIP_UNLESS_SM90();
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
        while (stages > 2 && !small_backend_can(p, {"small_m", tma(rows, splitk, stages, false).to_string()}))
          --stages;
        const small_m::Config c = tma(rows, splitk, stages, (pick / 6) % 2 == 0);
        ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
      }
  }
  EXPECT_EQ(ran, 42);
}

// The cp.async ring (",wload=cp"): every (rows, N instantiation) with ring depths 2..16,
// split-K 1..8 (8 over 17 K blocks leaves the last ranks without K) and PDL on/off, ragged N
// (208 rows: zero-filled copies past n) against 64- and 128-row tiles, a 16-byte K tail
// (zero-filled chunks), batch 2; then every dtype pair and output type.
TEST(SmallM, WgmmaCpWeightsEveryInstantiationAndSplit) {
  SKIP_UNLESS_SM90();
  Backend& be = small_m_backend();
  uint64_t seed = 9000;
  // k = 2064: 16 full K blocks + 16 bytes.
  EXPECT_EQ(sweep_weight_path(be, seed, 2064, {64, 128}, 3, small_m::with_cp_weights), 36);
  passes_every_dtype_pair(be, seed, {tma(64, 2, 4, true), tma(128, 3, 8, false)},
                          small_m::with_cp_weights);
}

// rows=32 (K pairs: the block's 32 weight rows for two K blocks per stage, the halves added in the
// epilogue), TMA and cp.async weights: m = 1, 7, 8, 9, 16 (both N instantiations), n = 208 (6.5
// tiles of 32: zero-filled rows past n), batch 2, and K of 17 blocks with a 16-byte tail (an odd
// count: the last pair reads past the tensor), 8 blocks (whole pairs) and 1 block (half a pair);
// split-K 1..8 as far as every rank gets a pair, rings 2..16, pdl 0/1/2 and early; then every
// dtype pair and output type.
TEST(SmallM, WgmmaKPairsEveryInstantiationAndSplit) {
  SKIP_UNLESS_SM90();
  Backend& be = small_m_backend();
  const int stages_list[] = {2, 3, 5, 8, 12, 16};
  const int splitk_list[] = {1, 2, 3, 5, 8};
  uint64_t seed = 9700;
  const int ran = sweep_one_shot(
      be, seed, {1, 7, 8, 9, 16}, [](int, int64_t m, int64_t k) { return make(2, m, 208, k); },
      [&](int pick, int64_t k, bool pdl) {
        const int pairs = int((k + 255) / 256);
        return tma(32, std::min(splitk_list[(pick * 7) % 5], pairs), stages_list[pick % 6], pdl);
      });
  EXPECT_EQ(ran, 30);
  passes_every_dtype_pair(be, seed, {tma(32, 1, 6, true), tma(32, 3, 4, false)});
  passes_every_dtype_pair(be, seed, {tma(32, 2, 8, true), tma(32, 1, 16, false)},
                          small_m::with_cp_weights);
}

// rows=32 with kblocks=2 (two K pairs, four K blocks, a stage), TMA and cp.async weights: m = 1,
// 7, 8, 9, 16 (both N instantiations), n = 208 (zero-filled rows past n), batch 2, K of 17 blocks
// with a 16-byte tail (9 pairs: the last stage holds one pair and a zero-filled one, and the last
// pair is half past the tensor), 8 blocks (whole stages), 5 blocks (3 pairs) and 1 block (half a
// pair in a stage of two); split-K 1..8 as far as every rank gets a pair (ranks' ranges end
// mid-stage), rings 2..12, pdl 0/1/2 and early; then every dtype pair and output type.
TEST(SmallM, WgmmaKPairsTwoAStageEveryInstantiationAndSplit) {
  SKIP_UNLESS_SM90();
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
            tma(32, std::min(splitk_list[(pick * 3) % 5], pairs), stages_list[pick % 5], pdl));
      },
      {2064, 1024, 640, 128});
  EXPECT_EQ(ran, 40);
  passes_every_dtype_pair(be, seed, {two_pairs(tma(32, 1, 5, true)),
                                     two_pairs(tma(32, 3, 3, false))});
  passes_every_dtype_pair(be, seed, {two_pairs(tma(32, 2, 4, true)),
                                     two_pairs(tma(32, 1, 8, false))},
                          small_m::with_cp_weights);
}

// Fitted rows (33..127 but 64): one and two warpgroups whose MMA rows past the block's rows are
// never stored (with TMA weights they read the activation tile and the next stage; cp.async
// zero-fills them): rows 33..127
// over every N instantiation (m 1..32), 208 and 336 rows (a partial last block), K of 17 blocks
// with a 16-byte tail, 8 blocks and 1 block, split-K up to 8, rings 2..16, pdl 0/1/2 and early,
// batch 2, both weight paths; then every dtype pair and output type.
TEST(SmallM, WgmmaFittedRowsEveryInstantiationAndSplit) {
  SKIP_UNLESS_SM90();
  Backend& be = small_m_backend();
  const int rows_list[] = {33, 40, 47, 63, 65, 100, 127};
  const int stages_list[] = {2, 3, 5, 8, 12, 16};
  const int splitk_list[] = {1, 2, 3, 5, 8};
  uint64_t seed = 9800;
  const int ran = sweep_one_shot(
      be, seed, {1, 8, 9, 17, 32}, [](int pick, int64_t m, int64_t k) { return make(2, m, pick % 2 ? 336 : 208, k); },
      [&](int pick, int64_t k, bool pdl) {
        const int kblocks = int((k + 127) / 128);
        return tma(rows_list[pick % 7], std::min(splitk_list[(pick * 3) % 5], kblocks),
                                     stages_list[pick % 6], pdl);
      });
  EXPECT_EQ(ran, 30);
  passes_every_dtype_pair(be, seed, {tma(34, 1, 6, true), tma(100, 3, 4, false)});
  passes_every_dtype_pair(be, seed, {tma(71, 2, 8, true), tma(47, 1, 16, false)},
                          small_m::with_cp_weights);
}

// Rings of 17..32 stages (one-shot kernels, run when named): K pairs, fitted rows (34, 48) and
// 64-row blocks (two warpgroups' stages are too large for 17), on K of 72 blocks with a 16-byte
// tail (the ring wraps two to four times) and 32 blocks (it does not), m 1..16, split-K 1..3, pdl
// 0/1/2 and early, batch 2, both weight paths.
TEST(SmallM, WgmmaDeepRingsEveryKindAndSplit) {
  SKIP_UNLESS_SM90();
  Backend& be = small_m_backend();
  const int rows_list[] = {32, 34, 48, 64};
  const int stages_list[] = {17, 24, 32};
  uint64_t seed = 9900;
  const int ran = sweep_one_shot(
      be, seed, {1, 9, 16}, [](int, int64_t m, int64_t k) { return make(2, m, 208, k); },
      [&](int pick, int64_t, bool pdl) {
        return tma(rows_list[pick % 4], 1 + (pick / 4) % 3, stages_list[pick % 3], pdl);
      },
      {9232, 4096});
  EXPECT_EQ(ran, 12);
  int deep = 0;  // the sweep shortens rings that do not fit: count those it kept deep
  for (int rows : rows_list)
    for (bool cp : {false, true}) {
      small_m::Config c = tma(rows, 1, 32, true);
      if (cp) c = small_m::with_cp_weights(c);
      while (!small_backend_can(make(2, 16, 208, 9232), {"small_m", c.to_string()})) --c.stages;
      deep += c.stages > small_m::kMaxStages;
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
  SKIP_UNLESS_SM90();
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
          small_m::Config c = tma(rows_list[pick % 6], std::min(splitk_list[pick % 4], kblocks),
                                                    stages_list[(pick * 3) % 5], pdl > 0);
          c.kblocks = kb;
          if (cp) c = small_m::with_cp_weights(c);
          if (pdl == 2) c = late(c);
          while (c.stages > 2 && !small_backend_can(p, {"small_m", c.to_string()})) --c.stages;
          if (!cp && pdl > 0 && c.stages > 2 && pick % 4 == 1) c = small_m::with_early(c, c.stages / 2);
          ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
        }
    }
  EXPECT_EQ(ran, 60);
  small_m::Config a = tma(34, 1, 6, true), b = tma(100, 3, 4, false);
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
  SKIP_UNLESS_SM90();
  Backend& be = small_m_backend();
  uint64_t seed = 10700;
  int ran = 0, pick = 0;
  for (int64_t m : {1, 9, 17, 24, 32}) {
    const Problem p = make(2, m, 208, 2064);
    VerifyCase vc(p, seed++);
    for (int rows : {34, 48, 65, 80})
      for (int kb : {1, 2, 4}) {
        const int pdl = pick++ % 3;
        small_m::Config c = small_m::with_cp_weights(tma(rows, 1, 12, pdl > 0));
        c.kblocks = kb;
        if (pdl == 2) c = late(c);
        while (c.stages > 2 && !small_backend_can(p, {"small_m", c.to_string()})) --c.stages;
        ASSERT_GT(small_m::cp_compact_tile_rows(c.rows), 0) << c.to_string();
        ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
      }
  }
  EXPECT_EQ(ran, 60);
  // Every dtype pair and output type at m = 24 (the N=24 kernels of each pair's object).
  small_m::Config one = tma(41, 1, 4, true), two = tma(72, 1, 3, false);
  one.kblocks = 4;
  two.kblocks = 2;
  passes_every_dtype_pair(be, seed, {one, two}, small_m::with_cp_weights, 24);
}

// aonce=1 (K pairs, two a stage, the activation row copied once, whole; m = 1): rings of 2-7
// stages, pdl 0/1/2, ragged n (208), K of 17 K blocks with a 16-byte tail (2064: an odd pair and
// an odd last stage), of 8 (1024) and of 2 (256: one stage), batch 2; then every dtype pair and
// output type.
TEST(SmallM, WgmmaKPairsActivationOnce) {
  SKIP_UNLESS_SM90();
  Backend& be = small_m_backend();
  uint64_t seed = 11500;
  int ran = 0, pick = 0;
  for (int64_t k : {2064, 1024, 256}) {
    const Problem p = make(2, 1, 208, k);
    VerifyCase vc(p, seed++);
    for (int stages = 2; stages <= 7; ++stages, ++pick) {
      small_m::Config c = small_m::activation_once(stages, pick % 3 > 0 ? Pdl::kAtStart : Pdl::kOff);
      if (pick % 3 == 2) c = late(c);
      ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
    }
  }
  EXPECT_EQ(ran, 18);
  const small_m::Config one = small_m::activation_once(6);
  passes_every_dtype_pair(be, seed, {one}, [](small_m::Config c) { return c; }, 1);
}

// pdl=2 (dependents released after the K loop) on the TMA and cp.async one-shot kernels: the same
// sweep (every rows x N instantiation, rings 2..16, split-K 1..8), PDL always on.
TEST(SmallM, WgmmaLateTriggerEveryInstantiationAndSplit) {
  SKIP_UNLESS_SM90();
  Backend& be = small_m_backend();
  uint64_t seed = 9300;
  const auto late_tma = [](small_m::Config c) {
    return late(c);
  };
  const auto late_cp = [](small_m::Config c) {
    return late(small_m::with_cp_weights(c));
  };
  EXPECT_EQ(sweep_weight_path(be, seed, 2064, {64, 128}, 2, late_tma), 24);
  EXPECT_EQ(sweep_weight_path(be, seed, 2064, {64, 128}, 2, late_cp), 24);
}

// early=E (only E ring stages requested before the wait, the rest after it) on the one-shot TMA
// kernel: every rows x N instantiation, rings 3..16 with E from 1 to stages-1, split-K 1..8,
// pdl=1 and 2, ragged N (208 rows), a 16-byte K tail, batch 2; then every dtype pair.
TEST(SmallM, WgmmaEarlyEveryInstantiationAndSplit) {
  SKIP_UNLESS_SM90();
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
        small_m::Config c = tma(rows, splitk_list[(pick * 7) % 5], stages_list[pick % 5], true);
        if (pick % 2) c = late(c);
        while (c.stages > 3 && !small_backend_can(p, {"small_m", small_m::with_early(c, 1).to_string()})) --c.stages;
        const int e = pick % 3 == 0 ? 1 : pick % 3 == 1 ? c.stages / 2 : c.stages - 1;
        ran += passes_reference(be, p, vc, Tactic{"small_m", small_m::with_early(c, e).to_string()});
      }
  }
  EXPECT_EQ(ran, 24);
  passes_every_dtype_pair(be, seed, {tma(64, 2, 8, true), tma(128, 3, 6, true)},
                          [](small_m::Config c) { return small_m::with_early(c, 4); });
}

// The persistent kernel (persist=P): more units (row tile, batch) than clusters, so every cluster loops;
// rings shallower than a unit's K (they cross unit boundaries) and deeper (they hold several
// units); splits whose last ranks get no K at all (9 K blocks over 8); PDL on and off.
TEST(SmallM, WgmmaPersistentLoopsAndSplits) {
  SKIP_UNLESS_SM90();
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
      small_m::Config c = small_m::persistent(k.rows, k.splitk, k.stages, k.persist, k.pdl ? Pdl::kAtStart : Pdl::kOff);
      while (c.stages > 2 && !small_backend_can(p, {"small_m", c.to_string()})) --c.stages;
      ran += passes_reference(be, p, vc, Tactic{"small_m", c.to_string()});
    }
  }
  EXPECT_EQ(ran, 42);
}

}  // namespace
}  // namespace fp8gemm
