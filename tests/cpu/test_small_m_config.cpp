// small_m tactic names, limits and the default rule (no GPU needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

#include "backends/small_m/small_m_config.h"
#include "fp8gemm/error.h"

namespace fp8gemm::small_m {
namespace {

std::vector<Config> all_existing_configs() {
  std::vector<Config> out;
  for (int rows : {16, 32, 64})
    for (int splitk = 1; splitk <= kMaxSplitK; ++splitk)
      for (int warps : {1, 2, 4, 8})
        for (int stages : {1, 2, 4})
          for (bool pdl : {false, true}) {
            Config c{rows, splitk, warps, stages, pdl};
            if (config_exists(c)) out.push_back(c);
          }
  for (int rows : {64, 128})
    for (int splitk = 1; splitk <= kMaxSplitK; ++splitk)
      for (int stages = kWgmmaMinStages; stages <= kWgmmaMaxStages; ++stages)
        for (bool pdl : {false, true})
          for (int l2pf : {0, 1, 8, 64}) {
            const Config c = wgmma_config(rows, splitk, stages, pdl, l2pf);
            EXPECT_TRUE(config_exists(c)) << c.to_string();
            out.push_back(c);
            // pdl=2: the one-shot TMA and cp.async kernels with PDL.
            EXPECT_EQ(bool(config_exists(with_late_trigger(c))), pdl) << c.to_string();
            if (pdl) out.push_back(with_late_trigger(c));
            if (pdl && l2pf == 0) out.push_back(with_late_trigger(with_cp_weights(c)));
            // early=E: the one-shot TMA kernel with PDL and l2pf=0, 1 <= E < stages.
            for (int e : {1, 4, stages - 1}) {
              const bool ok = pdl && l2pf == 0 && e >= 1 && e < stages;
              EXPECT_EQ(bool(config_exists(with_early(c, e))), ok) << with_early(c, e).to_string();
              if (ok && (e != stages - 1 || e > 4)) {
                out.push_back(with_early(c, e));
                out.push_back(with_late_trigger(with_early(c, e)));
              }
            }
            if (l2pf == 0) {
              const Config cw = with_cp_weights(c);
              EXPECT_TRUE(config_exists(cw)) << cw.to_string();
              out.push_back(cw);
              const Config cr = with_reg_weights(c);
              EXPECT_EQ(bool(config_exists(cr)), rows == 64) << cr.to_string();
              if (rows == 64) out.push_back(cr);
            }
            for (int per_sm = 1; per_sm <= (rows == 64 ? 4 : 2) && splitk == 1 && l2pf == 0; ++per_sm) {
              const Config sk = streamk_config(rows, stages, pdl, per_sm);
              EXPECT_TRUE(config_exists(sk)) << sk.to_string();
              out.push_back(sk);
            }
            for (int persist = 1; persist <= kWgmmaMaxPersist && l2pf == 0; ++persist) {
              const Config cp = wgmma_config(rows, splitk, stages, pdl, 0, persist);
              EXPECT_TRUE(config_exists(cp)) << cp.to_string();
              out.push_back(cp);
            }
          }
  // rows=32 (K pairs): the one-shot kernels with TMA or cp.async weights, l2pf=0.
  for (int splitk = 1; splitk <= kMaxSplitK; ++splitk)
    for (int stages = kWgmmaMinStages; stages <= kWgmmaMaxStages; ++stages)
      for (bool pdl : {false, true}) {
        const Config c = wgmma_config(32, splitk, stages, pdl);
        for (const Config& v : {c, with_cp_weights(c)}) {
          EXPECT_TRUE(config_exists(v)) << v.to_string();
          out.push_back(v);
          if (pdl) out.push_back(with_late_trigger(v));
        }
        if (pdl && stages > 4) out.push_back(with_early(c, 4));
        // aonce=1: two pairs a stage, TMA weights, no split.
        if (splitk == 1) {
          const Config a = with_aonce(with_kblocks(c, 2));
          EXPECT_TRUE(config_exists(a)) << a.to_string();
          out.push_back(a);
          if (pdl) out.push_back(with_late_trigger(a));
        }
      }
  return out;
}

Problem problem(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  return p;
}

// wgmma kernels (sm_90a only) are refused on every other architecture, saying why.
void expect_sm90_only(const Config& c) {
  for (int cc : {89, 100, 120}) {
    const Verdict v = can_implement(problem(1, 4096, 4096), c, cc);
    EXPECT_FALSE(v) << cc;
    EXPECT_NE(v.reason.find("compute capability 9.0"), std::string::npos) << v.reason;
  }
}

// A name parse_config must reject, and a part of the message that says why.
struct Malformed {
  const char* name;
  const char* why;
};

template <size_t N>
void expect_rejected(const Malformed (&cases)[N]) {
  for (const Malformed& c : cases) {
    try {
      parse_config(c.name);
      ADD_FAILURE() << "accepted '" << c.name << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << c.name;
      EXPECT_NE(std::string(e.what()).find(c.why), std::string::npos) << c.name << ": " << e.what();
    }
  }
}

TEST(SmallMConfig, EveryConfigRoundTripsThroughItsName) {
  const auto configs = all_existing_configs();
  ASSERT_GT(configs.size(), 100u);
  std::set<std::string> names;
  for (const Config& c : configs) {
    const std::string name = c.to_string();
    EXPECT_EQ(parse_config(name), c) << name;
    EXPECT_TRUE(names.insert(name).second) << "two configs share the name " << name;
  }
  EXPECT_EQ(Config{}.to_string(), "rows=32,splitk=1,warps=8,stages=2,pdl=0");
  // v3 names and the v2 names the built-in default table uses.
  EXPECT_EQ(wgmma_config(64, 2, 8, true).to_string(), "wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1");
  EXPECT_EQ(wgmma_config(64, 2, 8, false, 16).to_string(), "wgmma,rows=64,splitk=2,stages=8,l2pf=16,pdl=0");
  EXPECT_EQ(wgmma_config(128, 4, 6, true, 0, 1).to_string(), "wgmma,rows=128,splitk=4,stages=6,l2pf=0,pdl=1,persist=1");
  EXPECT_EQ(parse_config("wgmma,rows=64,splitk=2,stages=11,l2pf=0,pdl=1,persist=2").persist, 2);
  EXPECT_EQ(parse_config("wgmma,rows=64,splitk=2,stages=11,l2pf=0,pdl=1").persist, 0);
  EXPECT_EQ(parse_config("wgmma,rows=128,splitk=1,stages=4,l2pf=0,pdl=0"), wgmma_config(128, 1, 4, false));
  EXPECT_TRUE(parse_config("wgmma,rows=64,splitk=1,stages=4,l2pf=1,pdl=0").wgmma);
  EXPECT_EQ(parse_config("wgmma,rows=64,splitk=1,stages=4,l2pf=64,pdl=0").l2pf, 64);
  EXPECT_EQ(parse_config("wgmma,rows=64,splitk=1,stages=4,l2pf=0,pdl=0").warps, 4);
  EXPECT_FALSE(parse_config("rows=16,splitk=1,warps=8,stages=2,pdl=1").wgmma);
  EXPECT_FALSE(parse_config("rows=16,splitk=3,warps=8,stages=2,pdl=1").wgmma);
  // cp.async weights: a suffix after pdl; absent = TMA, so earlier names keep their meaning.
  EXPECT_EQ(with_cp_weights(wgmma_config(64, 2, 12, true)).to_string(),
            "wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1,wload=cp");
  EXPECT_EQ(parse_config("wgmma,rows=128,splitk=4,stages=6,l2pf=0,pdl=0,wload=cp"),
            with_cp_weights(wgmma_config(128, 4, 6, false)));
  EXPECT_FALSE(parse_config("wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1").cp_weights);
  EXPECT_FALSE(parse_config("wgmma,rows=64,splitk=2,stages=11,l2pf=0,pdl=1,persist=2").cp_weights);
  EXPECT_FALSE(wgmma_config(64, 2, 12, true) == with_cp_weights(wgmma_config(64, 2, 12, true)));
  // Weights in registers: the other spelled value of the same field.
  EXPECT_EQ(with_reg_weights(wgmma_config(64, 3, 4, true)).to_string(),
            "wgmma,rows=64,splitk=3,stages=4,l2pf=0,pdl=1,wload=reg");
  const Config reg = parse_config("wgmma,rows=64,splitk=1,stages=4,l2pf=0,pdl=0,wload=reg");
  EXPECT_TRUE(reg.reg_weights);
  EXPECT_FALSE(reg.cp_weights);
  EXPECT_FALSE(with_reg_weights(wgmma_config(64, 2, 4, true)) == with_cp_weights(wgmma_config(64, 2, 4, true)));
  // The late trigger is pdl=2; pdl=1 keeps its meaning.
  EXPECT_EQ(with_late_trigger(with_cp_weights(wgmma_config(64, 3, 5, true))).to_string(),
            "wgmma,rows=64,splitk=3,stages=5,l2pf=0,pdl=2,wload=cp");
  const Config late = parse_config("wgmma,rows=64,splitk=2,stages=12,l2pf=8,pdl=2");
  EXPECT_TRUE(late.pdl && late.late_trigger);
  EXPECT_FALSE(parse_config("wgmma,rows=64,splitk=2,stages=12,l2pf=8,pdl=1").late_trigger);
  EXPECT_FALSE(late == wgmma_config(64, 2, 12, true, 8));
}

// early=E (stages of weights requested before the wait) is spelled after pdl, only when set, on
// the one-shot TMA kernel with PDL and l2pf=0; every other placement is refused with its rule.
TEST(SmallMConfig, EarlyNamesAndRules) {
  const Config e = with_early(with_late_trigger(wgmma_config(64, 5, 8, true)), 4);
  EXPECT_EQ(e.to_string(), "wgmma,rows=64,splitk=5,stages=8,l2pf=0,pdl=2,early=4");
  EXPECT_EQ(parse_config("wgmma,rows=128,splitk=4,stages=6,l2pf=0,pdl=1,early=4"),
            with_early(wgmma_config(128, 4, 6, true), 4));
  EXPECT_EQ(parse_config("wgmma,rows=64,splitk=5,stages=8,l2pf=0,pdl=2").early, 0);
  EXPECT_FALSE(e == with_late_trigger(wgmma_config(64, 5, 8, true)));
  const Malformed cases[] = {
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,early=8", "1..stages-1"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,early=-1", "1..stages-1"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,early=0", "not canonical"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=0,early=4", "needs pdl=1 or 2"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,early=4,wload=cp", "TMA weights"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,early=4,wload=reg", "TMA weights"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,early=4,persist=1", "TMA weights"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=8,pdl=1,early=4", "l2pf=0"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,early=4,pdl=1", "in this order"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,early=04", "not canonical"},
      {"rows=32,splitk=1,warps=8,stages=2,pdl=1,early=1", "trailing characters"},
  };
  expect_rejected(cases);
  Config v2;
  v2.pdl = true;
  v2.early = 1;
  EXPECT_NE(config_exists(v2).reason.find("wgmma (v3) field"), std::string::npos);
}

// early=4 twins: on weights <= 40 MB only, one per TMA one-shot PDL candidate (pdl=1 or 2) with
// l2pf=0 and a ring deeper than 4 stages (not aonce, which takes no early); never the default,
// never on other devices.
TEST(SmallMConfig, EarlyTwinsOnlyForSmallWeightsAndTheTmaKernel) {
  for (const auto& s : {std::pair<int64_t, int64_t>{4096, 4096}, {7168, 4480}, {8192, 1024}, {8192, 8192}, {28672, 4096}})
    for (int64_t m : {1, 16}) {
      const Problem p = problem(m, s.first, s.second);
      const auto cands = candidate_configs(p, 132, 90);
      const bool small = p.n * p.k <= (int64_t(40) << 20);
      int early = 0, eligible = 0;
      for (const Config& c : cands) {
        if (c.early > 0) {
          ++early;
          EXPECT_EQ(c.early, kEarlyStages) << c.to_string();
          EXPECT_TRUE(can_implement(p, c, 90)) << c.to_string();
          EXPECT_NE(std::find(cands.begin(), cands.end(), with_early(c, 0)), cands.end()) << c.to_string();
        } else if (c.wgmma && c.pdl && c.persist == 0 && c.streamk == 0 && !c.cp_weights && !c.reg_weights &&
                   c.l2pf == 0 && c.aonce == 0 && c.stages > kEarlyStages) {
          ++eligible;
          EXPECT_EQ(std::find(cands.begin(), cands.end(), with_early(c, kEarlyStages)) != cands.end(), small)
              << c.to_string();
        }
      }
      EXPECT_EQ(early, small ? eligible : 0) << p;
      if (small) EXPECT_GT(early, 0) << p;
      EXPECT_EQ(default_config(p, 132, 90).early, 0) << p;
      for (const Config& c : candidate_configs(p, 148, 100)) EXPECT_EQ(c.early, 0) << c.to_string();
    }
}

TEST(SmallMConfig, StreamKNamesAndRules) {
  const Config sk = streamk_config(64, 12, true, 2);
  EXPECT_EQ(sk.to_string(), "wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,streamk=2,wload=cp");
  EXPECT_EQ(parse_config("wgmma,rows=128,splitk=1,stages=6,l2pf=0,pdl=0,streamk=1,wload=cp"),
            streamk_config(128, 6, false, 1));
  EXPECT_EQ(parse_config("wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp").streamk, 0);
  EXPECT_FALSE(sk == with_cp_weights(wgmma_config(64, 1, 12, true)));
  const Malformed cases[] = {
      {"wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,streamk=2", "load their weights by cp.async"},
      {"wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1,streamk=2,wload=cp", "splitk=1"},
      {"wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,streamk=5,wload=cp", "1..4 blocks per SM at rows=64"},
      {"wgmma,rows=128,splitk=1,stages=12,l2pf=0,pdl=1,streamk=3,wload=cp", "1..2 at rows=128"},
      {"wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,streamk=-1,wload=cp", "1..4 blocks per SM"},
      {"wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=2,streamk=1,wload=cp", "pdl=0 or 1"},
      {"wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,streamk=0,wload=cp", "not canonical"},
      {"wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,streamk=1,wload=reg", "load their weights by cp.async"},
      {"wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp,streamk=1", "wload must be the last field"},
      {"wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,persist=1,streamk=1,wload=cp", "the one-shot kernel only"},
      {"rows=32,splitk=1,warps=8,stages=2,pdl=1,streamk=1", "trailing characters"},
  };
  expect_rejected(cases);
  Config v2;
  v2.streamk = 1;
  EXPECT_NE(config_exists(v2).reason.find("wgmma (v3) field"), std::string::npos);
}

// The grid is B blocks per SM but at most one per unit; the workspace holds two slots of
// NP/2 x rows*2 floats per block; every block of the grid must fit the SMs at once.
TEST(SmallMConfig, StreamKGridWorkspaceAndResidency) {
  const Problem big = problem(16, 10240, 8192);  // 160 x 64 units at rows 64
  EXPECT_EQ(streamk_grid(big, streamk_config(64, 12, true, 2), 132), 264);
  EXPECT_EQ(streamk_workspace_bytes(big, streamk_config(64, 12, true, 2), 132), 264u * 2 * 8 * 128 * 4);
  EXPECT_EQ(streamk_workspace_bytes(problem(17, 10240, 8192), streamk_config(128, 6, true, 1), 132),
            132u * 2 * 12 * 256 * 4);
  EXPECT_EQ(streamk_grid(problem(1, 64, 256), streamk_config(64, 4, true, 4), 132), 2);  // 1 tile x 2 K blocks
  EXPECT_EQ(streamk_grid(problem(1, 64, 256, 3), streamk_config(64, 4, true, 4), 132), 6);
  EXPECT_EQ(streamk_workspace_bytes(big, with_cp_weights(wgmma_config(64, 1, 12, true)), 132), 0u);
  EXPECT_EQ(streamk_grid(big, wgmma_config(64, 1, 12, true), 132), 0);
  // 2 blocks of a 12-stage ring of 64 + 16 rows (120 KB each) do not fit 228 KB; 1 does.
  const Verdict two = can_implement(big, streamk_config(64, 12, true, 2), 90);
  EXPECT_FALSE(two);
  EXPECT_NE(two.reason.find("must fit one SM's 228 KB"), std::string::npos) << two.reason;
  EXPECT_TRUE(can_implement(big, streamk_config(64, 12, true, 1), 90));
  EXPECT_TRUE(can_implement(big, streamk_config(64, 8, true, 2), 90));
  expect_sm90_only(streamk_config(64, 4, true, 1));
}

// streamk_candidates: rows 64 and 128 at 1 and 2 blocks per SM, each with the deepest ring for
// that occupancy and with the one that leaves room for one more block. Not offered (slower than
// the other small_m tactics everywhere on the H200): candidate_configs holds none.
TEST(SmallMConfig, StreamKCandidatesFollowTheirRuleAndAreNotOffered) {
  const int64_t shapes[][2] = {{6144, 4096}, {4096, 4096}, {10240, 8192}, {4480, 15680}, {8192, 1024}, {57344, 8192}};
  for (const auto& s : shapes)
    for (int64_t m : {1, 9, 32}) {
      const Problem p = problem(m, s[0], s[1]);
      for (const Config& c : candidate_configs(p, 132, 90)) EXPECT_EQ(c.streamk, 0) << c.to_string();
      int offered = 0;
      for (const Config& c : streamk_candidates(p)) {
        EXPECT_GT(c.streamk, 0) << c.to_string();
        ++offered;
        EXPECT_TRUE(can_implement(p, c, 90)) << c.to_string();
        EXPECT_TRUE(c.cp_weights && c.pdl && c.splitk == 1 && c.l2pf == 0) << c.to_string();
        EXPECT_TRUE(c.streamk == 1 || c.streamk == 2) << c.to_string();
        const int64_t per_block = int64_t(shared_bytes(p, c)) + 1280;
        EXPECT_LE(per_block * c.streamk, 228 * 1024) << c.to_string();
        // The deepest ring for streamk or streamk + 1 blocks: one stage more would not fit.
        Config deeper = c;
        ++deeper.stages;
        const bool deepest_for_b = (int64_t(shared_bytes(p, deeper)) + 1280) * c.streamk > 228 * 1024 ||
                                   deeper.stages > kWgmmaMaxStages;
        const bool deepest_for_b1 = (int64_t(shared_bytes(p, deeper)) + 1280) * (c.streamk + 1) > 228 * 1024;
        EXPECT_TRUE(deepest_for_b || deepest_for_b1) << c.to_string();
      }
      EXPECT_GE(offered, 4) << p;
      EXPECT_LE(offered, 8) << p;
      EXPECT_EQ(default_config(p, 132, 90).streamk, 0) << p;
      for (const Config& c : candidate_configs(p, 148, 100)) EXPECT_EQ(c.streamk, 0) << c.to_string();
    }
}

TEST(SmallMConfig, RejectsMisplacedLateTriggerWithTheReason) {
  const Malformed cases[] = {
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=3", "0, 1 or 2"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=-1", "0, 1 or 2"},
      {"rows=16,splitk=1,warps=8,stages=2,pdl=2", "0 or 1"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=2,persist=1", "not persist"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=2,wload=reg", "not wload=reg"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=02", "not canonical"},
  };
  expect_rejected(cases);
  Config v2;
  v2.pdl = true;
  v2.late_trigger = true;
  EXPECT_NE(config_exists(v2).reason.find("wgmma (v3) field"), std::string::npos);
  Config no_pdl = wgmma_config(64, 2, 8, false);
  no_pdl.late_trigger = true;
  EXPECT_NE(config_exists(no_pdl).reason.find("programmatic dependent launch"), std::string::npos);
}

// Late-trigger twins are offered for weights <= 40 MB only, one per one-shot PDL candidate.
TEST(SmallMConfig, LateTriggerTwinsOnlyForSmallWeights) {
  for (const auto& s : {std::pair<int64_t, int64_t>{4096, 4096}, {7168, 4480}, {8192, 1024}, {8192, 8192}, {28672, 4096}})
    for (int64_t m : {1, 16}) {
      const Problem p = problem(m, s.first, s.second);
      const auto cands = candidate_configs(p, 132, 90);
      const bool small = p.n * p.k <= (int64_t(40) << 20);
      int late = 0, eligible = 0;
      for (const Config& c : cands) {
        late += c.late_trigger;
        if (c.wgmma && c.pdl && !c.late_trigger && c.persist == 0 && c.streamk == 0 && !c.reg_weights) {
          ++eligible;
          EXPECT_EQ(std::find(cands.begin(), cands.end(), with_late_trigger(c)) != cands.end(), small) << c.to_string();
        }
      }
      EXPECT_EQ(late, small ? eligible : 0) << p;
      EXPECT_FALSE(default_config(p, 132, 90).late_trigger) << p;
      for (const Config& c : candidate_configs(p, 148, 100)) EXPECT_FALSE(c.late_trigger) << c.to_string();
    }
}

TEST(SmallMConfig, RejectsMalformedWloadWithTheReason) {
  const Malformed cases[] = {
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,wload=tma", "its values are cp"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,wload=", "its values are cp"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,wload=CP", "its values are cp"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,wload=cp,", "its values are cp"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,wload=cp,wload=cp", "its values are cp"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,wload=cp,pdl=1", "in this order"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,wload=cp,persist=1", "its values are cp"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,persist=1,wload=cp", "one-shot kernel only"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=8,pdl=1,wload=cp", "l2pf=0"},
      {"wgmma,rows=64,splitk=2,stages=33,l2pf=0,pdl=1,wload=cp", "stages must be in 2..32"},
      {"wgmma,rows=64,splitk=02,stages=8,l2pf=0,pdl=1,wload=cp", "not canonical"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1wload=cp", "pdl"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,,wload=cp", ""},
      {"rows=16,splitk=1,warps=8,stages=2,pdl=1,wload=cp", "trailing characters"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,wload=REG", "its values are cp"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,wload=cp,wload=reg", "its values are cp"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,wload=reg,wload=cp", "its values are cp"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1,persist=1,wload=reg", "one-shot kernel only"},
      {"wgmma,rows=64,splitk=2,stages=8,l2pf=4,pdl=1,wload=reg", "l2pf=0"},
      {"wgmma,rows=128,splitk=2,stages=8,l2pf=0,pdl=1,wload=reg", "rows=64"},
      {"rows=16,splitk=1,warps=8,stages=2,pdl=1,wload=reg", "trailing characters"},
  };
  expect_rejected(cases);
  // The struct-level rules, with reasons.
  Config v2;
  v2.cp_weights = true;
  EXPECT_NE(config_exists(v2).reason.find("wgmma (v3) field"), std::string::npos);
  EXPECT_FALSE(config_exists(with_cp_weights(wgmma_config(64, 1, 8, true, 0, 1))));
  EXPECT_FALSE(config_exists(with_cp_weights(wgmma_config(64, 1, 8, true, 8))));
  Config v2r;
  v2r.reg_weights = true;
  EXPECT_NE(config_exists(v2r).reason.find("wgmma (v3) field"), std::string::npos);
  EXPECT_NE(config_exists(with_reg_weights(with_cp_weights(wgmma_config(64, 1, 8, true)))).reason.find("either"),
            std::string::npos);
}

TEST(SmallMConfig, RejectsGarbageAndNonCanonicalNames) {
  for (const char* bad : {"", "rows=32", "rows=32,splitk=1,warps=8,stages=2",
                          "rows=32,splitk=1,warps=8,stages=2,pdl=0,", "rows=32,splitk=1,warps=8,stages=2,pdl=2",
                          "splitk=1,rows=32,warps=8,stages=2,pdl=0", "rows=032,splitk=1,warps=8,stages=2,pdl=0",
                          "rows=+32,splitk=1,warps=8,stages=2,pdl=0", "rows=32,splitk=1,warps=8,stages=2,pdl=0x",
                          "rows=32, splitk=1,warps=8,stages=2,pdl=0", "rows=48,splitk=1,warps=8,stages=2,pdl=0",
                          "rows=32,splitk=9,warps=8,stages=2,pdl=0", "rows=32,splitk=0,warps=8,stages=2,pdl=0",
                          "rows=32,splitk=1,warps=3,stages=2,pdl=0", "rows=32,splitk=1,warps=8,stages=3,pdl=0",
                          "rows=64,splitk=1,warps=8,stages=2,pdl=0", "rows=16,splitk=1,warps=8,stages=8,pdl=0", "rows=abc,splitk=1,warps=8,stages=2,pdl=0",
                          "rows=99999999999,splitk=1,warps=8,stages=2,pdl=0",
                          // v3 grammar
                          "wgmma", "wgmma,", "wgmma,rows=64,splitk=1,stages=8", "WGMMA,rows=64,splitk=1,stages=8,l2pf=0,pdl=0",
                          "wgmma,rows=64,splitk=1,stages=8,pdl=0", "wgmma,rows=64,splitk=1,stages=8,l2pf=65,pdl=0",
                          "wgmma,rows=64,splitk=1,stages=8,l2pf=-1,pdl=0", "wgmma,rows=64,splitk=1,stages=8,l2pf=08,pdl=0",
                          "wgmma,rows=64,splitk=1,stages=8,pdl=0,l2pf=0",
                          "wgmma ,rows=64,splitk=1,stages=8,l2pf=0,pdl=0", "wgmma,rows=129,splitk=1,stages=8,l2pf=0,pdl=0",
                          "wgmma,rows=64,splitk=1,warps=4,stages=8,l2pf=0,pdl=0", "wgmma,rows=64,splitk=1,stages=1,l2pf=0,pdl=0",
                          "wgmma,rows=64,splitk=1,stages=33,l2pf=0,pdl=0", "wgmma,rows=064,splitk=1,stages=8,l2pf=0,pdl=0",
                          "wgmma,rows=64,splitk=9,stages=8,l2pf=0,pdl=0", "wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,",
                          "wgmma,wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=0", "rows=64,splitk=1,stages=8,l2pf=0,pdl=0,wgmma",
                          "wgmma,splitk=1,rows=64,stages=8,l2pf=0,pdl=0", "rows=16,splitk=1,warps=8,stages=2,l2pf=1,pdl=0",
                          // persist: only after pdl, 1..4, with l2pf=0, only in wgmma names, canonical
                          "wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,persist=0",
                          "wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,persist=5",
                          "wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,persist=01",
                          "wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,persist=",
                          "wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,persist=1,",
                          "wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,persist=1,persist=1",
                          "wgmma,rows=64,splitk=1,stages=8,l2pf=8,pdl=1,persist=1",
                          "wgmma,rows=64,splitk=1,stages=8,l2pf=0,persist=1,pdl=1",
                          "rows=16,splitk=1,warps=8,stages=2,pdl=1,persist=1"}) {
    try {
      parse_config(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << bad;
    }
  }
}

TEST(SmallMConfig, CanImplementStatesTheLimits) {
  const Config c;
  EXPECT_TRUE(can_implement(problem(1, 4096, 4096), c, 90));
  EXPECT_TRUE(can_implement(problem(32, 16, 16), c, 90));
  EXPECT_FALSE(can_implement(problem(33, 4096, 4096), c, 90));
  EXPECT_FALSE(can_implement(problem(0, 4096, 4096), c, 90));
  EXPECT_FALSE(can_implement(problem(8, 4104, 4096), c, 90));  // n % 16
  EXPECT_FALSE(can_implement(problem(8, 4096, 4104), c, 90));  // k % 16
  EXPECT_FALSE(can_implement(problem(8, 4096, 4096), c, 80));  // no FP8 MMA
  Config split = c;
  split.splitk = 4;
  EXPECT_TRUE(can_implement(problem(8, 4096, 4096), split, 90));
  EXPECT_FALSE(can_implement(problem(8, 4096, 4096), split, 89));  // clusters need sm_90
  EXPECT_FALSE(can_implement(problem(8, 4096, 128), split, 90));   // 2 chunks of K for 4 splits
  Problem e5 = problem(8, 4096, 4096);
  e5.a_type = e5.b_type = DType::kE5M2;
  EXPECT_FALSE(can_implement(e5, c, 90));
  Problem f32 = problem(8, 4096, 4096);
  f32.out_type = DType::kE4M3;
  EXPECT_FALSE(can_implement(f32, c, 90));
  Problem misaligned = problem(8, 4096, 4096);
  misaligned.alignment = 8;
  EXPECT_FALSE(can_implement(misaligned, c, 90));
  Config wide{64, 1, 8, 1, false};
  EXPECT_TRUE(can_implement(problem(16, 4096, 4096), wide, 90));
  EXPECT_FALSE(can_implement(problem(17, 4096, 4096), wide, 90));  // 4 row tiles x 3 m tiles
}

TEST(SmallMConfig, WgmmaCanImplementStatesTheLimits) {
  const Config c = wgmma_config(64, 1, 8, true);
  EXPECT_TRUE(can_implement(problem(1, 4096, 4096), c, 90));
  EXPECT_TRUE(can_implement(problem(32, 16, 16), c, 90));
  EXPECT_TRUE(can_implement(problem(17, 4080, 2064, 3), c, 90));  // ragged tile, K tail, batch
  expect_sm90_only(c);
  EXPECT_FALSE(can_implement(problem(33, 4096, 4096), c, 90));
  EXPECT_FALSE(can_implement(problem(8, 4104, 4096), c, 90));  // n % 16
  const Verdict k = can_implement(problem(8, 4096, 4104), c, 90);
  EXPECT_FALSE(k);
  EXPECT_NE(k.reason.find("TMA"), std::string::npos) << k.reason;
  EXPECT_TRUE(can_implement(problem(8, 4096, 256), wgmma_config(64, 2, 8, false), 90));
  EXPECT_FALSE(can_implement(problem(8, 4096, 256), wgmma_config(64, 3, 8, false), 90));  // 2 K blocks, 3 splits
  // Shared memory: 16 stages of (128 + 32) x 128 bytes = 320 KB.
  const Verdict big = can_implement(problem(32, 4096, 4096), wgmma_config(128, 1, 16, false), 90);
  EXPECT_FALSE(big);
  EXPECT_NE(big.reason.find("shared memory"), std::string::npos) << big.reason;
  EXPECT_TRUE(can_implement(problem(8, 4096, 4096), wgmma_config(128, 1, 12, false), 90));
  EXPECT_EQ(shared_bytes(problem(8, 4096, 4096), wgmma_config(128, 1, 12, false)), size_t(12 * (128 + 8) * 128 + 1024));
  // Persistent split-K adds the receive buffer: [splitk][NP/2][ceil(2 rows / splitk)] floats.
  EXPECT_EQ(shared_bytes(problem(9, 4096, 4096), wgmma_config(64, 3, 6, true, 0, 1)),
            size_t(6 * (64 + 16) * 128 + 1024 + 3 * 8 * 43 * 4));
  EXPECT_EQ(shared_bytes(problem(9, 4096, 4096), wgmma_config(64, 1, 6, true, 0, 1)), size_t(6 * (64 + 16) * 128 + 1024));
  Problem e5 = problem(8, 4096, 4096);
  e5.a_type = e5.b_type = DType::kE5M2;
  EXPECT_FALSE(can_implement(e5, c, 90));
  Problem mixed = problem(8, 4096, 4096);
  mixed.a_type = DType::kE5M2;
  EXPECT_TRUE(can_implement(mixed, c, 90));
  Problem misaligned = problem(8, 4096, 4096);
  misaligned.alignment = 8;
  EXPECT_FALSE(can_implement(misaligned, c, 90));
}

TEST(SmallMConfig, CpWeightsCanImplementStatesTheLimits) {
  const Config c = with_cp_weights(wgmma_config(64, 2, 12, true));
  EXPECT_TRUE(can_implement(problem(1, 4096, 4096), c, 90));
  EXPECT_TRUE(can_implement(problem(32, 16, 256), c, 90));
  EXPECT_TRUE(can_implement(problem(23, 208, 1040, 2), c, 90));  // ragged tile, 16-byte K tail, batch
  EXPECT_TRUE(can_implement(problem(32, 4096, 4096), with_cp_weights(wgmma_config(128, 8, 4, false)), 90));
  expect_sm90_only(c);
  const Verdict k = can_implement(problem(8, 4096, 4104), c, 90);
  EXPECT_FALSE(k);
  EXPECT_NE(k.reason.find("cp.async"), std::string::npos) << k.reason;
  Problem misaligned = problem(8, 4096, 4096);
  misaligned.alignment = 8;
  const Verdict a = can_implement(misaligned, c, 90);
  EXPECT_FALSE(a);
  EXPECT_NE(a.reason.find("cp.async"), std::string::npos) << a.reason;
  EXPECT_FALSE(can_implement(problem(8, 4096, 256), with_cp_weights(wgmma_config(64, 3, 8, true)), 90));
  // Same shared memory as the TMA kernel of the same config (the same ring).
  const Problem p = problem(9, 4096, 4096);
  EXPECT_EQ(shared_bytes(p, c), shared_bytes(p, wgmma_config(64, 2, 12, true)));
  EXPECT_FALSE(can_implement(problem(32, 4096, 4096), with_cp_weights(wgmma_config(128, 1, 16, false)), 90));
}

TEST(SmallMConfig, RegWeightsCanImplementStatesTheLimits) {
  const Config c = with_reg_weights(wgmma_config(64, 2, 4, true));
  EXPECT_TRUE(can_implement(problem(1, 4096, 4096), c, 90));
  EXPECT_TRUE(can_implement(problem(32, 16, 1024), c, 90));
  EXPECT_TRUE(can_implement(problem(23, 208, 1040, 2), c, 90));  // ragged tile, 16-byte K tail, batch
  expect_sm90_only(c);
  const Verdict k = can_implement(problem(8, 4096, 4104), c, 90);
  EXPECT_FALSE(k);
  EXPECT_NE(k.reason.find("16-byte loads"), std::string::npos) << k.reason;
  // K is split in whole 512-byte activation slots: 3 splits need more than 1024 bytes of K.
  const Verdict s = can_implement(problem(8, 4096, 1024), with_reg_weights(wgmma_config(64, 3, 4, true)), 90);
  EXPECT_FALSE(s);
  EXPECT_NE(s.reason.find("ceil(k/512)"), std::string::npos) << s.reason;
  EXPECT_TRUE(can_implement(problem(8, 4096, 1040), with_reg_weights(wgmma_config(64, 3, 4, true)), 90));
  // Shared memory holds the activation slots only: stages * 8 ceil(m/8) * 512 bytes (+ 1 KB).
  EXPECT_EQ(shared_bytes(problem(9, 4096, 4096), c), size_t(4 * 16 * 512 + 1024));
  EXPECT_TRUE(can_implement(problem(32, 4096, 4096), with_reg_weights(wgmma_config(64, 1, 13, true)), 90));
  const Verdict m = can_implement(problem(32, 4096, 4096), with_reg_weights(wgmma_config(64, 1, 14, true)), 90);
  EXPECT_FALSE(m);
  EXPECT_NE(m.reason.find("activation slots"), std::string::npos) << m.reason;
}

TEST(SmallMConfig, RegWeightsAreNotOfferedButRunWhenNamed) {
  // They lost everywhere in their first H200 runs: never a candidate, never the default.
  const int64_t shapes[][2] = {{6144, 4096}, {4096, 4096}, {57344, 8192}, {8192, 1024}, {4096, 21504}};
  for (const auto& s : shapes)
    for (int64_t m : {1, 16, 32}) {
      const Problem p = problem(m, s[0], s[1]);
      for (const Config& c : candidate_configs(p, 132, 90)) EXPECT_FALSE(c.reg_weights) << c.to_string();
      EXPECT_FALSE(default_config(p, 132, 90).reg_weights) << p;
      const Config named = parse_config("wgmma,rows=64,splitk=2,stages=4,l2pf=0,pdl=1,wload=reg");
      EXPECT_TRUE(can_implement(p, named, 90)) << p;
    }
}

// cp.async-weight candidates come from four rules: twins of the split-K one-shot TMA candidates
// (at most 8), twins of the split-1 ones (all), about one block per SM (split-K of floor or
// ceil(SMs / row tiles), rings for 1 or 2 blocks per SM) and one wave of 2-4 blocks per SM (split
// rounded down); plus, for small weights, rows 64 at split 2. Every one is one-shot, PDL on, no
// L2 lookahead.
// Split-K for `blocks_per_tile` blocks per row tile: at least 4 K blocks of 128 bytes each, 1..8.
int per_sm_split(const Problem& p, int64_t blocks_per_tile) {
  const int64_t kblocks = (p.k + 127) / 128;
  return int(std::clamp<int64_t>(std::min<int64_t>(blocks_per_tile, std::max<int64_t>(1, kblocks / 4)), 1, 8));
}

TEST(SmallMConfig, CpWeightCandidatesFollowTheirRules) {
  const int64_t shapes[][2] = {{6144, 4096}, {4096, 4096}, {8192, 8192}, {10240, 8192}, {4096, 21504},
                               {57344, 8192}, {8192, 1024}, {4096, 5376}, {4480, 15680}};
  for (const auto& s : shapes)
    for (int64_t m : {1, 8, 16, 32}) {
      const Problem p = problem(m, s[0], s[1]);
      const auto cands = candidate_configs(p, 132, 90);
      const auto offered = [&](const Config& c) { return std::find(cands.begin(), cands.end(), c) != cands.end(); };
      int split_twins = 0;
      for (const Config& c : cands) {
        if (!c.cp_weights || c.late_trigger) continue;  // late-trigger twins: LateTriggerTwinsOnlyForSmallWeights
        if (c.streamk > 0) continue;                      // StreamKCandidatesFollowTheirRule
        if (c.rows == 32) continue;                       // KPairNamesRulesAndCandidates
        EXPECT_TRUE(c.wgmma && c.pdl && c.l2pf == 0 && c.persist == 0 && !c.reg_weights) << c.to_string();
        Config tma = c;
        tma.cp_weights = false;
        const int64_t tiles = (p.n + c.rows - 1) / c.rows;
        const bool twin = offered(tma);
        split_twins += twin && c.splitk >= 2;
        bool per_sm = c.splitk == per_sm_split(p, 132 / tiles) || c.splitk == per_sm_split(p, (132 + tiles - 1) / tiles);
        for (int occ : {2, 3, 4}) per_sm |= c.splitk == per_sm_split(p, occ * 132 / tiles);
        const bool small_split2 = c.rows == 64 && c.splitk == 2 && p.n * p.k <= (int64_t(40) << 20);
        EXPECT_TRUE(twin || per_sm || small_split2) << p << " " << c.to_string();
      }
      EXPECT_LE(split_twins, 8 + 8) << p;  // the split-K twins, and per-SM ones that match a TMA candidate
      // Every split-1 one-shot TMA candidate with PDL has its cp.async twin (early=E is TMA-only;
      // fitted rows have a cp.async candidate with a ring of its own: FittedRows... below; K pairs
      // two a stage are TMA only: KPairsTwoAStageCandidates).
      for (const Config& c : cands)
        if (c.wgmma && !c.cp_weights && !c.reg_weights && !c.late_trigger && c.persist == 0 && c.l2pf == 0 && c.pdl &&
            c.splitk == 1 && c.early == 0 && c.kblocks == 1 && !fitted_rows(c.rows))
          EXPECT_TRUE(offered(with_cp_weights(c))) << p << " " << c.to_string();
      // One wave of 3 blocks per SM with 64-row tiles, where that is a split of its own.
      const int64_t t64 = (p.n + 63) / 64;
      if (3 * 132 / t64 >= 1)
        EXPECT_TRUE(std::any_of(cands.begin(), cands.end(), [&](const Config& c) {
          return c.cp_weights && c.rows == 64 && c.splitk == per_sm_split(p, 3 * 132 / t64);
        })) << p;
      // About one block per SM with 64-row tiles is always there.
      const int64_t tiles64 = (p.n + 63) / 64;
      EXPECT_TRUE(std::any_of(cands.begin(), cands.end(), [&](const Config& c) {
        return c.cp_weights && c.rows == 64 && c.splitk == per_sm_split(p, 132 / tiles64);
      })) << p;
      if (p.n * p.k <= (int64_t(40) << 20))  // rows 64 at split 2 with cp.async is always offered there
        EXPECT_TRUE(std::any_of(cands.begin(), cands.end(),
                                [](const Config& c) { return c.cp_weights && c.rows == 64 && c.splitk == 2; }))
            << p;
      // The default only for short K (k <= 1024: measured in session 20, docs/perf/small_m.md)
      // and never off sm_90.
      EXPECT_EQ(default_config(p, 132, 90).cp_weights, p.k <= 1024) << p;
      for (const Config& c : candidate_configs(p, 148, 100)) EXPECT_FALSE(c.cp_weights) << c.to_string();
    }
}

// rows=32 (K pairs): its name, its rules with their reasons, its shared memory, the split ranks'
// whole pairs, and the candidates (M <= 16 only: the split that gives one block per SM at most,
// rings for 1, 2 and 3 blocks per SM, TMA and cp.async).
TEST(SmallMConfig, KPairNamesRulesAndCandidates) {
  const Config c = with_cp_weights(wgmma_config(32, 1, 16, true));
  EXPECT_EQ(c.to_string(), "wgmma,rows=32,splitk=1,stages=16,l2pf=0,pdl=1,wload=cp");
  EXPECT_EQ(parse_config("wgmma,rows=32,splitk=2,stages=8,l2pf=0,pdl=2,early=4"),
            with_early(with_late_trigger(wgmma_config(32, 2, 8, true)), 4));
  const Malformed bad[] = {
      {"wgmma,rows=32,splitk=1,stages=8,l2pf=8,pdl=1", "l2pf=0"},
      {"wgmma,rows=32,splitk=1,stages=8,l2pf=0,pdl=1,persist=1", "not persist"},
      {"wgmma,rows=32,splitk=1,stages=8,l2pf=0,pdl=1,streamk=1,wload=cp", "streamk"},
      {"wgmma,rows=32,splitk=1,stages=8,l2pf=0,pdl=1,wload=reg", "wload=reg"},
      {"wgmma,rows=16,splitk=1,stages=8,l2pf=0,pdl=1", "must be 32"},
  };
  expect_rejected(bad);
  EXPECT_TRUE(can_implement(problem(16, 4096, 4096), c, 90));
  EXPECT_TRUE(can_implement(problem(1, 208, 2064, 2), c, 90));  // ragged rows, an odd K block count
  expect_sm90_only(c);
  const Verdict m17 = can_implement(problem(17, 4096, 4096), c, 90);
  EXPECT_FALSE(m17);
  EXPECT_NE(m17.reason.find("m <= 16"), std::string::npos) << m17.reason;
  // 3 K blocks are 2 pairs: 2 splits run, 3 do not (with rows=64 they would).
  EXPECT_TRUE(can_implement(problem(8, 4096, 384), wgmma_config(32, 2, 4, true), 90));
  const Verdict s3 = can_implement(problem(8, 4096, 384), wgmma_config(32, 3, 4, true), 90);
  EXPECT_FALSE(s3);
  EXPECT_NE(s3.reason.find("ceil(k/256)"), std::string::npos) << s3.reason;
  EXPECT_TRUE(can_implement(problem(8, 4096, 384), wgmma_config(64, 3, 4, true), 90));
  // A stage: 64 weight rows (two K blocks of 32) and 2 x 8 ceil(m/8) activation rows, 128 bytes each.
  EXPECT_EQ(shared_bytes(problem(1, 4096, 4096), c), size_t(16 * (64 + 16) * 128 + 1024));
  EXPECT_EQ(shared_bytes(problem(16, 4096, 4096), c), size_t(16 * (64 + 32) * 128 + 1024));
  // Split ranks read whole pairs; the last may end on an odd block at the tensor's end.
  EXPECT_EQ(kpair_kblocks_per_split(32, 1), 32);
  EXPECT_EQ(kpair_kblocks_per_split(17, 1), 18);
  EXPECT_EQ(kpair_kblocks_per_split(17, 2), 10);  // [0, 10), [10, 17)
  EXPECT_EQ(kpair_kblocks_per_split(6, 4), 2);    // [0, 2), [2, 4), [4, 6), [6, 6): the last rank reads nothing
  for (int kb = 1; kb <= 70; ++kb)
    for (int s = 1; s <= kMaxSplitK && s <= (kb + 1) / 2; ++s) {
      const int per = kpair_kblocks_per_split(kb, s);
      EXPECT_EQ(per % 2, 0) << kb << " " << s;
      EXPECT_GE(per * s, kb) << kb << " " << s;  // every K block has a rank
    }
  // Candidates: only at M <= 16; for 4096 rows (128 tiles of 32 on 132 SMs) without split-K.
  for (int64_t m : {1, 8, 16, 17, 32}) {
    const Problem p = problem(m, 4096, 4096);
    int kpairs = 0, cp = 0, unsplit = 0;
    for (const Config& x : candidate_configs(p, 132, 90))
      if (x.wgmma && x.rows == 32) {
        ++kpairs;
        cp += x.cp_weights;
        unsplit += x.splitk == 1;
        EXPECT_TRUE(can_implement(p, x, 90)) << x.to_string();
      }
    if (m > 16) {
      EXPECT_EQ(kpairs, 0) << m;
      continue;
    }
    EXPECT_GE(cp, 3) << m;
    EXPECT_GE(kpairs - cp, 3) << m;
    EXPECT_GE(unsplit, 6) << m;
  }
  // 1280 rows (40 tiles): split 3 gives 120 blocks.
  bool split3 = false;
  for (const Config& x : candidate_configs(problem(8, 1280, 8192), 132, 90)) split3 |= x.rows == 32 && x.splitk == 3;
  EXPECT_TRUE(split3);
  for (const Config& x : candidate_configs(problem(8, 4096, 4096), 148, 100)) EXPECT_NE(x.rows == 32 && x.wgmma, true);
}

// rows=32 with two pairs a stage (kblocks=2): candidates only where K >= 8192, M <= 16 and the
// grid is one wave at one block per SM; TMA weights, the deepest ring one block fits (m=1: 10
// stages of 20 KB; m=16: 9 of 24 KB) and two stages less (at <= 40 MB also their twins, as every
// candidate's).
TEST(SmallMConfig, KPairsTwoAStageCandidates) {
  const auto two_pairs = [](const Problem& p) {
    std::vector<std::string> out;
    for (const Config& x : candidate_configs(p, 132, 90))
      if (x.wgmma && x.rows == 32 && x.kblocks == 2 && !x.aonce) {  // aonce: ActivationOnce...
        EXPECT_TRUE(can_implement(p, x, 90)) << x.to_string();
        out.push_back(x.to_string());
      }
    return out;
  };
  EXPECT_EQ(two_pairs(problem(1, 4096, 21504)),
            (std::vector<std::string>{"wgmma,rows=32,splitk=1,stages=10,l2pf=0,pdl=1,kblocks=2",
                                      "wgmma,rows=32,splitk=1,stages=8,l2pf=0,pdl=1,kblocks=2"}));
  EXPECT_EQ(two_pairs(problem(16, 4096, 21504)),
            (std::vector<std::string>{"wgmma,rows=32,splitk=1,stages=9,l2pf=0,pdl=1,kblocks=2",
                                      "wgmma,rows=32,splitk=1,stages=7,l2pf=0,pdl=1,kblocks=2"}));
  // <= 40 MB: with the pdl=2 and early=4 twins every candidate gets there (LateTriggerTwins...).
  EXPECT_EQ(two_pairs(problem(16, 4096, 8192)).size(), 8u);
  EXPECT_TRUE(two_pairs(problem(1, 4096, 5376)).empty());   // K < 8192: they lost there
  EXPECT_TRUE(two_pairs(problem(17, 4096, 8192)).empty());  // K pairs: M <= 16
  EXPECT_TRUE(two_pairs(problem(1, 8192, 8192)).empty());   // 256 tiles of 32: two waves at one block per SM
  // 1280 rows (40 tiles): the K pairs' split, 3.
  const std::vector<std::string> split3 = two_pairs(problem(8, 1280, 8192));
  EXPECT_EQ(split3.size(), 8u);  // 10.5 MB: with their twins
  for (const std::string& n : split3) EXPECT_NE(n.find("splitk=3,"), std::string::npos) << n;
}

// Fitted rows (33..127 but 64): names, rules with their reasons, the stage layout (a weight tile
// of the rows rounded up to 8, and the tail the last stage's 64-row wgmma reads past the ring),
// and the candidates: the rows that make the grid at most 1..4 blocks per SM.
TEST(SmallMConfig, FittedRowsNamesRulesLayoutAndCandidates) {
  const Config c = with_cp_weights(wgmma_config(34, 1, 16, true));
  EXPECT_EQ(c.to_string(), "wgmma,rows=34,splitk=1,stages=16,l2pf=0,pdl=1,wload=cp");
  EXPECT_EQ(parse_config("wgmma,rows=71,splitk=2,stages=8,l2pf=0,pdl=2,early=4"),
            with_early(with_late_trigger(wgmma_config(71, 2, 8, true)), 4));
  EXPECT_TRUE(fitted_rows(33) && fitted_rows(63) && fitted_rows(65) && fitted_rows(127));
  EXPECT_FALSE(fitted_rows(32) || fitted_rows(64) || fitted_rows(128) || fitted_rows(129));
  EXPECT_EQ(wgmma_warpgroups(63), 1);
  EXPECT_EQ(wgmma_warpgroups(65), 2);
  const Malformed bad[] = {
      {"wgmma,rows=40,splitk=1,stages=8,l2pf=8,pdl=1", "l2pf=0"},
      {"wgmma,rows=40,splitk=1,stages=8,l2pf=0,pdl=1,persist=1", "not persist"},
      {"wgmma,rows=100,splitk=1,stages=8,l2pf=0,pdl=1,streamk=1,wload=cp", "streamk"},
      {"wgmma,rows=40,splitk=1,stages=8,l2pf=0,pdl=1,wload=reg", "wload=reg"},
      {"wgmma,rows=129,splitk=1,stages=8,l2pf=0,pdl=1", "33..127"},
  };
  expect_rejected(bad);
  EXPECT_TRUE(can_implement(problem(32, 4480, 15680), c, 90));  // m up to 32 (K pairs stop at 16)
  EXPECT_TRUE(can_implement(problem(1, 208, 2064, 2), c, 90));
  expect_sm90_only(c);
  // TMA weights, 34 rows: a 40-row weight tile; 8 activation rows; the wgmma's 64 rows end 16 rows
  // past the last stage. 100 rows: two warpgroups (128 MMA rows) over a 104-row tile and 32
  // activation rows. cp.async weights: up to 48 rows the compact 48-row tile (the rows past 34
  // zero-filled) and at m <= 8 a pad after each ring stage for the wgmma's last 8 rows (the 8
  // activation rows take the 8 before them); from 49 to 64 rows the whole 64 W-row tile.
  const WgmmaStageLayout l34 = wgmma_stage_layout(1, 34, false);
  EXPECT_EQ(l34.w_bytes, 40 * 128);
  EXPECT_EQ(l34.stage_bytes, (40 + 8) * 128);
  EXPECT_EQ(l34.tx_bytes, (34 + 8) * 128);
  EXPECT_EQ(l34.tail_bytes, 16 * 128);
  const Config tma34 = wgmma_config(34, 1, 16, true);
  EXPECT_EQ(shared_bytes(problem(1, 4480, 15680), tma34), size_t(16 * 48 * 128 + 16 * 128 + 1024));
  EXPECT_TRUE(cp_compact_tile(34) && cp_compact_tile(48) && cp_compact_tile(33));
  EXPECT_FALSE(cp_compact_tile(49) || cp_compact_tile(32) || cp_compact_tile(64));
  EXPECT_EQ(cp_compact_tile_rows(78), 80);  // two warpgroups: 65..80 rows
  EXPECT_EQ(cp_compact_tile_rows(65), 80);
  EXPECT_EQ(cp_compact_tile_rows(81), 0);
  EXPECT_EQ(cp_compact_tile_rows(128), 0);
  // 78 rows at m=16: an 80-row tile and 16 activation rows a unit; the second warpgroup's MMA rows
  // 64..127 end 32 rows past them (a 4 KB pad after the stage); at m=1 8 activation rows, 5 KB.
  EXPECT_EQ(wgmma_stage_layout(16, 78, true).stage_bytes, (80 + 16) * 128);
  EXPECT_EQ(wgmma_stage_layout(16, 78, true).stage_pad_bytes, 32 * 128);
  EXPECT_EQ(wgmma_stage_layout(1, 78, true).stage_pad_bytes, 40 * 128);
  // m=17: 24 activation rows; the MMA's rows 104..127 read the 3 KB pad (m > 16 since session 32).
  EXPECT_EQ(wgmma_stage_layout(17, 78, true).stage_bytes, (80 + 24) * 128);
  EXPECT_EQ(wgmma_stage_layout(17, 78, true).stage_pad_bytes, 24 * 128);
  EXPECT_EQ(wgmma_stage_layout(32, 78, true).stage_pad_bytes, 16 * 128);
  const WgmmaStageLayout cp34 = wgmma_stage_layout(1, 34, true);
  EXPECT_EQ(cp34.w_bytes, 48 * 128);
  EXPECT_EQ(cp34.stage_bytes, (48 + 8) * 128);
  EXPECT_EQ(cp34.tail_bytes, 0);
  EXPECT_EQ(cp34.stage_pad_bytes, 8 * 128);
  EXPECT_EQ(shared_bytes(problem(1, 4480, 15680), c), size_t(16 * (56 + 8) * 128 + 1024));
  Config c4 = c;
  c4.kblocks = 4;  // one pad per ring stage, after its four K blocks
  c4.stages = 6;
  EXPECT_EQ(shared_bytes(problem(1, 4480, 15680), c4), size_t(6 * (4 * 56 + 8) * 128 + 1024));
  EXPECT_EQ(wgmma_stage_layout(16, 47, true).stage_pad_bytes, 0);  // 16 activation rows fill the 16
  EXPECT_EQ(wgmma_stage_layout(16, 47, true).stage_bytes, (48 + 16) * 128);
  // m > 16: the compact tile too; 24 or 32 activation rows cover the MMA's last 16, no pad.
  EXPECT_EQ(wgmma_stage_layout(17, 34, true).stage_bytes, (48 + 24) * 128);
  EXPECT_EQ(wgmma_stage_layout(32, 34, true).stage_bytes, (48 + 32) * 128);
  EXPECT_EQ(wgmma_stage_layout(32, 34, true).stage_pad_bytes, 0);
  EXPECT_EQ(wgmma_stage_layout(1, 49, true).stage_bytes, (64 + 8) * 128);
  EXPECT_EQ(wgmma_stage_layout(1, 49, true).stage_pad_bytes, 0);
  const WgmmaStageLayout l100 = wgmma_stage_layout(32, 100, false);
  EXPECT_EQ(l100.stage_bytes, (104 + 32) * 128);
  EXPECT_EQ(l100.tx_bytes, (100 + 32) * 128);
  EXPECT_EQ(l100.tail_bytes, 0);
  EXPECT_EQ(wgmma_stage_layout(32, 100, true).stage_bytes, (128 + 32) * 128);
  // The fixed layouts are unchanged, with either weight path: 64 W rows, or rows=32's two K
  // blocks of 32.
  for (bool cp : {false, true}) {
    EXPECT_EQ(wgmma_stage_layout(9, 64, cp).stage_bytes, (64 + 16) * 128);
    EXPECT_EQ(wgmma_stage_layout(9, 128, cp).tx_bytes, (128 + 16) * 128);
    EXPECT_EQ(wgmma_stage_layout(9, 32, cp).stage_bytes, (64 + 32) * 128);
    EXPECT_EQ(wgmma_stage_layout(9, 32, cp).tail_bytes, 0);
  }
  // Every stage's tiles stay 1024-byte aligned (128-byte swizzle atoms), and the wgmma's rows stay
  // inside the ring.
  for (int rows = 32; rows <= 128; ++rows)
    for (int64_t m : {1, 9, 17, 32})
      for (bool cp : {false, true}) {
        if (rows == 32 && m > 16) continue;
        const WgmmaStageLayout l = wgmma_stage_layout(m, rows, cp);
        EXPECT_EQ(l.stage_bytes % 1024, 0) << rows << " " << m;
        EXPECT_EQ(l.w_bytes % 1024, 0) << rows << " " << m;
        EXPECT_EQ(l.stage_pad_bytes % 1024, 0) << rows << " " << m;
        EXPECT_GE(l.stage_bytes + l.tail_bytes + l.stage_pad_bytes, 64 * wgmma_warpgroups(rows) * 128)
            << rows << " " << m;
        EXPECT_TRUE(l.tail_bytes == 0 || l.stage_pad_bytes == 0) << rows << " " << m;
      }
  // Candidates: the rows that make 2, 3 and 4 blocks per SM where they are fitted: 18560 rows get
  // 71, 47 and 36, 28672 rows 109, 73 and 55; 4480 rows none (17 is too few; one block per SM, 34
  // rows, is not offered); batch 2 of 4480 rows: 34 (2 x 66 blocks).
  const auto fitted_of = [](const Problem& p) {
    std::set<int> rows;
    int cp = 0, tma = 0;
    for (const Config& x : candidate_configs(p, 132, 90))
      if (x.wgmma && fitted_rows(x.rows) && x.kblocks == 1) {  // kblocks=4: KBlocksCandidates...
        EXPECT_TRUE(can_implement(p, x, 90)) << x.to_string();
        EXPECT_EQ(x.splitk, 1) << x.to_string();
        EXPECT_TRUE(x.pdl) << x.to_string();
        if (!x.late_trigger && x.early == 0) (x.cp_weights ? cp : tma) += 1;  // not the <= 40 MB twins
        rows.insert(x.rows);
      }
    EXPECT_EQ(cp, tma) << p;                  // each with TMA and with cp.async weights
    EXPECT_EQ(size_t(cp), rows.size()) << p;  // one ring each
    return rows;
  };
  EXPECT_EQ(fitted_of(problem(16, 18560, 4096)), std::set<int>({36, 47, 71}));
  EXPECT_EQ(fitted_of(problem(1, 28672, 4096)), std::set<int>({55, 73, 109}));
  EXPECT_EQ(fitted_of(problem(1, 4480, 15680)), std::set<int>());
  EXPECT_EQ(fitted_of(problem(32, 4096, 4096)), std::set<int>());
  EXPECT_EQ(fitted_of(problem(8, 4480, 4096, 2)), std::set<int>({34}));
  // The ring for that many blocks per SM: 3 blocks of 47 rows at m=16 (a 48-row weight tile and 16
  // activation rows, 8 KB a stage, no tail or pad, with either weight path (cp.async: the compact
  // tile); per block ~1 KB system, 512 B of barriers and 1 KB of alignment): 9 stages. At m=17
  // cp.async takes the compact tile and 24 activation rows: 9 KB a stage, 8 stages.
  for (const Config& x : candidate_configs(problem(16, 18560, 4096), 132, 90))
    if (x.rows == 47) EXPECT_EQ(x.stages, (228 * 1024 / 3 - 1024 - 512 - 1024) / ((48 + 16) * 128)) << x.to_string();
  for (const Config& x : candidate_configs(problem(17, 18560, 4096), 132, 90))
    if (x.rows == 47 && x.cp_weights && x.kblocks == 1)
      EXPECT_EQ(x.stages, (228 * 1024 / 3 - 1024 - 512 - 1024) / ((48 + 24) * 128)) << x.to_string();
  for (const Config& x : candidate_configs(problem(1, 4480, 15680), 148, 100)) EXPECT_FALSE(fitted_rows(x.rows) && x.wgmma);
}

// Rings of 17..32 stages: the one-shot kernels with TMA or cp.async weights only; run when named.
TEST(SmallMConfig, DeepRingsNamesRulesAndCandidates) {
  for (int rows : {32, 34, 64, 100, 128})
    for (int stages : {17, 24, 32}) {
      const Config c = wgmma_config(rows, 2, stages, true);
      for (const Config& v : {c, with_cp_weights(c), with_late_trigger(c), with_early(c, 4)}) {
        EXPECT_TRUE(config_exists(v)) << v.to_string();
        EXPECT_EQ(parse_config(v.to_string()), v);
      }
    }
  const Malformed bad[] = {
      {"wgmma,rows=64,splitk=1,stages=33,l2pf=0,pdl=1", "2..32"},
      {"wgmma,rows=64,splitk=1,stages=17,l2pf=0,pdl=1,persist=1", "17..32"},
      {"wgmma,rows=64,splitk=1,stages=17,l2pf=0,pdl=1,streamk=1,wload=cp", "17..32"},
      {"wgmma,rows=64,splitk=1,stages=17,l2pf=0,pdl=1,wload=reg", "17..32"},
  };
  expect_rejected(bad);
  // 32 stages of 64 weight rows (72 * 128 bytes a stage at m=1) do not fit 220 KB.
  EXPECT_FALSE(can_implement(problem(1, 4096, 14336), wgmma_config(64, 1, 32, true), 90));
  // Not offered (session 15: never the fastest): every candidate's ring holds at most 16 stages.
  for (const Problem& p : {problem(1, 4480, 15680), problem(16, 4096, 21504), problem(1, 8192, 8192)})
    for (const Config& x : candidate_configs(p, 132, 90)) EXPECT_LE(x.stages, kWgmmaMaxStages) << x.to_string();
}

// kblocks=B: 2 or 4 K blocks per ring stage, the one-shot TMA and cp.async kernels only (rows other
// than 32, l2pf=0); spelled after early; the ring's shared memory is B times a one-K-block stage's.
TEST(SmallMConfig, KBlocksNamesRulesAndSharedMemory) {
  Config c = wgmma_config(34, 2, 8, true);
  c.kblocks = 4;
  EXPECT_EQ(c.to_string(), "wgmma,rows=34,splitk=2,stages=8,l2pf=0,pdl=1,kblocks=4");
  EXPECT_EQ(parse_config(c.to_string()), c);
  const Config e = with_early(with_late_trigger(c), 3);
  EXPECT_EQ(e.to_string(), "wgmma,rows=34,splitk=2,stages=8,l2pf=0,pdl=2,early=3,kblocks=4");
  EXPECT_EQ(parse_config(e.to_string()), e);
  for (int rows : {33, 64, 100, 128}) {
    Config k2 = wgmma_config(rows, 1, 4, false);
    k2.kblocks = 2;
    EXPECT_TRUE(config_exists(k2)) << k2.to_string();
  }
  const Malformed bad[] = {
      {"wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,kblocks=3", "2 or 4"},
      {"wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,kblocks=1", "not canonical"},
      {"wgmma,rows=32,splitk=1,stages=4,l2pf=0,pdl=1,kblocks=4", "K pairs) takes kblocks=2"},
      {"wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,kblocks=2,wload=reg", "wload=reg"},
      {"wgmma,rows=64,splitk=1,stages=8,l2pf=4,pdl=1,kblocks=2", "l2pf=0"},
      {"wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,kblocks=2,persist=1", "persist"},
      {"wgmma,rows=64,splitk=1,stages=8,l2pf=0,pdl=1,kblocks=2,early=4", "[,early=E][,kblocks=B]"},
  };
  expect_rejected(bad);
  // K pairs with two pairs a stage (both weight paths): at m=1 a pair is the 64-row tile (the 32 rows
  // twice) and 16 activation rows, 10 KB; at m=16, 12 KB.
  for (bool cp : {false, true}) {
    Config kp = with_kblocks(wgmma_config(32, 1, 5, true), 2);
    if (cp) kp = with_cp_weights(kp);
    EXPECT_EQ(parse_config(kp.to_string()), kp);
    EXPECT_EQ(shared_bytes(problem(1, 4096, 4096), kp), size_t(5 * 2 * 80 * 128 + 1024));
    EXPECT_EQ(shared_bytes(problem(16, 4096, 4096), kp), size_t(5 * 2 * 96 * 128 + 1024));
    EXPECT_TRUE(can_implement(problem(16, 4096, 4096), kp, 90)) << kp.to_string();
    EXPECT_FALSE(can_implement(problem(17, 4096, 4096), kp, 90)) << kp.to_string();  // K pairs: m <= 16
  }
  EXPECT_EQ(with_kblocks(wgmma_config(32, 2, 5, true), 2).to_string(),
            "wgmma,rows=32,splitk=2,stages=5,l2pf=0,pdl=1,kblocks=2");
  // 34 rows at m=1: a 40-row weight tile and 8 activation rows (6 KB) per K block, 16 rows of tail.
  const Problem nano = problem(1, 4480, 15680);
  EXPECT_EQ(shared_bytes(nano, c), size_t(8 * 4 * 48 * 128 + 16 * 128 + 1024));
  EXPECT_TRUE(can_implement(nano, c, 90));
  c.stages = 10;  // 10 x 24 KB > 220 KB
  EXPECT_FALSE(can_implement(nano, c, 90));
  // cp.async weights: the same stage of four K blocks, each on the compact 48-row tile (7 KB at
  // m=1), and a 1 KB pad after the stage; at m=17 each with 24 activation rows (9 KB), no pad.
  Config cp = with_cp_weights(c);
  cp.stages = 7;
  EXPECT_EQ(cp.to_string(), "wgmma,rows=34,splitk=2,stages=7,l2pf=0,pdl=1,kblocks=4,wload=cp");
  EXPECT_EQ(parse_config(cp.to_string()), cp);
  EXPECT_EQ(shared_bytes(nano, cp), size_t(7 * (4 * 56 + 8) * 128 + 1024));
  EXPECT_TRUE(can_implement(nano, cp, 90));
  cp.stages = 8;  // 8 x 29 KB > 220 KB
  EXPECT_FALSE(can_implement(nano, cp, 90));
  cp.stages = 4;
  EXPECT_EQ(shared_bytes(problem(17, 4480, 15680), cp), size_t(4 * 4 * 72 * 128 + 1024));
  cp.stages = 6;
  EXPECT_TRUE(can_implement(problem(17, 4480, 15680), cp, 90));
  cp.stages = 7;  // 7 x 36 KB at m=17 > 220 KB
  EXPECT_FALSE(can_implement(problem(17, 4480, 15680), cp, 90));
}

// aonce=1 (K pairs, two a stage, the activation row copied once, whole) is spelled after kblocks,
// only on rows=32 with kblocks=2, splitk=1, TMA weights, l2pf=0, no early; m = 1; its shared
// memory is the weight ring, the activation row (K rounded up to pairs, and 256 bytes of zeros)
// and the barriers; it is a candidate at m = 1 on weights <= 40 MB, with the deepest ring two
// blocks per SM fit and its pdl=2 twin.
TEST(SmallMConfig, ActivationOnceNamesRulesAndSharedMemory) {
  const Config c = with_aonce(with_kblocks(wgmma_config(32, 1, 6, true), 2));
  EXPECT_EQ(c.to_string(), "wgmma,rows=32,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2,aonce=1");
  EXPECT_EQ(parse_config(c.to_string()), c);
  const Config late = with_late_trigger(c);
  EXPECT_EQ(late.to_string(), "wgmma,rows=32,splitk=1,stages=6,l2pf=0,pdl=2,kblocks=2,aonce=1");
  EXPECT_EQ(parse_config(late.to_string()), late);
  EXPECT_FALSE(c == with_kblocks(wgmma_config(32, 1, 6, true), 2));
  const Malformed bad[] = {
      {"wgmma,rows=32,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2,aonce=2", "aonce must be 1"},
      {"wgmma,rows=32,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2,aonce=0", "not canonical"},
      {"wgmma,rows=32,splitk=1,stages=6,l2pf=0,pdl=1,aonce=1", "kblocks=2, splitk=1"},
      {"wgmma,rows=32,splitk=2,stages=6,l2pf=0,pdl=1,kblocks=2,aonce=1", "kblocks=2, splitk=1"},
      {"wgmma,rows=64,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2,aonce=1", "rows=32 (K pairs)"},
      {"wgmma,rows=32,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2,aonce=1,wload=cp", "TMA weights"},
      {"wgmma,rows=32,splitk=1,stages=6,l2pf=0,pdl=1,aonce=1,kblocks=2", "trailing characters"},
  };
  expect_rejected(bad);
  // Six 16 KB stages, the 4 KB row and 256 bytes, 12 + 1 barriers; K = 2064 rounds up to 9 pairs.
  EXPECT_EQ(shared_bytes(problem(1, 4096, 4096), c), size_t(6 * 16384 + 4096 + 256 + 6 * 16 + 8));
  EXPECT_EQ(shared_bytes(problem(1, 208, 2064), c), size_t(6 * 16384 + 9 * 256 + 256 + 6 * 16 + 8));
  EXPECT_TRUE(can_implement(problem(1, 4096, 4096), c, 90));
  const Verdict v = can_implement(problem(2, 4096, 4096), c, 90);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("m = 1"), std::string::npos) << v.reason;
  // Candidates: m = 1 and <= 40 MB only; six stages fit two blocks per SM at K = 4096 (seven do not).
  const auto aonce_of = [](const Problem& p) {
    std::vector<std::string> out;
    for (const Config& k : candidate_configs(p, 132, 90))
      if (k.aonce) out.push_back(k.to_string());
    return out;
  };
  EXPECT_EQ(aonce_of(problem(1, 4608, 4096)),
            (std::vector<std::string>{"wgmma,rows=32,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2,aonce=1",
                                      "wgmma,rows=32,splitk=1,stages=6,l2pf=0,pdl=2,kblocks=2,aonce=1"}));
  EXPECT_TRUE(aonce_of(problem(2, 4608, 4096)).empty());
  EXPECT_TRUE(aonce_of(problem(1, 4480, 15680)).empty());  // 70 MB
  for (const Config& k : candidate_configs(problem(1, 4608, 4096), 132, 90))
    if (k.aonce) EXPECT_LE(int64_t(shared_bytes(problem(1, 4608, 4096), k)) + 1024, kSmSharedBytes / 2);
}

// kblocks candidates: fitted rows at one block per SM (rows = ceil(n / SMs)), no split-K; TMA
// weights with four K blocks a stage and the deepest ring one block fits; cp.async weights with
// four (one warpgroup: the deepest ring and one stage less) or two (two warpgroups: the deepest);
// none where the rows are not fitted or K is under 8 blocks.
TEST(SmallMConfig, KBlocksCandidatesAreFittedRowsAtOneBlockPerSm) {
  const auto kblocks_of = [](const Problem& p) {
    std::vector<std::string> out;
    for (const Config& x : candidate_configs(p, 132, 90))
      if (x.kblocks > 1 && x.rows != 32) {  // K pairs two a stage: KPairsTwoAStageCandidates
        EXPECT_TRUE(can_implement(p, x, 90)) << x.to_string();
        EXPECT_EQ(x.splitk, 1) << x.to_string();
        EXPECT_LE(shared_bytes(p, x) + 512 + 1024, size_t(228 * 1024)) << x.to_string();
        out.push_back(x.to_string());
      }
    return out;
  };
  // The deepest ring of a weight path and stage size: one stage more does not fit.
  const auto deepest = [](const Problem& p, const std::string& name) {
    Config deeper = parse_config(name);
    ++deeper.stages;
    return shared_bytes(p, deeper) > kWgmmaMaxSharedBytes;
  };
  // nano9b.down: 132 blocks of 34 rows. TMA: 4 x 6 KB a stage at m=1 (a 40-row weight tile, 8
  // activation rows), 9 stages; at m=16 4 x 7 KB, 7 stages. cp.async: 4 x 7 KB + 1 KB (the compact
  // 48-row tile and the stage's pad), 7 stages; at m=16 4 x 8 KB, 6.
  const Problem nano1 = problem(1, 4480, 15680), nano16 = problem(16, 4480, 15680);
  EXPECT_EQ(kblocks_of(nano1), (std::vector<std::string>{"wgmma,rows=34,splitk=1,stages=9,l2pf=0,pdl=1,kblocks=4",
                                                         "wgmma,rows=34,splitk=1,stages=7,l2pf=0,pdl=1,kblocks=4,wload=cp",
                                                         "wgmma,rows=34,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=4,wload=cp"}));
  EXPECT_EQ(kblocks_of(nano16), (std::vector<std::string>{"wgmma,rows=34,splitk=1,stages=7,l2pf=0,pdl=1,kblocks=4",
                                                          "wgmma,rows=34,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=4,wload=cp",
                                                          "wgmma,rows=34,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4,wload=cp"}));
  for (const auto& [p, names] : {std::pair{nano1, kblocks_of(nano1)}, std::pair{nano16, kblocks_of(nano16)}}) {
    EXPECT_TRUE(deepest(p, names[0])) << names[0];
    EXPECT_TRUE(deepest(p, names[1])) << names[1];
  }
  EXPECT_EQ(kblocks_of(problem(1, 8192, 8192)),
            (std::vector<std::string>{"wgmma,rows=63,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=4",
                                      "wgmma,rows=63,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=4,wload=cp",
                                      "wgmma,rows=63,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4,wload=cp"}));
  // llama70b.qkv: 132 blocks of 78 rows (two warpgroups): cp.async with two K blocks a stage; at
  // m=1 each on the compact 80-row tile with 8 activation rows (11 KB) and a 5 KB pad, 27 KB a
  // stage, 8 stages; at m=17 with 24 (13 KB) and a 3 KB pad, 29 KB a stage, 7 stages.
  const Problem qkv = problem(1, 10240, 8192);
  const std::vector<std::string> two = kblocks_of(qkv);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1], "wgmma,rows=78,splitk=1,stages=8,l2pf=0,pdl=1,kblocks=2,wload=cp");
  EXPECT_TRUE(deepest(qkv, two[1]));
  const Problem qkv17 = problem(17, 10240, 8192);
  const std::vector<std::string> two17 = kblocks_of(qkv17);
  ASSERT_EQ(two17.size(), 2u);
  EXPECT_EQ(two17[1], "wgmma,rows=78,splitk=1,stages=7,l2pf=0,pdl=1,kblocks=2,wload=cp");
  EXPECT_TRUE(deepest(qkv17, two17[1]));
  EXPECT_TRUE(kblocks_of(problem(1, 4096, 4096)).empty());   // 32 rows: K pairs
  EXPECT_TRUE(kblocks_of(problem(1, 18560, 4096)).empty());  // 141 rows: not fitted
  EXPECT_TRUE(kblocks_of(problem(1, 4480, 896)).empty());    // 7 K blocks
  // 8 K blocks; at <= 40 MB two K blocks a stage with rings for two blocks per SM join (two), and
  // the one-shot candidates also get their pdl=2 twins, the TMA ones early=4 twins.
  const std::vector<std::string> small = kblocks_of(problem(1, 4480, 1024));
  EXPECT_EQ(small.size(), 4u + 4u + 2u * 4u);
  // nemotron3super.qkv: 132 blocks of 35 rows; two K blocks of a 40-row tile and 8 activation rows
  // (12 KB) a stage: 9 stages fit two blocks per SM, and 8.
  const Problem super_qkv = problem(1, 4608, 4096);
  const std::vector<std::string> super_two = kblocks_of(super_qkv);
  for (const char* name : {"wgmma,rows=35,splitk=1,stages=9,l2pf=0,pdl=1,kblocks=2",
                           "wgmma,rows=35,splitk=1,stages=8,l2pf=0,pdl=1,early=4,kblocks=2"}) {
    EXPECT_NE(std::find(super_two.begin(), super_two.end(), name), super_two.end()) << name;
    EXPECT_LE(2 * (shared_bytes(super_qkv, parse_config(name)) + 512 + 1024), size_t(228 * 1024)) << name;
  }
  Config ten = parse_config("wgmma,rows=35,splitk=1,stages=10,l2pf=0,pdl=1,kblocks=2");
  EXPECT_GT(2 * (shared_bytes(super_qkv, ten) + 512 + 1024), size_t(228 * 1024));
  // > 40 MB: not offered (nano9b.down's kblocks candidates are the four-a-stage ones above).
  for (const std::string& n : kblocks_of(problem(1, 4480, 15680))) EXPECT_EQ(n.find("kblocks=2"), std::string::npos) << n;
  for (const std::string& n : small) EXPECT_EQ(n.rfind("wgmma,rows=34,splitk=1,stages=", 0), 0u) << n;
}

