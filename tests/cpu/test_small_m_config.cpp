// small_m tactic names, limits and the default rule (no GPU needed).
#include <gtest/gtest.h>

#include <set>

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
                          "rows=99999999999,splitk=1,warps=8,stages=2,pdl=0"}) {
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
      EXPECT_TRUE(can_implement(p, c, 90)) << p << " " << c.to_string();
      const int64_t warps = (p.n / c.rows) * c.splitk * c.warps;
      EXPECT_GE(warps, int64_t(sms) * 8) << p << " " << c.to_string() << ": too few warps to fill the SMs";
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
