// small_m tactic names: every config that exists round-trips through its name, the names the
// default table and the tuned caches hold parse back byte for byte, and every other spelling is
// refused with the rule (removed kernels and options included). No GPU needed.
#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "backends/small_m/small_m_config.h"
#include "fp8gemm/error.h"
#include "core/decision_tables.h"

namespace fp8gemm::small_m {
namespace {

// Every family's configs over the fields' ranges (rings up to 32 stages, early at 1, 4 and
// stages - 1 where it exists, kblocks 1, 2, 4, persist 1..4).
std::vector<Config> all_existing_configs() {
  std::vector<Config> out;
  const auto keep = [&](const Config& c) {
    if (config_exists(c)) out.push_back(c);
  };
  for (int rows : {32, 33, 34, 47, 48, 55, 63, 64, 65, 78, 80, 100, 127, 128})
    for (int splitk = 1; splitk <= kMaxSplitK; ++splitk)
      for (int stages : {2, 3, 4, 7, 12, 16, 17, 32})
        for (Pdl pdl : {Pdl::kOff, Pdl::kAtStart, Pdl::kAfterKLoop})
          for (int kblocks : {1, 2, 4}) {
            const Config tma = with_kblocks(tma_ring(rows, splitk, stages, pdl), kblocks);
            keep(tma);
            keep(with_cp_weights(tma));
            for (int e : {1, 4, stages - 1})
              if (e >= 1 && e < stages && pdl != Pdl::kOff && (e != stages - 1 || e > 4)) keep(with_early(tma, e));
            if (kblocks == 1)
              for (int per_sm = 1; per_sm <= kMaxPersist; ++per_sm) keep(persistent(rows, splitk, stages, per_sm, pdl));
          }
  for (int stages : {2, 6, 16, 32})
    for (Pdl pdl : {Pdl::kOff, Pdl::kAtStart, Pdl::kAfterKLoop}) keep(activation_once(stages, pdl));
  return out;
}

// A name parse_config must refuse, and a part of the message that says why.
struct Refused {
  const char* name;
  const char* why;
};

template <size_t N>
void expect_refused(const Refused (&cases)[N]) {
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

TEST(SmallMConfig, EveryConfigRoundTripsThroughItsName) {
  const auto configs = all_existing_configs();
  ASSERT_GT(configs.size(), 5000u);
  std::set<std::string> names;
  for (const Config& c : configs) {
    const std::string name = c.to_string();
    EXPECT_EQ(parse_config(name), c) << name;
    EXPECT_TRUE(names.insert(name).second) << "two configs share the name " << name;
  }
}

TEST(SmallMConfig, EachFamilyAndOptionHasItsSpelling) {
  const std::pair<Config, const char*> cases[] = {
      {tma_ring(64, 2, 8), "wgmma,rows=64,splitk=2,stages=8,pdl=1"},
      {tma_ring(128, 1, 4, Pdl::kOff), "wgmma,rows=128,splitk=1,stages=4,pdl=0"},
      {tma_ring(64, 5, 8, Pdl::kAfterKLoop), "wgmma,rows=64,splitk=5,stages=8,pdl=2"},
      {with_early(tma_ring(64, 5, 8, Pdl::kAfterKLoop), 4), "wgmma,rows=64,splitk=5,stages=8,pdl=2,early=4"},
      {with_kblocks(tma_ring(34, 2, 8), 4), "wgmma,rows=34,splitk=2,stages=8,pdl=1,kblocks=4"},
      {with_early(with_kblocks(tma_ring(35, 1, 8), 2), 4),
       "wgmma,rows=35,splitk=1,stages=8,pdl=1,early=4,kblocks=2"},
      {cp_async_ring(64, 2, 12), "wgmma,rows=64,splitk=2,stages=12,pdl=1,wload=cp"},
      {with_kblocks(cp_async_ring(34, 2, 7), 4), "wgmma,rows=34,splitk=2,stages=7,pdl=1,kblocks=4,wload=cp"},
      {with_cp_weights(tma_ring(32, 1, 16)), "wgmma,rows=32,splitk=1,stages=16,pdl=1,wload=cp"},
      {with_kblocks(tma_ring(32, 2, 5), 2), "wgmma,rows=32,splitk=2,stages=5,pdl=1,kblocks=2"},
      {activation_once(6), "wgmma,rows=32,splitk=1,stages=6,pdl=1,kblocks=2,aonce=1"},
      {activation_once(6, Pdl::kAfterKLoop), "wgmma,rows=32,splitk=1,stages=6,pdl=2,kblocks=2,aonce=1"},
      {persistent(128, 4, 6, 1), "wgmma,rows=128,splitk=4,stages=6,pdl=1,persist=1"},
      {persistent(64, 1, 8, 2), "wgmma,rows=64,splitk=1,stages=8,pdl=1,persist=2"},
  };
  for (const auto& [c, name] : cases) {
    EXPECT_EQ(c.to_string(), name);
    EXPECT_EQ(parse_config(name), c) << name;
  }
  EXPECT_EQ(parse_config("wgmma,rows=64,splitk=2,stages=12,pdl=1,wload=cp").family, Family::kCpAsyncRing);
  EXPECT_EQ(parse_config("wgmma,rows=64,splitk=2,stages=12,pdl=2").pdl, Pdl::kAfterKLoop);
  EXPECT_EQ(tma_ring(32, 1, 4).block(), Block::kKPairs);
  EXPECT_EQ(tma_ring(64, 1, 4).block(), Block::kWarpgroups);
  EXPECT_EQ(tma_ring(128, 1, 4).block(), Block::kWarpgroups);
  EXPECT_EQ(tma_ring(33, 1, 4).block(), Block::kFitted);
  EXPECT_EQ(tma_ring(127, 1, 4).block(), Block::kFitted);
  EXPECT_NE(tma_ring(64, 2, 12), cp_async_ring(64, 2, 12));
  EXPECT_NE(tma_ring(64, 2, 12), with_pdl(tma_ring(64, 2, 12), Pdl::kAfterKLoop));
  EXPECT_NE(with_kblocks(tma_ring(32, 1, 6), 2), activation_once(6));
}

// Every small_m rule of the default table: its name parses back to itself and runs every M of
// the rule's range on sm_90.
TEST(SmallMConfig, EveryDefaultTableNameParsesAndRunsItsRule) {
  int rules = 0;
  for (const ExactRow& r : decision_tables(90).exact) {
    const std::string tactic = r.tactic;
    if (tactic.rfind("small_m:", 0) != 0) continue;
    const std::string name = tactic.substr(8);
    const Config c = parse_config(name);
    EXPECT_EQ(c.to_string(), name);
    Problem p;
    p.a_type = r.a_type;
    p.b_type = r.b_type;
    p.out_type = r.out_type;
    p.batch = r.batch;
    p.n = r.n;
    p.k = r.k;
    for (p.m = r.m_lo; p.m <= r.m_hi; ++p.m) {
      const Verdict v = can_implement(p, c, 90);
      EXPECT_TRUE(v) << p << " " << name << ": " << v.reason;
    }
    ++rules;
  }
  EXPECT_GT(rules, 50);
}

// Every name whole-suite tunes chose that still names a kernel (tests/data/small_m_tactic_names.inc,
// spelled with the l2pf=0 that names had then): each parses, prints as the same name without
// l2pf=0, and that prints back byte for byte.
TEST(SmallMConfig, EveryTunedNameParsesAndPrintsWithoutTheDroppedField) {
  const char* const names[] = {
#include "data/small_m_tactic_names.inc"
  };
  for (const std::string name : names) {
    std::string now = name;
    now.erase(now.find(",l2pf=0"), 7);
    const Config c = parse_config(name);
    EXPECT_EQ(c.to_string(), now);
    EXPECT_EQ(c.legacy_name(), name);
    EXPECT_EQ(parse_config(now), c);
  }
  EXPECT_GT(std::size(names), 150u);
}

// The kernels and options that were removed: their names are refused with what became of them.
TEST(SmallMConfig, RemovedKernelsAndOptionsAreRefusedByName) {
  const Refused cases[] = {
      {"rows=16,splitk=1,warps=8,stages=2,pdl=1", "mma.sync kernels (names without 'wgmma,') were removed"},
      {"rows=32,splitk=2,warps=8,stages=1,pdl=0", "were removed"},
      {"wgmma,rows=64,splitk=2,stages=12,l2pf=8,pdl=1", "L2 prefetch lookahead (l2pf > 0) was removed"},
      {"wgmma,rows=128,splitk=8,stages=4,l2pf=64,pdl=2", "l2pf must be 0"},
      {"wgmma,rows=64,splitk=1,stages=6,pdl=1,streamk=2,wload=cp", "stream-K kernel was removed"},
      {"wgmma,rows=64,splitk=1,stages=4,pdl=0,wload=reg", "weights in registers) was removed"},
  };
  expect_refused(cases);
}

TEST(SmallMConfig, RefusesMalformedAndNonCanonicalNames) {
  const Refused cases[] = {
      {"", "expected wgmma,"},
      {"wgmma", "expected wgmma,"},
      {"WGMMA,rows=64,splitk=1,stages=8,pdl=0", "expected wgmma,"},
      {"wgmma ,rows=64,splitk=1,stages=8,pdl=0", "expected wgmma,"},
      {"wgmma,", "is not key=value"},
      {"wgmma,rows=64,splitk=1,stages=8", "are required"},
      {"wgmma,rows=64,splitk=1,pdl=0", "are required"},
      {"wgmma,rows=64,splitk=1,stages=8,pdl=1,", "is not key=value"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=1,,wload=cp", "is not key=value"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=1wload=cp", "is not an integer"},
      {"wgmma,rows=abc,splitk=1,stages=8,pdl=0", "is not an integer"},
      {"wgmma,rows=99999999999,splitk=1,stages=8,pdl=0", "is not an integer"},
      {"wgmma,rows=+64,splitk=1,stages=8,pdl=0", "is not an integer"},
      {"wgmma,rows=64,splitk=1,warps=4,stages=8,pdl=0", "unknown field 'warps'"},
      {"wgmma,wgmma,rows=64,splitk=1,stages=8,pdl=0", "is not key=value"},
      {"wgmma,rows=64,splitk=1,stages=8,pdl=3", "0, 1 or 2"},
      {"wgmma,rows=64,splitk=1,stages=8,pdl=-1", "0, 1 or 2"},
      {"wgmma,rows=064,splitk=1,stages=8,pdl=0", "not canonical; did you mean 'wgmma,rows=64,"},
      {"wgmma,rows=64,splitk=02,stages=8,pdl=1,wload=cp", "not canonical"},
      {"wgmma,rows=64,splitk=1,stages=8,l2pf=00,pdl=0", "not canonical"},
      {"wgmma,rows=64,splitk=1,l2pf=0,stages=8,pdl=0", "not canonical"},
      {"wgmma,rows=64,splitk=1,stages=8,pdl=02", "not canonical"},
      {"wgmma,splitk=1,rows=64,stages=8,pdl=0", "not canonical"},
      {"wgmma,rows=64,splitk=1,stages=8,pdl=0,l2pf=0", "not canonical"},
      {"wgmma,rows=64,splitk=1,stages=8,wload=cp,pdl=1", "not canonical"},
      {"wgmma,rows=64,splitk=1,stages=8,early=4,pdl=1", "not canonical"},
      {"wgmma,rows=64,splitk=1,stages=8,pdl=1,kblocks=2,early=4", "not canonical"},
      {"wgmma,rows=64,splitk=1,stages=8,pdl=1,rows=64", "not canonical"},
      {"wgmma,rows=64,splitk=1,stages=8,pdl=1,early=0", "not canonical"},
      {"wgmma,rows=64,splitk=1,stages=8,pdl=1,kblocks=1", "not canonical"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=1,wload=tma", "wload is cp"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=1,wload=", "wload is cp"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=1,wload=CP", "wload is cp"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=1,wload=cp,wload=cp", "at most one"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=1,persist=1,wload=cp", "at most one"},
      {"wgmma,rows=32,splitk=1,stages=6,pdl=1,kblocks=2,aonce=1,wload=cp", "at most one"},
  };
  expect_refused(cases);
}

// Which combinations exist, with the rule each refused one breaks.
TEST(SmallMConfig, RefusesCombinationsWithoutAKernel) {
  const Refused cases[] = {
      // rows, stages, splitk
      {"wgmma,rows=31,splitk=1,stages=8,pdl=1", "rows must be 32"},
      {"wgmma,rows=129,splitk=1,stages=8,pdl=1", "33..127"},
      {"wgmma,rows=64,splitk=1,stages=1,pdl=0", "stages must be in 2..32"},
      {"wgmma,rows=64,splitk=2,stages=33,pdl=1,wload=cp", "stages must be in 2..32"},
      {"wgmma,rows=64,splitk=9,stages=8,pdl=0", "splitk must be in 1..8"},
      {"wgmma,rows=64,splitk=0,stages=8,pdl=0", "splitk must be in 1..8"},
      // early=E: the TMA ring with PDL, 1..stages-1
      {"wgmma,rows=64,splitk=2,stages=8,pdl=1,early=8", "1..stages-1"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=1,early=-1", "1..stages-1"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=0,early=4", "needs pdl=1 or 2"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=1,early=4,wload=cp", "TMA weights"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=1,early=4,persist=1", "TMA weights"},
      {"wgmma,rows=32,splitk=1,stages=8,pdl=1,early=4,kblocks=2,aonce=1", "TMA weights"},
      // kblocks=B
      {"wgmma,rows=64,splitk=1,stages=8,pdl=1,kblocks=3", "2 or 4"},
      {"wgmma,rows=32,splitk=1,stages=4,pdl=1,kblocks=4", "K pairs) takes kblocks=2"},
      {"wgmma,rows=64,splitk=1,stages=8,pdl=1,kblocks=2,persist=1", "not persist"},
      // aonce=1
      {"wgmma,rows=32,splitk=1,stages=6,pdl=1,kblocks=2,aonce=2", "aonce must be 1"},
      {"wgmma,rows=32,splitk=1,stages=6,pdl=1,kblocks=2,aonce=0", "aonce must be 1"},
      {"wgmma,rows=32,splitk=1,stages=6,pdl=1,aonce=1", "kblocks=2, splitk=1"},
      {"wgmma,rows=32,splitk=2,stages=6,pdl=1,kblocks=2,aonce=1", "kblocks=2, splitk=1"},
      {"wgmma,rows=64,splitk=1,stages=6,pdl=1,kblocks=2,aonce=1", "rows=32 (K pairs)"},
      // persist=P: 64 or 128 rows, 1..4 blocks per SM, rings of at most 16, pdl 0 or 1
      {"wgmma,rows=64,splitk=1,stages=8,pdl=1,persist=0", "persist must be in 1..4"},
      {"wgmma,rows=64,splitk=1,stages=8,pdl=1,persist=5", "persist must be in 1..4"},
      {"wgmma,rows=32,splitk=1,stages=8,pdl=1,persist=1", "rows=64 or 128"},
      {"wgmma,rows=40,splitk=1,stages=8,pdl=1,persist=1", "rows=64 or 128"},
      {"wgmma,rows=64,splitk=1,stages=17,pdl=1,persist=1", "at most 16 stages"},
      {"wgmma,rows=64,splitk=2,stages=8,pdl=2,persist=1", "not persist"},
  };
  expect_refused(cases);
  Config stray = tma_ring(64, 1, 8);
  stray.persist = 1;  // a persist count outside the persistent family
  EXPECT_NE(config_exists(stray).reason.find("persistent kernel's field"), std::string::npos);
}

// Rings of 17..32 stages exist for the one-shot rings (they run when named; no candidate offers
// them).
TEST(SmallMConfig, DeepRingsExistForTheOneShotRings) {
  for (int rows : {32, 34, 64, 100, 128})
    for (int stages : {17, 24, 32}) {
      const Config c = tma_ring(rows, 2, stages);
      for (const Config& v : {c, with_cp_weights(c), with_pdl(c, Pdl::kAfterKLoop), with_early(c, 4)}) {
        EXPECT_TRUE(config_exists(v)) << v.to_string();
        EXPECT_EQ(parse_config(v.to_string()), v);
      }
    }
}

}  // namespace
}  // namespace fp8gemm::small_m