TEST(SmallMConfig, WgmmaCandidatesOnlyOnSm90) {
  const Problem p = problem(4, 4096, 4096);
  int v3 = 0;
  for (const Config& c : candidate_configs(p, 132, 90)) v3 += c.wgmma;
  EXPECT_GE(v3, 4);
  for (const Config& c : candidate_configs(p, 148, 100)) EXPECT_FALSE(c.wgmma) << c.to_string();
  for (const Config& c : candidate_configs(p, 84, 89)) EXPECT_FALSE(c.wgmma) << c.to_string();
  // Small weights get split-K to fill the SMs.
  bool split = false;
  for (const Config& c : candidate_configs(p, 132, 90)) split |= c.wgmma && c.splitk > 1;
  EXPECT_TRUE(split);
  // Persistent candidates leave one block's room per SM for the next kernel.
  int persist = 0;
  for (const Config& c : candidate_configs(p, 132, 90))
    if (c.persist > 0) {
      ++persist;
      EXPECT_LE(shared_bytes(p, c) * size_t(c.persist + 1), size_t(228 * 1024 - (c.persist + 1) * 1536)) << c.to_string();
    }
  EXPECT_GE(persist, 2);
}

TEST(SmallMConfig, DefaultFillsTheSmsAndCandidatesAreImplementable) {
  // DESIGN.md suite shapes (n, k).
  const int64_t shapes[][2] = {{6144, 4096},  {4096, 4096},  {28672, 4096}, {4096, 14336}, {10240, 8192},
                               {8192, 8192},  {57344, 8192}, {8192, 28672}, {1280, 8192},  {8192, 1024},
                               {7168, 8192},  {8192, 3584},  {21504, 4096}, {4096, 21504}, {18560, 4096},
                               {4096, 8192},  {7168, 4480},  {15680, 4480}, {4480, 15680}, {22656, 4480},
                               {4608, 4096},  {5376, 4096},  {4096, 5376}};
  const int sms = 132;
  for (const auto& s : shapes)
    for (int64_t m : {1, 2, 4, 8, 16, 24, 32}) {
      const Problem p = problem(m, s[0], s[1]);
      const Config c = default_config(p, sms, 90);
      // sm_90 defaults to v3; for short K (measured at k = 1024) 64-row tiles without split-K,
      // cp.async weights, the persistent kernel's ring (session 20; the persistent kernel before).
      EXPECT_TRUE(c.wgmma) << p << " " << c.to_string();
      EXPECT_EQ(c.persist, 0) << p << " " << c.to_string();
      EXPECT_EQ(c.cp_weights, p.k <= 1024) << p << " " << c.to_string();
      EXPECT_TRUE(can_implement(p, c, 90)) << p << " " << c.to_string();
      if (c.wgmma) {
        // v3: at least one block per SM (split-K), unless K is too short to split further.
        const int64_t blocks = (p.n + c.rows - 1) / c.rows * c.splitk;
        // (The persistent grid is persist x SMs by construction, capped by the units.)
        // (At k <= 1024 one 64-row tile per block, 128 blocks for n = 8192, was measured best.)
        if (c.persist == 0 && p.k > 1024 && c.splitk < std::min<int64_t>(kMaxSplitK, p.k / kWgmmaKBlock / 4))
          EXPECT_GE(blocks, sms) << p << " " << c.to_string() << ": too few blocks to fill the SMs";
        // Two blocks share an SM: the ring takes at most half of its 228 KB.
        EXPECT_LE(shared_bytes(p, c), 114u * 1024) << p << " " << c.to_string();
      } else {
        EXPECT_GE((p.n / c.rows) * c.splitk * c.warps, int64_t(sms) * 8) << p << " " << c.to_string();
      }
      // v2 elsewhere (sm_100a here): enough warps to fill the SMs.
      const Config c2 = default_config(p, 148, 100);
      EXPECT_FALSE(c2.wgmma) << c2.to_string();
      EXPECT_TRUE(can_implement(p, c2, 100)) << p << " " << c2.to_string();
      const int64_t warps = (p.n / c2.rows) * c2.splitk * c2.warps;
      EXPECT_GE(warps, int64_t(148) * 8) << p << " " << c2.to_string() << ": too few warps to fill the SMs";
      const auto cands = candidate_configs(p, sms, 90);
      ASSERT_FALSE(cands.empty());
      EXPECT_EQ(cands.front(), c);
      std::set<std::string> seen;
      for (const Config& x : cands) {
        EXPECT_TRUE(can_implement(p, x, 90)) << p << " " << x.to_string();
        EXPECT_TRUE(seen.insert(x.to_string()).second) << "duplicate candidate " << x.to_string();
      }
    }
}

TEST(SmallMConfig, DefaultThrowsUnsupportedWithTheReason) {
  try {
    default_config(problem(64, 4096, 4096), 132, 90);
    ADD_FAILURE() << "m=64 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("m must be in 1..32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fp8gemm::small_m
