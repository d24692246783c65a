// mid_m tactic names: every config that exists round-trips through its name, and every other
// spelling is refused with the rule; the backend's name is known to the registry. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/mid_m/mid_m_config.h"
#include "fp8gemm/backend.h"
#include "fp8gemm/error.h"

namespace fp8gemm::mid_m {
namespace {

// Every config over the fields' ranges (and past them: config_exists filters).
std::vector<Config> all_existing_configs() {
  std::vector<Config> out;
  for (int rows : {32, 64, 96, 128, 256})
    for (int splitk = 0; splitk <= kMaxSplitK + 1; ++splitk)
      for (int stages : {1, 2, 3, 7, 16, 32, 33})
        for (Pdl pdl : {Pdl::kOff, Pdl::kAtStart, Pdl::kAfterKLoop})
          for (int msplit : {0, 1, 2, 3, 4, 8})
            for (int mcast : {1, 2, 3})
              for (int persist = 0; persist <= kMaxPersist + 1; ++persist) {
                Config c = ring(rows, splitk, stages, pdl);
                c.msplit = msplit;
                c.mcast = mcast;
                c.persist = persist;
                if (config_exists(c)) out.push_back(c);
                c.kstage = 2;
                if (config_exists(c)) out.push_back(c);
              }
  return out;
}

struct Refused {
  const char* name;
  const char* why;
};

void expect_refused(const std::vector<Refused>& cases) {
  for (const Refused& c : cases) {
    try {
      parse_config(c.name);
      ADD_FAILURE() << "accepted '" << c.name << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << c.name;
      EXPECT_NE(std::string(e.what()).find(c.why), std::string::npos) << c.name << ": " << e.what();
    }
  }
}

TEST(MidMConfig, EveryConfigRoundTripsThroughItsName) {
  const std::vector<Config> configs = all_existing_configs();
  // rows 2 x splitk 8 x stages 5 x pdl 3 x msplit 3 x mcast 2 x persist 3, less the clusters over 8
  // blocks (mcast=2 with splitk 5..8) and persist with split-K.
  EXPECT_GT(configs.size(), size_t(900));
  for (const Config& c : configs) {
    const std::string name = c.to_string();
    EXPECT_EQ(parse_config(name), c) << name;
    EXPECT_EQ(parse_config(name).to_string(), name);
  }
}

TEST(MidMConfig, EachOptionHasItsSpelling) {
  EXPECT_EQ(ring(128, 2, 6).to_string(), "rows=128,splitk=2,stages=6,pdl=1");
  EXPECT_EQ(ring(64, 1, 8, Pdl::kOff).to_string(), "rows=64,splitk=1,stages=8,pdl=0");
  EXPECT_EQ(with_mcast(ring(128, 4, 5, Pdl::kAfterKLoop)).to_string(), "rows=128,splitk=4,stages=5,pdl=2,mcast=2");
  EXPECT_EQ(with_persist(with_mcast(ring(64, 1, 9)), 2).to_string(), "rows=64,splitk=1,stages=9,pdl=1,mcast=2,persist=2");
  EXPECT_EQ(with_persist(ring(128, 1, 7), 1).to_string(), "rows=128,splitk=1,stages=7,pdl=1,persist=1");
  EXPECT_EQ(with_mcast(with_msplit(ring(128, 1, 9), 2)).to_string(),
            "rows=128,splitk=1,stages=9,pdl=1,msplit=2,mcast=2");
  EXPECT_TRUE(with_mcast(with_msplit(ring(128, 1, 9), 2)).shares_weights());
  EXPECT_FALSE(with_mcast(ring(128, 1, 9)).shares_weights());
  EXPECT_FALSE(with_msplit(ring(128, 1, 9), 4).shares_weights());
  EXPECT_EQ(with_kstage(with_persist(ring(64, 1, 4), 1), 2).to_string(),
            "rows=64,splitk=1,stages=4,pdl=1,persist=1,kstage=2");
  const Config c = parse_config("rows=128,splitk=2,stages=6,pdl=1,mcast=2");
  EXPECT_EQ(c.rows, 128);
  EXPECT_EQ(c.splitk, 2);
  EXPECT_EQ(c.stages, 6);
  EXPECT_EQ(c.pdl, Pdl::kAtStart);
  EXPECT_EQ(c.mcast, 2);
  EXPECT_EQ(c.persist, 0);
  EXPECT_EQ(c.msplit, 1);
  EXPECT_EQ(c.warpgroups(), 2);
  EXPECT_EQ(c.cluster_blocks(), 4);
  EXPECT_EQ(parse_config("rows=64,splitk=1,stages=3,pdl=0").warpgroups(), 1);
}

TEST(MidMConfig, RefusesMalformedAndNonCanonicalNames) {
  expect_refused({
      {"", "is not key=value"},
      {"rows=128", "rows, splitk, stages and pdl are required"},
      {"rows=128,splitk=1,stages=4", "rows, splitk, stages and pdl are required"},
      {"rows=128,splitk=1,stages=4,pdl=1,", "is not key=value"},
      {"rows=128,splitk=1,stages=4,pdl=x", "pdl='x' is not an integer"},
      {"rows=128,splitk=1,stages=4,pdl=3", "pdl must be 0, 1 or 2"},
      {"rows=128,splitk=1,stages=4,pdl=1,wload=cp", "unknown field 'wload'"},
      {"splitk=1,rows=128,stages=4,pdl=1", "did you mean 'rows=128,splitk=1,stages=4,pdl=1'"},
      {"rows=0128,splitk=1,stages=4,pdl=1", "did you mean 'rows=128,splitk=1,stages=4,pdl=1'"},
      {"rows=128,splitk=1,stages=4,pdl=1,mcast=1", "did you mean 'rows=128,splitk=1,stages=4,pdl=1'"},
      {"rows=128,splitk=1,stages=4,pdl=1,persist=0", "did you mean 'rows=128,splitk=1,stages=4,pdl=1'"},
      {"rows=128,splitk=1,stages=4,pdl=1,persist=1,mcast=2", "did you mean"},
      {"rows=128,splitk=1,stages=4,pdl=1,msplit=1", "did you mean 'rows=128,splitk=1,stages=4,pdl=1'"},
      {"rows=128,splitk=1,stages=4,pdl=1,mcast=2,msplit=2", "did you mean"},
      {"mid_m:rows=128,splitk=1,stages=4,pdl=1", "unknown field 'mid_m:rows'"},
  });
}

TEST(MidMConfig, RefusesCombinationsWithoutAKernel) {
  expect_refused({
      {"rows=96,splitk=1,stages=4,pdl=1", "rows must be 64 (one consumer warpgroup) or 128 (two)"},
      {"rows=256,splitk=1,stages=4,pdl=1", "rows must be 64"},
      {"rows=128,splitk=0,stages=4,pdl=1", "splitk must be in 1..8"},
      {"rows=128,splitk=9,stages=4,pdl=1", "splitk must be in 1..8"},
      {"rows=128,splitk=1,stages=1,pdl=1", "stages must be in 2..32"},
      {"rows=128,splitk=1,stages=33,pdl=1", "stages must be in 2..32"},
      {"rows=128,splitk=1,stages=4,pdl=1,mcast=3", "mcast must be 2"},
      {"rows=128,splitk=1,stages=4,pdl=1,msplit=3", "msplit must be 2 or 4"},
      {"rows=128,splitk=1,stages=4,pdl=1,kstage=4", "kstage must be 2"},
      {"rows=128,splitk=1,stages=4,pdl=1,kstage=1", "did you mean 'rows=128,splitk=1,stages=4,pdl=1'"},
      {"rows=128,splitk=1,stages=4,pdl=1,msplit=0", "msplit must be 2 or 4"},
      {"rows=128,splitk=5,stages=4,pdl=1,mcast=2", "mcast * splitk must be <= 8"},
      {"rows=128,splitk=1,stages=4,pdl=1,persist=3", "persist must be 1 or 2"},
      {"rows=128,splitk=2,stages=4,pdl=1,persist=1", "persist=P needs splitk=1"},
  });
  EXPECT_NO_THROW(parse_config("rows=128,splitk=4,stages=4,pdl=1,mcast=2"));  // a cluster of 8
}

TEST(MidMConfig, TheRegistryKnowsTheBackend) {
  const std::vector<std::string>& names = known_backend_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "mid_m"), names.end());
  for (const char* spelling : {"mid_m", "MID_M", "midm", "mid-m"}) EXPECT_EQ(canonical_backend_name(spelling), "mid_m");
}

}  // namespace
}  // namespace fp8gemm::mid_m
