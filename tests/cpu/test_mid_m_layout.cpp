// mid_m's derived settings and limits for an H200 (132 SMs, 227 KB a block) and a smaller Hopper
// (114 SMs): the wgmma N for each M, the ring's layout and shared memory, the ring depths that fit,
// the registers each kernel is built for, the launch geometry, and which problems a config runs.
// No GPU needed.
#include <gtest/gtest.h>

#include <string>

#include "backends/mid_m/mid_m_config.h"
#include "backends/mid_m/mid_m_layout.h"
#include "backends/mid_m/mid_m_select.h"
#include "mid_m_device.h"
#include "problem_util.h"

namespace fp8gemm::mid_m {
namespace {

using ::fp8gemm::testing::device;
using ::fp8gemm::testing::problem;
const DeviceLimits kH200 = device(132);
const DeviceLimits kH100Pcie = device(114);

void expect_refused(const Problem& p, const Config& c, const char* why, const DeviceLimits& d = kH200) {
  const Verdict v = can_implement(p, c, d);
  EXPECT_FALSE(v) << p << " " << c.to_string();
  EXPECT_NE(v.reason.find(why), std::string::npos) << c.to_string() << ": " << v.reason;
}

TEST(MidMLayout, TileNHoldsEveryMWithLittlePadding) {
  for (int64_t m = kMinM; m <= kMaxM; ++m) {
    const int n = tile_n(m);
    EXPECT_GE(n, m);
    EXPECT_LT(n - m, 16) << m;
    EXPECT_EQ(n % 8, 0) << m;  // a wgmma N
    EXPECT_GE(n, 8);
    EXPECT_LE(n, 256);
  }
  for (int64_t m : {48, 64, 96, 128, 192, 256}) EXPECT_EQ(tile_n(m), m);  // the suite's M: no padding
  EXPECT_EQ(tile_n(33), 40);
  EXPECT_EQ(tile_n(65), 80);
  EXPECT_EQ(tile_n(129), 144);
  EXPECT_EQ(tile_n(257), 0);
  for (int i = 1; i < kTileNCount; ++i) EXPECT_LT(kTileNs[i - 1], kTileNs[i]);
}

TEST(MidMLayout, DeviceLimitsComeFromTheDevice) {
  EXPECT_EQ(kH200.sm_count, 132);
  EXPECT_EQ(kH200.cc, 90);
  EXPECT_EQ(kH200.smem_per_block, size_t(227 * 1024));
  EXPECT_EQ(kH200.smem_per_sm, size_t(228 * 1024));
  EXPECT_EQ(max_dynamic_shared(kH200), size_t(227 * 1024) - kStaticSharedBytes);
  EXPECT_EQ(kH100Pcie.sm_count, 114);
}

// A stage is one K block of the block's weight rows and of tile_n activation rows; the ring is
// 1024-byte aligned; split-K needs room for the partial sums it receives.
TEST(MidMLayout, RingAndReduceBytes) {
  const Layout l = layout(problem(128, 8192, 8192), ring(128, 1, 6));
  EXPECT_EQ(l.tile_n, 128);
  EXPECT_EQ(l.w_bytes, 128 * 128);
  EXPECT_EQ(l.a_bytes, 128 * 128);
  EXPECT_EQ(l.stage_bytes, 32 * 1024);
  EXPECT_EQ(l.ring_bytes, size_t(6 * 32 * 1024));
  EXPECT_EQ(l.reduce_bytes, size_t(0));
  EXPECT_EQ(l.shared_bytes, size_t(6 * 32 * 1024 + 1024));
  EXPECT_EQ(layout(problem(33, 4096, 4096), ring(64, 1, 4)).stage_bytes, (64 + 40) * 128);
  for (int64_t m = kMinM; m <= kMaxM; ++m)
    for (int rows : {64, 128}) EXPECT_EQ(layout(problem(m, 4096, 4096), ring(rows, 1, 2)).stage_bytes % 1024, 0) << m;
  // Split-K: [splitk][tile_n / 2][ceil(consumer threads / splitk)] floats; at 2 stages of 128 + 256
  // rows (96 KB) the 8 ranks' partial sums (8 x 128 x 32 x 4 = 128 KB) set the size.
  const Layout r = layout(problem(256, 8192, 8192), ring(128, 8, 2));
  EXPECT_EQ(r.reduce_bytes, size_t(8 * 128 * 32 * 4));
  EXPECT_EQ(r.ring_bytes, size_t(2 * 384 * 128));
  EXPECT_EQ(r.shared_bytes, r.reduce_bytes + 1024);
  EXPECT_EQ(layout(problem(40, 8192, 8192), ring(64, 3, 4)).reduce_bytes, size_t(3 * 20 * 43 * 4));
  // mcast changes nothing in a block's layout.
  EXPECT_EQ(layout(problem(96, 8192, 8192), with_mcast(ring(128, 2, 5))).shared_bytes,
            layout(problem(96, 8192, 8192), ring(128, 2, 5)).shared_bytes);
}

TEST(MidMLayout, DeepestRingThatFits) {
  // 228 KB an SM, 1 KB reserved and the barriers a block: 7 stages of 32 KB (M = 128, 128 rows)
  // for one block, 3 for two.
  const Problem p = problem(128, 8192, 8192);
  EXPECT_EQ(deepest_ring(p, ring(128, 1, 4), 1, kH200), 7);
  EXPECT_EQ(deepest_ring(p, ring(128, 1, 4), 2, kH200), 3);
  EXPECT_EQ(deepest_ring(p, ring(128, 1, 4), 3, kH200), 0);  // fewer than 3 stages
  EXPECT_EQ(deepest_ring(problem(256, 8192, 8192), ring(128, 1, 4), 1, kH200), 4);  // 48 KB stages
  // 13 KB stages (M = 40, 64 rows): 17 fit, the candidates' cap is 16.
  EXPECT_EQ(deepest_ring(problem(40, 8192, 8192), ring(64, 1, 4), 1, kH200), 16);
  EXPECT_EQ(deepest_ring(problem(40, 8192, 8192), ring(64, 1, 4), 1, kH200, 32), 17);
  for (int per_sm = 1; per_sm <= 4; ++per_sm)
    for (int64_t m : {33, 64, 100, 200, 256}) {
      const Config c = ring(128, 1, 4);
      const int st = deepest_ring(problem(m, 8192, 8192), c, per_sm, kH200);
      if (st == 0) continue;
      Config deep = c;
      deep.stages = st;
      EXPECT_LE(per_sm * (layout(problem(m, 8192, 8192), deep).shared_bytes + kStaticSharedBytes + kReservedPerBlock),
                kH200.smem_per_sm);
      EXPECT_TRUE(can_implement(problem(m, 8192, 8192), deep, kH200)) << deep.to_string();
    }
}

// register_cap follows ptxas: each scheduler's 16K registers shared by the warps dealt to it.
TEST(MidMLayout, RegistersPerThreadAsPtxasCountsThem) {
  EXPECT_EQ(block_threads(1), 160);
  EXPECT_EQ(block_threads(2), 288);
  EXPECT_EQ(register_cap(1, 288), 168);  // 9 warps: 3 on some scheduler
  EXPECT_EQ(register_cap(2, 288), 96);
  EXPECT_EQ(register_cap(1, 160), 255);
  EXPECT_EQ(register_cap(3, 160), 128);
  EXPECT_EQ(register_cap(4, 160), 96);
  // The blocks per SM each kernel is built for leave its accumulators and the overhead.
  for (int wg : {1, 2})
    for (int n : kTileNs) {
      const int b = blocks_per_sm_by_registers(wg, n);
      EXPECT_GE(b, 1);
      EXPECT_LE(b, 4);
      if (b > 1) EXPECT_GE(register_cap(b, block_threads(wg)), accumulators(n) + kRegisterOverhead) << wg << " " << n;
      if (b < 4) EXPECT_LT(register_cap(b + 1, block_threads(wg)), accumulators(n) + kRegisterOverhead);
    }
  EXPECT_EQ(blocks_per_sm_by_registers(2, 256), 1);
  EXPECT_EQ(blocks_per_sm_by_registers(2, 64), 2);
  EXPECT_EQ(blocks_per_sm_by_registers(1, 128), 3);
  EXPECT_EQ(blocks_per_sm_by_registers(1, 48), 4);
}

TEST(MidMLayout, LaunchShape) {
  // 8192 / 128 = 64 row tiles, split 2: grid 64 x 2, a cluster of the two splits.
  LaunchShape s = launch_shape(problem(128, 8192, 8192), ring(128, 2, 6), kH200);
  EXPECT_EQ(s.grid[0], 64u);
  EXPECT_EQ(s.grid[1], 2u);
  EXPECT_EQ(s.grid[2], 1u);
  EXPECT_EQ(s.cluster[0], 1u);
  EXPECT_EQ(s.cluster[1], 2u);
  EXPECT_EQ(s.threads, 288);
  EXPECT_EQ(s.units, 64);
  EXPECT_EQ(s.shared_bytes, size_t(6 * 32 * 1024 + 1024));
  // Ragged n and batch: 4080 / 64 = 63.75 -> 64 tiles a batch, units batch-major.
  s = launch_shape(problem(40, 4080, 1040, 3), ring(64, 1, 4), kH200);
  EXPECT_EQ(s.tiles, 64);
  EXPECT_EQ(s.real_tiles, 64);
  EXPECT_EQ(s.units, 192);
  EXPECT_EQ(s.grid[0], 192u);
  EXPECT_EQ(s.threads, 160);
  // mcast=2: odd tiles padded to pairs; cluster (2, splitk).
  s = launch_shape(problem(96, 1408, 4096, 3), with_mcast(ring(128, 3, 4)), kH200);
  EXPECT_EQ(s.real_tiles, 11);
  EXPECT_EQ(s.tiles, 12);
  EXPECT_EQ(s.units, 36);
  EXPECT_EQ(s.grid[0], 36u);
  EXPECT_EQ(s.cluster[0], 2u);
  EXPECT_EQ(s.cluster[1], 3u);
  // msplit=2: two M blocks per row tile, neighbours; with mcast=2 they are the pair (no padding).
  s = launch_shape(problem(128, 8192, 8192), with_msplit(ring(128, 1, 9), 2), kH200);
  EXPECT_EQ(s.units, 128);
  EXPECT_EQ(s.grid[0], 128u);
  EXPECT_EQ(s.cluster[0], 1u);
  EXPECT_EQ(s.shared_bytes, size_t(9 * (16 + 8) * 1024 + 1024));  // 128 weight rows, 64 activation rows
  s = launch_shape(problem(96, 1408, 4096, 3), with_mcast(with_msplit(ring(128, 3, 4), 2)), kH200);
  EXPECT_EQ(s.real_tiles, 11);
  EXPECT_EQ(s.tiles, 11);
  EXPECT_EQ(s.units, 66);
  EXPECT_EQ(s.cluster[0], 2u);
  EXPECT_EQ(s.cluster[1], 3u);
  // Persistent: P blocks per SM of the device, whole pairs, at most one per unit.
  const Problem big = problem(128, 57344, 8192);  // 448 tiles of 128 rows
  EXPECT_EQ(launch_shape(big, with_persist(ring(128, 1, 7), 1), kH200).grid[0], 132u);
  EXPECT_EQ(launch_shape(big, with_persist(ring(128, 1, 7), 1), kH100Pcie).grid[0], 114u);
  EXPECT_EQ(launch_shape(big, with_persist(ring(64, 1, 3), 2), kH200).grid[0], 264u);
  EXPECT_EQ(launch_shape(problem(128, 57344 + 128, 8192), with_persist(with_mcast(ring(128, 1, 7)), 1), kH200).grid[0],
            132u);
  EXPECT_EQ(launch_shape(problem(128, 57344, 8192), with_persist(with_mcast(ring(128, 1, 7)), 1), kH100Pcie).grid[0],
            114u);
  EXPECT_EQ(launch_shape(problem(128, 2048, 8192), with_persist(ring(128, 1, 7), 1), kH200).grid[0], 16u);
  EXPECT_EQ(launch_shape(problem(128, 8192, 8192), with_persist(with_mcast(ring(128, 1, 7)), 1), device(131)).grid[0],
            64u);
  EXPECT_EQ(launch_shape(problem(128, 65536, 8192), with_persist(with_mcast(ring(128, 1, 7)), 1), device(131)).grid[0],
            130u);  // whole pairs
}

TEST(MidMLayout, CanImplementStatesTheLimits) {
  const Config c = ring(128, 1, 4);
  EXPECT_TRUE(can_implement(problem(128, 8192, 8192), c, kH200));
  EXPECT_TRUE(can_implement(problem(33, 16, 16), c, kH200));
  EXPECT_TRUE(can_implement(problem(255, 4080, 2064, 3), c, kH200));  // ragged tile, K tail, batch
  EXPECT_TRUE(can_implement(problem(200, 8192, 32768), with_mcast(ring(128, 4, 4)), kH100Pcie));
  for (int cc : {80, 89, 100, 120}) expect_refused(problem(128, 4096, 4096), c, "compute capability 9.0", device(132, cc));
  expect_refused(problem(32, 4096, 4096), c, "m must be in 33..256");
  expect_refused(problem(257, 4096, 4096), c, "m must be in 33..256");
  expect_refused(problem(64, 4104, 4096), c, "n must be a positive multiple of 16");
  expect_refused(problem(64, 0, 4096), c, "n must be a positive multiple of 16");
  expect_refused(problem(64, 4096, 4104), c, "k must be a positive multiple of 16 (TMA");
  expect_refused(problem(64, 4096, 4096, 0), c, "batch must be in 1..65535");
  expect_refused(problem(64, 4096, 4096, 65536), c, "batch must be in 1..65535");
  Problem e5 = problem(64, 4096, 4096);
  e5.a_type = e5.b_type = DType::kE5M2;
  expect_refused(e5, c, "e5m2 x e5m2");
  for (auto [a, b] : {std::pair{DType::kE5M2, DType::kE4M3}, std::pair{DType::kE4M3, DType::kE5M2}}) {
    Problem mixed = problem(64, 4096, 4096);
    mixed.a_type = a;
    mixed.b_type = b;
    EXPECT_TRUE(can_implement(mixed, c, kH200));
  }
  Problem bf16_in = problem(64, 4096, 4096);
  bf16_in.a_type = DType::kBF16;
  expect_refused(bf16_in, c, "A and B must be FP8");
  Problem fp8_out = problem(64, 4096, 4096);
  fp8_out.out_type = DType::kE4M3;
  expect_refused(fp8_out, c, "out must be bf16 or fp16");
  Problem fp16_out = problem(64, 4096, 4096);
  fp16_out.out_type = DType::kFP16;
  EXPECT_TRUE(can_implement(fp16_out, c, kH200));
  Problem misaligned = problem(64, 4096, 4096);
  misaligned.alignment = 8;
  expect_refused(misaligned, c, "16-byte aligned (TMA");
  expect_refused(problem(64, 4096, 256), ring(128, 3, 4), "every split needs a stage of K");  // 2 K blocks, 3 splits
  EXPECT_TRUE(can_implement(problem(64, 4096, 256), ring(128, 2, 4), kH200));
  // 16 stages of (128 + 256) x 128 bytes = 768 KB.
  expect_refused(problem(256, 4096, 4096), ring(128, 1, 16), "must fit the device's 226 KB of shared memory");
  expect_refused(problem(128, 4096, 4096), ring(128, 1, 7, Pdl::kOff), "the device's 99 KB",
                 [] {
                   DeviceLimits small = device(132);
                   small.smem_per_block = 100 * 1024;  // a device with less shared memory a block
                   return small;
                 }());
  // A name that does not exist is refused before the problem is looked at.
  Config bad = c;
  bad.rows = 96;
  expect_refused(problem(64, 4096, 4096), bad, "rows must be 64");
}

TEST(MidMLayout, MSplitBlocksTakeTheWgmmaNOfTheirShare) {
  EXPECT_EQ(layout(problem(128, 4096, 4096), with_msplit(ring(128, 1, 4), 2)).tile_n, 64);
  EXPECT_EQ(layout(problem(200, 4096, 4096), with_msplit(ring(128, 1, 4), 4)).tile_n, 56);  // 50 rows
  EXPECT_EQ(layout(problem(97, 4096, 4096), with_msplit(ring(128, 1, 4), 2)).tile_n, 56);   // 49 rows
  EXPECT_EQ(block_m(97, 2), 49);
  EXPECT_EQ(block_m(256, 4), 64);
  EXPECT_EQ(same_tiles_up_to(problem(100, 4096, 4096), with_msplit(ring(128, 1, 4), 2)), 112);  // 2 x 56
  EXPECT_EQ(same_tiles_up_to(problem(200, 4096, 4096), with_msplit(ring(128, 1, 4), 2)), 224);  // 2 x 112
  EXPECT_EQ(same_tiles_up_to(problem(250, 4096, 4096), with_msplit(ring(128, 1, 4), 4)), 256);
  for (int msplit : {2, 4})
    for (int64_t m = kMinM; m <= kMaxM; ++m) {
      const Config c = with_msplit(ring(128, 1, 4), msplit);
      const int64_t up = same_tiles_up_to(problem(m, 4096, 4096), c);
      EXPECT_GE(up, m);
      EXPECT_LE(up, kMaxM);
      EXPECT_EQ(layout(problem(up, 4096, 4096), c).tile_n, layout(problem(m, 4096, 4096), c).tile_n) << m;
    }
}

TEST(MidMLayout, KStageHoldsTwoKBlocksAStage) {
  const Problem p = problem(128, 8192, 1088);  // 9 K blocks
  EXPECT_EQ(k_steps(p, ring(128, 1, 4)), 9);
  EXPECT_EQ(k_steps(p, with_kstage(ring(128, 1, 4), 2)), 5);  // the last stage's second block reads zeros
  EXPECT_EQ(layout(p, with_kstage(ring(128, 1, 4), 2)).stage_bytes, 2 * (128 + 128) * 128);
  EXPECT_TRUE(can_implement(p, with_kstage(ring(128, 5, 2), 2), kH200));
  expect_refused(p, with_kstage(ring(128, 6, 2), 2), "splitk must be <= ceil(k / (128 * kstage))");
  expect_refused(p, with_kstage(ring(128, 1, 4), 2), "stages * kstage * (rows + tile_n) * 128 bytes");
}

TEST(MidMLayout, SameTilesUpToTheWgmmaN) {
  const Config c = ring(128, 1, 4);
  EXPECT_EQ(same_tiles_up_to(problem(33, 4096, 4096), c), 40);
  EXPECT_EQ(same_tiles_up_to(problem(48, 4096, 4096), c), 48);
  EXPECT_EQ(same_tiles_up_to(problem(100, 4096, 4096), c), 112);
  EXPECT_EQ(same_tiles_up_to(problem(256, 4096, 4096), c), 256);
  for (int64_t m = kMinM; m <= kMaxM; ++m) {
    const int64_t up = same_tiles_up_to(problem(m, 4096, 4096), c);
    EXPECT_GE(up, m);
    EXPECT_EQ(tile_n(up), tile_n(m));
    if (up < kMaxM) EXPECT_NE(tile_n(up + 1), tile_n(m));
  }
}

}  // namespace
}  // namespace fp8gemm::mid_m
