// small_m's default rule and candidate rules (small_m_candidates.cpp): the recorded lists over the
// DESIGN suite and odd shapes, and each rule's configs. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <cinttypes>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "backends/small_m/small_m_config.h"
#include "backends/small_m/small_m_layout.h"
#include "fp8gemm/error.h"
#include "problem_util.h"

namespace fp8gemm::small_m {
namespace {

using ::fp8gemm::testing::problem;

bool small_weights(const Problem& p) { return p.n * p.k * p.batch <= (int64_t(40) << 20); }

// The recorded candidate lists (tests/data/small_m_candidates_sm90.inc): per (SM count, n, k,
// batch) the count and FNV-1a 64 hash of every candidate name (Config::legacy_name) over m = 1..32
// and the three dtype pairs.
struct RecordedLists {
  int sms;
  int64_t n, k, batch, names;
  uint64_t hash;
};
const RecordedLists kRecorded[] = {
#include "data/small_m_candidates_sm90.inc"
};

TEST(SmallMCandidates, MatchTheRecordedLists) {
  const std::pair<DType, DType> pairs[] = {
      {DType::kE4M3, DType::kE4M3}, {DType::kE4M3, DType::kE5M2}, {DType::kE5M2, DType::kE4M3}};
  for (const RecordedLists& r : kRecorded) {
    uint64_t hash = 0xcbf29ce484222325ull;
    int64_t names = 0;
    for (int64_t m = 1; m <= 32; ++m)
      for (auto [a, b] : pairs) {
        Problem p = problem(m, r.n, r.k, r.batch);
        p.a_type = a;
        p.b_type = b;
        for (const Config& c : candidate_configs(p, r.sms, 90)) {
          // Hashed as recorded, in the spelling with l2pf=0 that names had then.
          for (char ch : c.legacy_name() + "\n") hash = (hash ^ uint8_t(ch)) * 0x100000001b3ull;
          ++names;
        }
      }
    char now[80];
    std::snprintf(now, sizeof now, "{%d, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", 0x%016" PRIx64 "ull},",
                  r.sms, r.n, r.k, r.batch, names, hash);
    EXPECT_TRUE(names == r.names && hash == r.hash) << "now " << now;
  }
  EXPECT_EQ(std::size(kRecorded), 136u);
}

// Every candidate runs its problem, is distinct, comes from a family and ring depth that is offered
// (no PDL-off one, rings of at most 16 stages); the fill rule's config comes first.
TEST(SmallMCandidates, AreImplementableDistinctAndDefaultFirst) {
  const int64_t shapes[][2] = {{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}, {10240, 8192},
                               {8192, 8192}, {57344, 8192}, {8192, 28672}, {1280, 8192}, {8192, 1024},
                               {7168, 8192}, {8192, 3584}, {21504, 4096}, {4096, 21504}, {18560, 4096},
                               {4096, 8192}, {7168, 4480}, {15680, 4480}, {4480, 15680}, {22656, 4480},
                               {4608, 4096}, {5376, 4096}, {4096, 5376}};
  for (const auto& s : shapes)
    for (int64_t m : {1, 2, 4, 8, 16, 24, 32}) {
      const Problem p = problem(m, s[0], s[1]);
      const auto cands = candidate_configs(p, 132, 90);
      ASSERT_FALSE(cands.empty());
      EXPECT_EQ(cands.front(), fill_config(p, 132, 90));
      std::set<std::string> seen;
      for (const Config& x : cands) {
        EXPECT_TRUE(can_implement(p, x, 90)) << p << " " << x.to_string();
        EXPECT_TRUE(seen.insert(x.to_string()).second) << "duplicate candidate " << x.to_string();
        EXPECT_NE(x.pdl, Pdl::kOff) << x.to_string();
        EXPECT_LE(x.stages, kMaxStages) << x.to_string();
      }
    }
}

// tactics() lists default_config first and the candidates after it: the fitted default must be
// one of them (else `tune` would time a config the candidate rules never offer). Suite shapes,
// shapes of no data file, batch 1-3, both SM counts.
TEST(SmallMCandidates, TheFittedDefaultIsACandidate) {
  const int64_t shapes[][2] = {{6144, 4096}, {28672, 4096}, {8192, 1024}, {19168, 1232}, {3200, 2576},
                               {1424, 2688}, {41840, 1456}, {2304, 16384}, {37888, 3584}, {1040, 2064},
                               {16, 16},     {65536, 1024}, {1024, 65536}};
  for (const int sms : {132, 114})
    for (const auto& s : shapes)
      for (int64_t batch : {1, 2, 3})
        for (int64_t m = 1; m <= 32; ++m) {
          const Problem p = problem(m, s[0], s[1], batch);
          const std::vector<Config> cands = candidate_configs(p, sms, 90);
          if (cands.empty()) continue;
          const Config d = default_config(p, sms, 90);
          EXPECT_NE(std::find(cands.begin(), cands.end(), d), cands.end())
              << p << " sms=" << sms << ": default " << d.to_string() << " is not a candidate";
        }
}

TEST(SmallMCandidates, NoneOffSm90AndTheDefaultSaysWhy) {
  for (int cc : {89, 100, 120}) EXPECT_TRUE(candidate_configs(problem(4, 4096, 4096), 148, cc).empty()) << cc;
  const auto expect_unsupported = [](const Problem& p, int cc, const char* why) {
    try {
      default_config(p, 132, cc);
      ADD_FAILURE() << p << " accepted on " << cc;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  expect_unsupported(problem(64, 4096, 4096), 90, "m must be in 1..32");
  expect_unsupported(problem(8, 4096, 4096), 100, "compute capability 9.0");
}

// The fill rule: K > 1024, the TMA ring at 64 rows with split-K to at least one block per SM (as
// far as K splits) and the deepest ring with which two blocks share an SM; K <= 1024, the
// cp.async ring at 64 rows without split-K, the same ring depth.
TEST(SmallMCandidates, DefaultFillsTheSms) {
  const std::pair<int64_t, int64_t> shapes[] = {{6144, 4096}, {8192, 1024}, {57344, 8192}, {1280, 8192}, {4096, 512}};
  for (const auto& s : shapes)
    for (int64_t m : {1, 9, 32}) {
      const Problem p = problem(m, s.first, s.second);
      const Config c = fill_config(p, 132, 90);
      EXPECT_EQ(c.family, p.k <= 1024 ? Family::kCpAsyncRing : Family::kTmaRing) << c.to_string();
      EXPECT_EQ(c.rows, 64);
      EXPECT_EQ(c.pdl, Pdl::kAtStart);
      EXPECT_EQ(c.stages, std::max(4, deepest_ring(p, c, 2))) << c.to_string();
      EXPECT_LE(2 * (shared_bytes(p, c) + 1024 + 512), size_t(kSmSharedBytes)) << c.to_string();
      if (p.k <= 1024) EXPECT_EQ(c.splitk, 1) << c.to_string();
      const int64_t blocks = (p.n + 63) / 64 * c.splitk;
      if (p.k > 1024 && c.splitk < std::min<int64_t>(kMaxSplitK, k_blocks(p) / 4))
        EXPECT_GE(blocks, 132) << c.to_string();
    }
}

// pdl=2 and early=4 twins: on weights <= 40 MB only; pdl=2 of every candidate with PDL at start but
// the persistent ones, early=4 of every TMA ring one deeper than 4 stages; never the fill rule's.
TEST(SmallMCandidates, LateTriggerAndEarlyTwinsOnlyForSmallWeights) {
  const std::pair<int64_t, int64_t> shapes[] = {{4096, 4096}, {7168, 4480}, {8192, 1024}, {8192, 8192}, {28672, 4096}};
  for (const auto& s : shapes)
    for (int64_t m : {1, 16}) {
      const Problem p = problem(m, s.first, s.second);
      const auto cands = candidate_configs(p, 132, 90);
      const auto offered = [&](const Config& c) { return std::find(cands.begin(), cands.end(), c) != cands.end(); };
      int late = 0, early = 0;
      for (const Config& c : cands) {
        late += c.pdl == Pdl::kAfterKLoop;
        early += c.early > 0;
        if (c.early > 0) {
          EXPECT_EQ(c.early, 4) << c.to_string();
          EXPECT_TRUE(offered(with_early(c, 0))) << c.to_string();
        }
        if (c.pdl == Pdl::kAtStart && c.family != Family::kPersistent)
          EXPECT_EQ(offered(with_pdl(c, Pdl::kAfterKLoop)), small_weights(p)) << c.to_string();
        if (c.family == Family::kTmaRing && c.early == 0 && c.stages > 4)
          EXPECT_EQ(offered(with_early(c, 4)), small_weights(p)) << c.to_string();
      }
      EXPECT_EQ(late > 0, small_weights(p)) << p;
      EXPECT_EQ(early > 0, small_weights(p)) << p;
      EXPECT_EQ(fill_config(p, 132, 90).pdl, Pdl::kAtStart) << p;
      EXPECT_EQ(fill_config(p, 132, 90).early, 0) << p;
    }
}

// Split-K for `blocks_per_tile` blocks per row tile: at least 4 K blocks of 128 bytes each, 1..8.
int per_tile_split(const Problem& p, int64_t blocks_per_tile) {
  return int(std::clamp<int64_t>(std::min<int64_t>(blocks_per_tile, std::max<int64_t>(1, k_blocks(p) / 4)), 1, 8));
}

// cp.async rings at 64 and 128 rows come from: twins of the split-K TMA candidates (at most 8)
// and of the split-1 ones, about one block per SM, one wave of 2..4 blocks per SM, and (small
// weights) 64 rows at split 2.
TEST(SmallMCandidates, CpAsyncRingsFollowTheirRules) {
  const int64_t shapes[][2] = {{6144, 4096}, {4096, 4096}, {8192, 8192}, {10240, 8192}, {4096, 21504},
                               {57344, 8192}, {8192, 1024}, {4096, 5376}, {4480, 15680}};
  for (const auto& s : shapes)
    for (int64_t m : {1, 8, 16, 32}) {
      const Problem p = problem(m, s[0], s[1]);
      const auto cands = candidate_configs(p, 132, 90);
      const auto offered = [&](const Config& c) { return std::find(cands.begin(), cands.end(), c) != cands.end(); };
      for (const Config& c : cands) {
        if (c.family != Family::kCpAsyncRing || c.pdl != Pdl::kAtStart || c.block() != Block::kWarpgroups) continue;
        Config tma = c;
        tma.family = Family::kTmaRing;
        const int64_t tiles = (p.n + c.rows - 1) / c.rows;
        bool per_sm = c.splitk == per_tile_split(p, 132 / tiles) ||
                      c.splitk == per_tile_split(p, (132 + tiles - 1) / tiles);
        for (int occ : {2, 3, 4}) per_sm |= c.splitk == per_tile_split(p, occ * 132 / tiles);
        const bool split2 = c.rows == 64 && c.splitk == 2 && small_weights(p);
        EXPECT_TRUE(offered(tma) || per_sm || split2) << p << " " << c.to_string();
      }
      for (const Config& c : cands)
        if (c.family == Family::kTmaRing && c.pdl == Pdl::kAtStart && c.splitk == 1 && c.early == 0 && c.kblocks == 1 &&
            c.block() != Block::kFitted)
          EXPECT_TRUE(offered(with_cp_weights(c))) << p << " " << c.to_string();
      const int64_t t64 = (p.n + 63) / 64;
      EXPECT_TRUE(std::any_of(cands.begin(), cands.end(), [&](const Config& c) {
        return c.family == Family::kCpAsyncRing && c.rows == 64 && c.splitk == per_tile_split(p, 132 / t64);
      })) << p;
      if (small_weights(p))
        EXPECT_TRUE(std::any_of(cands.begin(), cands.end(), [](const Config& c) {
          return c.family == Family::kCpAsyncRing && c.rows == 64 && c.splitk == 2;
        })) << p;
    }
}

// K pairs: only at m <= 16; the split that gives one block per SM at most; rings for 1, 2 and 3
// blocks per SM, TMA and cp.async. Two pairs a stage (TMA) where K >= 8192 and the grid is one
// wave of at most one block per SM: the deepest ring one block fits and two stages less.
TEST(SmallMCandidates, KPairs) {
  for (int64_t m : {1, 8, 16, 17, 32}) {
    const Problem p = problem(m, 4096, 4096);
    int kpairs = 0, cp = 0, unsplit = 0;
    for (const Config& x : candidate_configs(p, 132, 90))
      if (x.block() == Block::kKPairs && x.family != Family::kActivationOnce) {
        ++kpairs;
        cp += x.family == Family::kCpAsyncRing;
        unsplit += x.splitk == 1;
      }
    if (m > 16) {
      EXPECT_EQ(kpairs, 0) << m;
      continue;
    }
    EXPECT_GE(cp, 3) << m;
    EXPECT_GE(kpairs - cp, 3) << m;
    EXPECT_GE(unsplit, 6) << m;  // 128 tiles of 32 rows on 132 SMs
  }
  bool split3 = false;  // 1280 rows, 40 tiles: split 3 gives 120 blocks
  for (const Config& x : candidate_configs(problem(8, 1280, 8192), 132, 90)) split3 |= x.rows == 32 && x.splitk == 3;
  EXPECT_TRUE(split3);
  const auto two_pairs = [](const Problem& p) {
    std::vector<std::string> out;
    for (const Config& x : candidate_configs(p, 132, 90))
      if (x.rows == 32 && x.kblocks == 2 && x.family == Family::kTmaRing) out.push_back(x.to_string());
    return out;
  };
  EXPECT_EQ(two_pairs(problem(1, 4096, 21504)),
            (std::vector<std::string>{"wgmma,rows=32,splitk=1,stages=10,pdl=1,kblocks=2",
                                      "wgmma,rows=32,splitk=1,stages=8,pdl=1,kblocks=2"}));
  EXPECT_EQ(two_pairs(problem(16, 4096, 21504)),
            (std::vector<std::string>{"wgmma,rows=32,splitk=1,stages=9,pdl=1,kblocks=2",
                                      "wgmma,rows=32,splitk=1,stages=7,pdl=1,kblocks=2"}));
  EXPECT_EQ(two_pairs(problem(16, 4096, 8192)).size(), 8u);  // <= 40 MB: with their pdl=2 and early=4 twins
  EXPECT_TRUE(two_pairs(problem(1, 4096, 5376)).empty());    // K < 8192
  EXPECT_TRUE(two_pairs(problem(17, 4096, 8192)).empty());   // K pairs: m <= 16
  EXPECT_TRUE(two_pairs(problem(1, 8192, 8192)).empty());    // 256 tiles of 32: two waves
  const std::vector<std::string> split3_pairs = two_pairs(problem(8, 1280, 8192));
  EXPECT_EQ(split3_pairs.size(), 8u);
  for (const std::string& n : split3_pairs) EXPECT_NE(n.find("splitk=3,"), std::string::npos) << n;
}

// Fitted rows that make the grid 2, 3 or 4 blocks per SM: each with TMA and with cp.async weights,
// no split-K, the ring for that occupancy.
TEST(SmallMCandidates, FittedRowsAtTwoToFourBlocksPerSm) {
  const auto fitted_of = [](const Problem& p) {
    std::set<int> rows;
    int cp = 0, tma = 0;
    for (const Config& x : candidate_configs(p, 132, 90))
      if (x.block() == Block::kFitted && x.kblocks == 1) {
        EXPECT_EQ(x.splitk, 1) << x.to_string();
        if (x.pdl == Pdl::kAtStart && x.early == 0) (x.family == Family::kCpAsyncRing ? cp : tma) += 1;
        rows.insert(x.rows);
      }
    EXPECT_EQ(cp, tma) << p;
    EXPECT_EQ(size_t(cp), rows.size()) << p;
    return rows;
  };
  EXPECT_EQ(fitted_of(problem(16, 18560, 4096)), std::set<int>({36, 47, 71}));
  EXPECT_EQ(fitted_of(problem(1, 28672, 4096)), std::set<int>({55, 73, 109}));
  EXPECT_EQ(fitted_of(problem(1, 4480, 15680)), std::set<int>());
  EXPECT_EQ(fitted_of(problem(32, 4096, 4096)), std::set<int>());
  EXPECT_EQ(fitted_of(problem(8, 4480, 4096, 2)), std::set<int>({34}));
  for (const Config& x : candidate_configs(problem(16, 18560, 4096), 132, 90))
    if (x.rows == 47) EXPECT_EQ(x.stages, (228 * 1024 / 3 - 1024 - 512 - 1024) / ((48 + 16) * 128)) << x.to_string();
  for (const Config& x : candidate_configs(problem(17, 18560, 4096), 132, 90))
    if (x.rows == 47 && x.family == Family::kCpAsyncRing && x.kblocks == 1)
      EXPECT_EQ(x.stages, (228 * 1024 / 3 - 1024 - 512 - 1024) / ((48 + 24) * 128)) << x.to_string();
}

// Fitted rows at one block per SM (rows = ceil(n / SMs)), K of 8 blocks or more: TMA with four K
// blocks a stage and the deepest ring; cp.async with four (one warpgroup: the deepest ring and one
// stage less) or two (two warpgroups); small weights also two a stage (TMA) with rings for two
// blocks per SM.
TEST(SmallMCandidates, FittedRowsAtOneBlockPerSmTakeSeveralKBlocksAStage) {
  const auto kblocks_of = [](const Problem& p) {
    std::vector<std::string> out;
    for (const Config& x : candidate_configs(p, 132, 90))
      if (x.kblocks > 1 && x.block() != Block::kKPairs) {
        EXPECT_EQ(x.splitk, 1) << x.to_string();
        out.push_back(x.to_string());
      }
    return out;
  };
  EXPECT_EQ(kblocks_of(problem(1, 4480, 15680)),
            (std::vector<std::string>{"wgmma,rows=34,splitk=1,stages=9,pdl=1,kblocks=4",
                                      "wgmma,rows=34,splitk=1,stages=7,pdl=1,kblocks=4,wload=cp",
                                      "wgmma,rows=34,splitk=1,stages=6,pdl=1,kblocks=4,wload=cp"}));
  EXPECT_EQ(kblocks_of(problem(16, 4480, 15680)),
            (std::vector<std::string>{"wgmma,rows=34,splitk=1,stages=7,pdl=1,kblocks=4",
                                      "wgmma,rows=34,splitk=1,stages=6,pdl=1,kblocks=4,wload=cp",
                                      "wgmma,rows=34,splitk=1,stages=5,pdl=1,kblocks=4,wload=cp"}));
  EXPECT_EQ(kblocks_of(problem(1, 8192, 8192)),
            (std::vector<std::string>{"wgmma,rows=63,splitk=1,stages=6,pdl=1,kblocks=4",
                                      "wgmma,rows=63,splitk=1,stages=6,pdl=1,kblocks=4,wload=cp",
                                      "wgmma,rows=63,splitk=1,stages=5,pdl=1,kblocks=4,wload=cp"}));
  const std::vector<std::string> qkv = kblocks_of(problem(1, 10240, 8192));  // 78 rows: two warpgroups
  ASSERT_EQ(qkv.size(), 2u);
  EXPECT_EQ(qkv[1], "wgmma,rows=78,splitk=1,stages=8,pdl=1,kblocks=2,wload=cp");
  const std::vector<std::string> qkv17 = kblocks_of(problem(17, 10240, 8192));
  ASSERT_EQ(qkv17.size(), 2u);
  EXPECT_EQ(qkv17[1], "wgmma,rows=78,splitk=1,stages=7,pdl=1,kblocks=2,wload=cp");
  EXPECT_TRUE(kblocks_of(problem(1, 4096, 4096)).empty());   // 32 rows: K pairs
  EXPECT_TRUE(kblocks_of(problem(1, 18560, 4096)).empty());  // 141 rows: not fitted
  EXPECT_TRUE(kblocks_of(problem(1, 4480, 896)).empty());    // 7 K blocks
  // 8 K blocks at <= 40 MB: the two-a-stage rings join, and the twins of them all.
  EXPECT_EQ(kblocks_of(problem(1, 4480, 1024)).size(), 4u + 4u + 2u * 4u);
  const Problem super_qkv = problem(1, 4608, 4096);
  const std::vector<std::string> two = kblocks_of(super_qkv);
  for (const char* name : {"wgmma,rows=35,splitk=1,stages=9,pdl=1,kblocks=2",
                           "wgmma,rows=35,splitk=1,stages=8,pdl=1,early=4,kblocks=2"})
    EXPECT_NE(std::find(two.begin(), two.end(), name), two.end()) << name;
  for (const std::string& n : kblocks_of(problem(1, 4480, 15680)))
    EXPECT_EQ(n.find("kblocks=2"), std::string::npos) << n;  // > 40 MB
}

// Activation once: at m = 1 on weights <= 40 MB, the deepest ring two blocks per SM fit, and its
// pdl=2 twin.
TEST(SmallMCandidates, ActivationOnceAtMOneOnSmallWeights) {
  const auto aonce_of = [](const Problem& p) {
    std::vector<std::string> out;
    for (const Config& k : candidate_configs(p, 132, 90))
      if (k.family == Family::kActivationOnce) out.push_back(k.to_string());
    return out;
  };
  EXPECT_EQ(aonce_of(problem(1, 4608, 4096)),
            (std::vector<std::string>{"wgmma,rows=32,splitk=1,stages=6,pdl=1,kblocks=2,aonce=1",
                                      "wgmma,rows=32,splitk=1,stages=6,pdl=2,kblocks=2,aonce=1"}));
  EXPECT_TRUE(aonce_of(problem(2, 4608, 4096)).empty());
  EXPECT_TRUE(aonce_of(problem(1, 4480, 15680)).empty());  // 70 MB
}

// Persistent candidates: 64 and 128 rows at 1 and 2 blocks per SM, each leaving one block's room
// per SM for the next kernel; split-K only at one block per SM.
TEST(SmallMCandidates, PersistentLeaveRoomForTheNextKernel) {
  for (const Problem& p : {problem(4, 4096, 4096), problem(1, 8192, 1024), problem(32, 57344, 8192)}) {
    int persist = 0;
    for (const Config& c : candidate_configs(p, 132, 90))
      if (c.family == Family::kPersistent) {
        ++persist;
        EXPECT_TRUE(c.persist == 1 || c.persist == 2) << c.to_string();
        EXPECT_TRUE(c.persist == 1 || c.splitk == 1) << c.to_string();
        EXPECT_LE((shared_bytes(p, c) + 1536) * size_t(c.persist + 1), size_t(kSmSharedBytes)) << c.to_string();
      }
    EXPECT_GE(persist, 2) << p;
  }
}

}  // namespace
}  // namespace fp8gemm::small_m
