// small_m's derived settings and limits: each family's ring layout and shared memory, the ring
// depths that fit an SM, the launch geometry, and which problems a config runs. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "backends/small_m/small_m_config.h"
#include "backends/small_m/small_m_layout.h"
#include "problem_util.h"

namespace fp8gemm::small_m {
namespace {

using ::fp8gemm::testing::problem;

void expect_refused(const Problem& p, const Config& c, const char* why) {
  const Verdict v = can_implement(p, c, 90);
  EXPECT_FALSE(v) << p << " " << c.to_string();
  EXPECT_NE(v.reason.find(why), std::string::npos) << c.to_string() << ": " << v.reason;
}

TEST(SmallMLayout, CanImplementStatesTheLimits) {
  const Config c = tma_ring(64, 1, 8);
  EXPECT_TRUE(can_implement(problem(1, 4096, 4096), c, 90));
  EXPECT_TRUE(can_implement(problem(32, 16, 16), c, 90));
  EXPECT_TRUE(can_implement(problem(17, 4080, 2064, 3), c, 90));  // ragged tile, K tail, batch
  for (int cc : {80, 89, 100, 120}) {
    const Verdict v = can_implement(problem(1, 4096, 4096), c, cc);
    EXPECT_FALSE(v) << cc;
    EXPECT_NE(v.reason.find("compute capability 9.0"), std::string::npos) << v.reason;
  }
  expect_refused(problem(33, 4096, 4096), c, "m must be in 1..32");
  expect_refused(problem(0, 4096, 4096), c, "m must be in 1..32");
  expect_refused(problem(8, 4104, 4096), c, "n must be a positive multiple of 16");
  expect_refused(problem(8, 4096, 4104), c, "TMA");
  expect_refused(problem(8, 4096, 4104), cp_async_ring(64, 2, 12), "cp.async");
  EXPECT_TRUE(can_implement(problem(8, 4096, 256), tma_ring(64, 2, 8, Pdl::kOff), 90));
  expect_refused(problem(8, 4096, 256), tma_ring(64, 3, 8), "every split needs K");  // 2 K blocks, 3 splits
  Problem e5 = problem(8, 4096, 4096);
  e5.a_type = e5.b_type = DType::kE5M2;
  expect_refused(e5, c, "e5m2 x e5m2");
  Problem mixed = problem(8, 4096, 4096);
  mixed.a_type = DType::kE5M2;
  EXPECT_TRUE(can_implement(mixed, c, 90));
  Problem fp8_out = problem(8, 4096, 4096);
  fp8_out.out_type = DType::kE4M3;
  expect_refused(fp8_out, c, "out must be bf16 or fp16");
  Problem misaligned = problem(8, 4096, 4096);
  misaligned.alignment = 8;
  expect_refused(misaligned, c, "16-byte aligned (TMA");
  expect_refused(misaligned, cp_async_ring(64, 2, 12), "cp.async addresses");
  // 16 stages of (128 + 32) x 128 bytes = 320 KB.
  expect_refused(problem(32, 4096, 4096), tma_ring(128, 1, 16, Pdl::kOff), "220 KB of shared memory");
  expect_refused(problem(32, 4096, 4096), cp_async_ring(128, 1, 16, Pdl::kOff), "220 KB of shared memory");
  expect_refused(problem(1, 4096, 14336), tma_ring(64, 1, 32), "220 KB");  // 32 x 9 KB
}

// The TMA and cp.async rings at 64 and 128 rows, and the persistent kernel: one stage is 128 bytes
// of K of the block's weight rows and activation rows, the ring 1024-byte aligned.
TEST(SmallMLayout, FullWarpgroupRings) {
  EXPECT_EQ(shared_bytes(problem(8, 4096, 4096), tma_ring(128, 1, 12)), size_t(12 * (128 + 8) * 128 + 1024));
  const Problem p = problem(9, 4096, 4096);
  EXPECT_EQ(shared_bytes(p, cp_async_ring(64, 2, 12)), shared_bytes(p, tma_ring(64, 2, 12)));
  for (Config c : {tma_ring(64, 1, 4), cp_async_ring(64, 1, 4), persistent(64, 1, 4, 1)}) {
    const RingLayout l = ring_layout(p, c);
    EXPECT_EQ(l.unit_bytes, (64 + 16) * 128) << c.to_string();
    EXPECT_EQ(l.w_bytes, 64 * 128) << c.to_string();
    EXPECT_EQ(l.tx_bytes, (64 + 16) * 128) << c.to_string();
    EXPECT_EQ(l.tail_bytes + l.stage_pad_bytes, 0) << c.to_string();
  }
  EXPECT_EQ(ring_layout(p, tma_ring(128, 1, 4)).tx_bytes, (128 + 16) * 128);
  // The persistent kernel's split-K receive buffer: [splitk][N/2][ceil(2 rows / splitk)] floats.
  EXPECT_EQ(shared_bytes(p, persistent(64, 3, 6, 1)), size_t(6 * (64 + 16) * 128 + 1024 + 3 * 8 * 43 * 4));
  EXPECT_EQ(shared_bytes(p, persistent(64, 1, 6, 1)), size_t(6 * (64 + 16) * 128 + 1024));
  expect_refused(problem(1, int64_t(1) << 30, 4096, 256), persistent(64, 1, 4, 1), "32-bit int");
}

// K pairs (rows=32): a unit is the 64-row tile (the block's 32 rows for two K blocks) and two K
// blocks' activation rows; m <= 16; a split rank reads whole pairs.
TEST(SmallMLayout, KPairs) {
  const Config c = cp_async_ring(32, 1, 16);
  EXPECT_EQ(shared_bytes(problem(1, 4096, 4096), c), size_t(16 * (64 + 16) * 128 + 1024));
  EXPECT_EQ(shared_bytes(problem(16, 4096, 4096), c), size_t(16 * (64 + 32) * 128 + 1024));
  for (const Config& kp : {with_kblocks(tma_ring(32, 1, 5), 2), with_kblocks(cp_async_ring(32, 1, 5), 2)}) {
    EXPECT_EQ(shared_bytes(problem(1, 4096, 4096), kp), size_t(5 * 2 * 80 * 128 + 1024));
    EXPECT_EQ(shared_bytes(problem(16, 4096, 4096), kp), size_t(5 * 2 * 96 * 128 + 1024));
  }
  EXPECT_TRUE(can_implement(problem(16, 4096, 4096), c, 90));
  EXPECT_TRUE(can_implement(problem(1, 208, 2064, 2), c, 90));  // ragged rows, an odd K block count
  expect_refused(problem(17, 4096, 4096), c, "m <= 16");
  // 3 K blocks are 2 pairs: 2 splits run, 3 do not (with rows=64 they would).
  EXPECT_TRUE(can_implement(problem(8, 4096, 384), tma_ring(32, 2, 4), 90));
  expect_refused(problem(8, 4096, 384), tma_ring(32, 3, 4), "ceil(k/256)");
  EXPECT_TRUE(can_implement(problem(8, 4096, 384), tma_ring(64, 3, 4), 90));
  EXPECT_EQ(kpair_kblocks_per_split(32, 1), 32);
  EXPECT_EQ(kpair_kblocks_per_split(17, 1), 18);
  EXPECT_EQ(kpair_kblocks_per_split(17, 2), 10);  // [0, 10), [10, 17)
  EXPECT_EQ(kpair_kblocks_per_split(6, 4), 2);    // [0, 2), [2, 4), [4, 6), [6, 6)
  for (int kb = 1; kb <= 70; ++kb)
    for (int s = 1; s <= kMaxSplitK && s <= (kb + 1) / 2; ++s) {
      const int per = kpair_kblocks_per_split(kb, s);
      EXPECT_EQ(per % 2, 0) << kb << " " << s;
      EXPECT_GE(per * s, kb) << kb << " " << s;  // every K block has a rank
    }
  EXPECT_EQ(launch_shape(problem(8, 4096, 17 * 128), tma_ring(32, 2, 4), 132).kblocks_per_split, 10);
  EXPECT_EQ(launch_shape(problem(8, 4096, 17 * 128), tma_ring(64, 2, 4), 132).kblocks_per_split, 9);
}

// Fitted rows: with TMA weights a tile of the rows rounded up to 8 and the tail the last stage's
// wgmma reads past the ring; with cp.async the whole 64 W-row tile, or the compact 48- or 80-row
// one with a pad after each stage.
TEST(SmallMLayout, FittedRows) {
  EXPECT_TRUE(is_fitted_rows(33) && is_fitted_rows(63) && is_fitted_rows(65) && is_fitted_rows(127));
  EXPECT_FALSE(is_fitted_rows(32) || is_fitted_rows(64) || is_fitted_rows(128) || is_fitted_rows(129));
  EXPECT_EQ(warpgroups(63), 1);
  EXPECT_EQ(warpgroups(65), 2);
  const Problem m1 = problem(1, 4480, 15680);
  const RingLayout l34 = ring_layout(m1, tma_ring(34, 1, 16));
  EXPECT_EQ(l34.w_bytes, 40 * 128);
  EXPECT_EQ(l34.unit_bytes, (40 + 8) * 128);
  EXPECT_EQ(l34.tx_bytes, (34 + 8) * 128);
  EXPECT_EQ(l34.tail_bytes, 16 * 128);
  EXPECT_EQ(shared_bytes(m1, tma_ring(34, 1, 16)), size_t(16 * 48 * 128 + 16 * 128 + 1024));
  EXPECT_EQ(cp_compact_tile_rows(33), 48);
  EXPECT_EQ(cp_compact_tile_rows(48), 48);
  EXPECT_EQ(cp_compact_tile_rows(49), 0);
  EXPECT_EQ(cp_compact_tile_rows(65), 80);
  EXPECT_EQ(cp_compact_tile_rows(80), 80);
  EXPECT_EQ(cp_compact_tile_rows(81), 0);
  EXPECT_EQ(cp_compact_tile_rows(32) + cp_compact_tile_rows(64) + cp_compact_tile_rows(128), 0);
  const auto cp = [](int64_t m, int rows) { return ring_layout(problem(m, 4096, 4096), cp_async_ring(rows, 1, 4)); };
  EXPECT_EQ(cp(1, 34).w_bytes, 48 * 128);
  EXPECT_EQ(cp(1, 34).unit_bytes, (48 + 8) * 128);
  EXPECT_EQ(cp(1, 34).stage_pad_bytes, 8 * 128);
  EXPECT_EQ(cp(1, 34).tail_bytes, 0);
  EXPECT_EQ(cp(16, 47).unit_bytes, (48 + 16) * 128);
  EXPECT_EQ(cp(16, 47).stage_pad_bytes, 0);  // 16 activation rows cover the MMA's last 16
  EXPECT_EQ(cp(32, 34).unit_bytes, (48 + 32) * 128);
  EXPECT_EQ(cp(1, 49).unit_bytes, (64 + 8) * 128);
  EXPECT_EQ(cp(1, 49).stage_pad_bytes, 0);
  EXPECT_EQ(cp(16, 78).unit_bytes, (80 + 16) * 128);
  EXPECT_EQ(cp(16, 78).stage_pad_bytes, 32 * 128);
  EXPECT_EQ(cp(1, 78).stage_pad_bytes, 40 * 128);
  EXPECT_EQ(cp(17, 78).stage_pad_bytes, 24 * 128);
  EXPECT_EQ(cp(32, 100).unit_bytes, (128 + 32) * 128);
  const RingLayout l100 = ring_layout(problem(32, 4096, 4096), tma_ring(100, 1, 4));
  EXPECT_EQ(l100.unit_bytes, (104 + 32) * 128);
  EXPECT_EQ(l100.tx_bytes, (100 + 32) * 128);
  EXPECT_EQ(l100.tail_bytes, 0);
  // One pad per ring stage, after its kblocks units.
  EXPECT_EQ(shared_bytes(m1, with_kblocks(cp_async_ring(34, 2, 7), 4)), size_t(7 * (4 * 56 + 8) * 128 + 1024));
  EXPECT_EQ(shared_bytes(m1, with_kblocks(tma_ring(34, 2, 8), 4)), size_t(8 * 4 * 48 * 128 + 16 * 128 + 1024));
  // Every unit's tiles stay 1024-byte aligned (128-byte swizzle atoms), and the wgmma's rows stay
  // inside the allocation.
  for (int rows = 32; rows <= 128; ++rows)
    for (int64_t m : {1, 9, 17, 32})
      for (bool weights_cp : {false, true}) {
        if (rows == 32 && m > 16) continue;
        const Config c = weights_cp ? cp_async_ring(rows, 1, 4) : tma_ring(rows, 1, 4);
        const RingLayout l = ring_layout(problem(m, 4096, 4096), c);
        EXPECT_EQ(l.unit_bytes % 1024, 0) << c.to_string() << " m=" << m;
        EXPECT_EQ(l.w_bytes % 1024, 0) << c.to_string() << " m=" << m;
        EXPECT_EQ(l.stage_pad_bytes % 1024, 0) << c.to_string() << " m=" << m;
        EXPECT_GE(l.unit_bytes + l.tail_bytes + l.stage_pad_bytes, 64 * warpgroups(rows) * 128) << c.to_string();
        EXPECT_TRUE(l.tail_bytes == 0 || l.stage_pad_bytes == 0) << c.to_string();
      }
  EXPECT_TRUE(can_implement(problem(32, 4480, 15680), cp_async_ring(34, 1, 16), 90));  // m up to 32
}

// Activation once: the weight ring (16 KB stages), the activation row (K rounded up to pairs and
// 256 bytes of zeros) and the barriers; m = 1 only.
TEST(SmallMLayout, ActivationOnce) {
  const Config c = activation_once(6);
  EXPECT_EQ(shared_bytes(problem(1, 4096, 4096), c), size_t(6 * 16384 + 4096 + 256 + 6 * 16 + 8));
  EXPECT_EQ(shared_bytes(problem(1, 208, 2064), c), size_t(6 * 16384 + 9 * 256 + 256 + 6 * 16 + 8));
  EXPECT_TRUE(can_implement(problem(1, 4096, 4096), c, 90));
  expect_refused(problem(2, 4096, 4096), c, "m = 1");
  expect_refused(problem(1, 4096, 4096), activation_once(14), "aonce=1: stages * 16 KB");
  const LaunchShape s = launch_shape(problem(1, 4096, 4096, 2), c, 132);
  EXPECT_EQ(s.grid[0], 128u);
  EXPECT_EQ(s.grid[1], 1u);
  EXPECT_EQ(s.grid[2], 2u);
  EXPECT_EQ(s.threads, 160);
  EXPECT_EQ(s.kblocks_per_split, 32);
}

// The deepest ring with which `per_sm` blocks share an SM (228 KB; per block ~1 KB for the system
// and 512 bytes of barriers beside its allocation; up to 16 stages; at least 4).
TEST(SmallMLayout, DeepestRingThatFits) {
  const Problem p = problem(16, 18560, 4096);
  // 47 rows at m=16: a 48-row tile and 16 activation rows, 8 KB a stage, no tail.
  EXPECT_EQ(deepest_ring(p, tma_ring(47, 1, 4), 3), (228 * 1024 / 3 - 1024 - 512 - 1024) / ((48 + 16) * 128));
  EXPECT_EQ(deepest_ring(problem(1, 4096, 4096), tma_ring(64, 1, 4), 1), 16);  // capped
  EXPECT_EQ(deepest_ring(problem(32, 4096, 4096), tma_ring(128, 1, 4), 4), 0);  // < 4 stages fit
  // One stage more does not fit, unless the ring is at the cap.
  const std::pair<Problem, Config> cases[] = {
      {p, tma_ring(64, 1, 4)},           {p, cp_async_ring(34, 1, 4)},        {p, with_kblocks(tma_ring(55, 1, 4), 4)},
      {p, persistent(128, 2, 4, 1)},     {problem(1, 4096, 4096), activation_once(4)},
  };
  for (const auto& [q, c] : cases)
    for (int per_sm = 1; per_sm <= 4; ++per_sm) {
      const int st = deepest_ring(q, c, per_sm);
      if (st == 0) continue;
      Config fits = c, deeper = c;
      fits.stages = st;
      deeper.stages = st + 1;
      const int64_t beside = c.family == Family::kActivationOnce ? 1024 : 1024 + 512;  // its barriers are inside
      const int64_t bound = std::min<int64_t>(kSmSharedBytes / per_sm - beside, int64_t(kMaxSharedBytes));
      EXPECT_LE(int64_t(shared_bytes(q, fits)), bound) << fits.to_string() << " at " << per_sm;
      if (st < kMaxStages) EXPECT_GT(int64_t(shared_bytes(q, deeper)), bound) << deeper.to_string() << " at " << per_sm;
    }
}

// The grid: one block per (row tile, split, batch); the persistent grid persist x SMs blocks in
// clusters of splitk, at most one cluster per unit; threads: the consumer warpgroups and the
// producer warp (cp.async: a producer warpgroup).
TEST(SmallMLayout, LaunchShape) {
  const Problem p = problem(9, 4096 + 16, 4096, 2);
  const LaunchShape one_shot = launch_shape(p, tma_ring(128, 3, 6), 132);
  EXPECT_EQ(one_shot.grid[0], 33u);
  EXPECT_EQ(one_shot.grid[1], 3u);
  EXPECT_EQ(one_shot.grid[2], 2u);
  EXPECT_EQ(one_shot.threads, 2 * 128 + 32);
  EXPECT_EQ(one_shot.shared_bytes, shared_bytes(p, tma_ring(128, 3, 6)));
  EXPECT_EQ(one_shot.kblocks_per_split, 11);
  EXPECT_EQ(launch_shape(p, cp_async_ring(47, 1, 6), 132).threads, 128 + 128);
  EXPECT_EQ(launch_shape(p, cp_async_ring(47, 1, 6), 132).grid[0], 88u);
  const LaunchShape persist = launch_shape(p, persistent(64, 2, 6, 1), 132);
  EXPECT_EQ(persist.grid[0], 66u);  // 132 blocks in clusters of 2 (130 units)
  EXPECT_EQ(persist.grid[1], 2u);
  EXPECT_EQ(persist.grid[2], 1u);
  EXPECT_EQ(launch_shape(problem(9, 1024, 4096), persistent(64, 1, 6, 2), 132).grid[0], 16u);  // 16 units
}

}  // namespace
}  // namespace fp8gemm::small_m
