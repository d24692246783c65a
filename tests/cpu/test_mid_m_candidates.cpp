// mid_m's candidate lists and default for an H200 (132 SMs) and a smaller Hopper (114 SMs): every
// candidate runs the problem and parses back, the list is distinct with the default first, the
// default keeps the SMs busy, and each rule offers what it says. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/mid_m/mid_m_config.h"
#include "backends/mid_m/mid_m_layout.h"
#include "backends/mid_m/mid_m_select.h"
#include "fp8gemm/error.h"
#include "mid_m_device.h"
#include "problem_util.h"

namespace fp8gemm::mid_m {
namespace {

using ::fp8gemm::testing::device;
using ::fp8gemm::testing::problem;

// The suite's layers (N, K) and M values of 64 < M <= 256 plus a few odd ones.
struct Shape {
  int64_t n, k;
};
const Shape kShapes[] = {{6144, 4096},  {4096, 4096},  {28672, 4096}, {4096, 14336}, {10240, 8192}, {8192, 8192},
                         {57344, 8192}, {8192, 28672}, {1280, 8192},  {8192, 1024},  {7168, 8192},  {8192, 3584},
                         {21504, 4096}, {4096, 21504}, {18560, 4096}, {4096, 8192},  {7168, 4480},  {15680, 4480},
                         {4480, 15680}, {22656, 4480}, {4608, 4096},  {5376, 4096},  {4096, 5376},  {16, 16},
                         {48, 80},      {336, 1088}};
const int64_t kMs[] = {33, 48, 64, 65, 96, 100, 128, 129, 192, 200, 255, 256};

double busy_share(const Problem& p, const Config& c, const DeviceLimits& d) {
  const LaunchShape s = launch_shape(p, c, d);
  const int64_t blocks = int64_t(s.grid[0]) * s.grid[1];
  const int64_t waves = (blocks + d.sm_count - 1) / d.sm_count;
  return double(blocks) / double(waves * d.sm_count);
}

TEST(MidMCandidates, AreImplementableDistinctCanonicalAndDefaultFirst) {
  for (const DeviceLimits& d : {device(132), device(114)})
    for (const Shape& s : kShapes)
      for (int64_t m : kMs)
        for (int64_t batch : {1, 3}) {
          const Problem p = problem(m, s.n, s.k, batch);
          const std::vector<Config> list = candidate_configs(p, d);
          ASSERT_FALSE(list.empty()) << p;
          EXPECT_EQ(list.front(), default_config(p, d)) << p;
          EXPECT_LE(list.size(), size_t(32)) << p;  // a tune times every one
          for (size_t i = 0; i < list.size(); ++i) {
            const Config& c = list[i];
            EXPECT_TRUE(can_implement(p, c, d)) << p << " " << c.to_string() << ": " << can_implement(p, c, d).reason;
            EXPECT_EQ(parse_config(c.to_string()), c);
            EXPECT_GE(c.stages, 3) << c.to_string();
            EXPECT_LE(c.stages, 16) << c.to_string();
            for (size_t j = 0; j < i; ++j) EXPECT_NE(list[j], c) << p << " " << c.to_string();
          }
        }
}

TEST(MidMCandidates, NoneOffSm90AndTheDefaultSaysWhy) {
  EXPECT_TRUE(candidate_configs(problem(128, 8192, 8192), device(132, 100)).empty());
  for (int64_t m : {1, 32, 257}) {
    try {
      default_config(problem(m, 8192, 8192), device(132));
      ADD_FAILURE() << "m=" << m;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
      EXPECT_NE(std::string(e.what()).find("m must be in 33..256"), std::string::npos) << e.what();
    }
  }
}

// The default: 128-row blocks, no multicast, one block per SM with the deepest ring, and the split
// that keeps the SMs busiest.
TEST(MidMCandidates, DefaultKeepsTheSmsBusy) {
  for (const DeviceLimits& d : {device(132), device(114)})
    for (const Shape& s : kShapes)
      for (int64_t m : kMs) {
        const Problem p = problem(m, s.n, s.k);
        const Config c = default_config(p, d);
        EXPECT_EQ(c.rows, 128);
        EXPECT_EQ(c.mcast, 1);
        EXPECT_EQ(c.persist, 0);
        EXPECT_EQ(c.pdl, Pdl::kAtStart);
        EXPECT_EQ(c.stages, deepest_ring(p, c, 1, d)) << p;
        // Where K allows 8 splits and the tiles of 8 splits make two waves, the chosen split keeps
        // most block slots busy.
        const int64_t kblocks = (s.k + 127) / 128, tiles = (s.n + 127) / 128;
        if (kblocks >= 4 * 8 && 8 * tiles >= 2 * d.sm_count)
          EXPECT_GE(busy_share(p, c, d), 0.7) << p << " " << c.to_string();
      }
  // llama70b.o at M = 128 on the H200: 64 row tiles, split 2 (128 of 132 SMs in one wave); on 114
  // SMs split 5 in three waves (320 of 342 slots) is estimated faster than split 1 (64 of 114) or 2
  // (two waves of half-full SMs).
  EXPECT_EQ(default_config(problem(128, 8192, 8192), device(132)), ring(128, 2, 7));
  EXPECT_EQ(default_config(problem(128, 8192, 8192), device(114)).splitk, 5);
  // llama70b.gate_up: 448 tiles in four waves (85% busy) or, split 2, seven (97%).
  EXPECT_EQ(default_config(problem(128, 57344, 8192), device(132)).splitk, 2);
  // A weight that fills a wave many times over, K short: no split.
  EXPECT_EQ(default_config(problem(128, 132 * 128 * 8, 1024), device(132)).splitk, 1);
  // K = 1024 (8 K blocks): at most 2 splits of >= 4 K blocks.
  EXPECT_LE(default_config(problem(128, 1024, 1024), device(132)).splitk, 2);
}

TEST(MidMCandidates, EachRuleOffersWhatItSays) {
  const DeviceLimits h200 = device(132);
  const auto has = [](const std::vector<Config>& list, auto pred) { return std::any_of(list.begin(), list.end(), pred); };
  // Small weights (<= 40 MB) get pdl=2 twins of the one-shot 128-row candidates; large ones none.
  const std::vector<Config> small = candidate_configs(problem(128, 4096, 4096), h200);
  EXPECT_TRUE(has(small, [](const Config& c) { return c.pdl == Pdl::kAfterKLoop && c.rows == 128; }));
  EXPECT_FALSE(has(small, [](const Config& c) { return c.pdl == Pdl::kAfterKLoop && c.rows == 64; }));
  const std::vector<Config> big = candidate_configs(problem(128, 57344, 8192), h200);
  EXPECT_FALSE(has(big, [](const Config& c) { return c.pdl == Pdl::kAfterKLoop; }));
  // Persistent grids only where the row tiles are more than one wave.
  EXPECT_TRUE(has(big, [](const Config& c) { return c.persist == 1 && c.mcast == 1; }));
  EXPECT_TRUE(has(big, [](const Config& c) { return c.persist == 1 && c.mcast == 2; }));
  EXPECT_FALSE(has(small, [](const Config& c) { return c.persist > 0; }));
  // Multicast and both block sizes everywhere; 64-row blocks at several occupancies where their
  // registers allow (M = 128: three blocks per SM).
  for (const std::vector<Config>* list : {&small, &big}) {
    EXPECT_TRUE(has(*list, [](const Config& c) { return c.mcast == 2 && c.rows == 128; }));
    EXPECT_TRUE(has(*list, [](const Config& c) { return c.mcast == 2 && c.rows == 64; }));
    EXPECT_TRUE(has(*list, [](const Config& c) { return c.rows == 64 && c.mcast == 1; }));
  }
  const Problem p128 = problem(128, 8192, 8192);
  const std::vector<Config> mid = candidate_configs(p128, h200);
  EXPECT_TRUE(has(mid, [&](const Config& c) { return c.rows == 64 && c.stages == deepest_ring(p128, c, 3, h200); }));
  // Above M = 64, 128-row blocks over M blocks of at most 64 rows, with and without the pair
  // sharing the weight tile; none at M <= 64.
  EXPECT_TRUE(has(mid, [](const Config& c) { return c.msplit == 2 && c.rows == 128 && c.shares_weights(); }));
  EXPECT_TRUE(has(mid, [](const Config& c) { return c.msplit == 2 && c.rows == 128 && c.mcast == 1; }));
  EXPECT_FALSE(has(mid, [](const Config& c) { return c.msplit == 4; }));  // 32-row blocks: not offered
  EXPECT_FALSE(has(candidate_configs(problem(64, 8192, 8192), h200), [](const Config& c) { return c.msplit > 1; }));
  EXPECT_TRUE(has(candidate_configs(problem(256, 8192, 8192), h200), [](const Config& c) { return c.msplit == 4; }));
  // Rings of two K blocks a stage where four such stages fit, else of one.
  EXPECT_EQ(default_config(problem(64, 8192, 8192), h200).kstage, 2);   // 4 x 48 KB
  EXPECT_EQ(default_config(p128, h200).kstage, 1);                       // 64 KB stages: three fit
  EXPECT_TRUE(has(mid, [](const Config& c) { return c.msplit == 2 && c.kstage == 2; }));
  for (const Config& c : mid)
    if (c.kstage == 2) EXPECT_GE(c.stages, 4) << c.to_string();
  // M = 256 (128 accumulators a thread): one block per SM only, each with the deepest ring.
  const Problem p256 = problem(256, 8192, 8192);
  for (const Config& c : candidate_configs(p256, h200)) {
    if (c.msplit > 1) continue;  // 64-row M blocks: the registers allow more
    EXPECT_EQ(c.stages, deepest_ring(p256, c, 1, h200)) << c.to_string();
    EXPECT_LE(c.persist, 1) << c.to_string();
  }
  // Split-K keeps >= 4 K blocks a split and clusters within 8 blocks.
  for (const Shape& s : kShapes)
    for (const Config& c : candidate_configs(problem(96, s.n, s.k), h200)) {
      EXPECT_LE(c.cluster_blocks(), kMaxClusterBlocks);
      if (c.splitk > 1) EXPECT_GE((s.k + 127) / 128 / c.splitk, 4) << s.n << "x" << s.k << " " << c.to_string();
    }
}

}  // namespace
}  // namespace fp8gemm::mid_m
