// CUTLASS backend without a GPU: the configs.def table, canonical names (round trip, garbage
// refused), and the backend's decisions (tactics, can_implement reasons, default tactic) for a
// described H200 (DeviceInfo filled in by hand; nothing here launches a kernel).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "backends/cutlass/config.h"
#include "backends/cutlass/cutlass_backend.h"
#include "backends/cutlass/kernels.h"
#include "fp8gemm/error.h"
#include "fp8gemm/verify.h"

namespace fp8gemm::cutlass_backend {
namespace {

DeviceInfo h200() {
  DeviceInfo d;
  d.device = 0;
  d.name = "NVIDIA H200 (described, not queried)";
  d.sm_count = 132;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.l2_bytes = 60ull << 20;
  d.smem_per_block_optin = 232448;
  return d;
}

// A kernel every build has (full or reduced).
Tactic first_built() {
  for (const ConfigRow& row : config_table())
    if (row_is_built(row)) return Tactic{"cutlass", row.config.name()};
  ADD_FAILURE() << "no CUTLASS kernel is built";
  return {};
}

Problem problem(int64_t batch, int64_t m, int64_t n, int64_t k, DType a = DType::kE4M3, DType b = DType::kE4M3,
                DType out = DType::kBF16) {
  Problem p;
  p.batch = batch, p.m = m, p.n = n, p.k = k;
  p.a_type = a, p.b_type = b, p.out_type = out;
  return p;
}

TEST(CutlassConfig, EveryRowNameRoundTripsAndIsUnique) {
  std::set<std::string> names;
  std::set<int> ids;
  for (const ConfigRow& row : config_table()) {
    const std::string name = row.config.name();
    const std::optional<KernelConfig> back = KernelConfig::parse(name);
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_TRUE(*back == row.config) << name << " parsed back as " << back->name();
    EXPECT_EQ(back->name(), name);
    EXPECT_TRUE(names.insert(name).second) << "duplicate config " << name;
    EXPECT_TRUE(ids.insert(row.id).second) << "duplicate id " << row.id;
    EXPECT_EQ(find_row(row.config), &row);
  }
  EXPECT_GE(config_table().size(), 10u);
}

TEST(CutlassConfig, KnownNameParsesToTheKernelItDescribes) {
  const auto c = KernelConfig::parse("sm90_cooperative_128x16x256_c1x1x1_swap_streamk_acc32");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->schedule, Schedule::Cooperative);
  EXPECT_EQ(c->tile_m, 128);
  EXPECT_EQ(c->tile_n, 16);
  EXPECT_EQ(c->tile_k, 256);
  EXPECT_EQ(c->cluster_m, 1);
  EXPECT_TRUE(c->swap_ab);
  EXPECT_EQ(c->scheduler, TileScheduler::StreamK);
  EXPECT_FALSE(c->fast_accum);
  EXPECT_EQ(KernelConfig::parse("sm90_pingpong_64x128x128_c2x1x1")->name(), "sm90_pingpong_64x128x128_c2x1x1");
}

TEST(CutlassConfig, PdlIsALaunchOptionOfTheSameKernel) {
  const auto c = KernelConfig::parse("sm90_pingpong_64x16x256_c4x1x1_swap_pdl");
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->pdl);
  EXPECT_EQ(c->name(), "sm90_pingpong_64x16x256_c4x1x1_swap_pdl");
  EXPECT_FALSE(c->kernel().pdl);
  EXPECT_NE(find_row(c->kernel()), nullptr) << "the _pdl name denotes a configs.def row's kernel";
  EXPECT_EQ(find_row(*c), nullptr) << "rows themselves are launched without PDL";
  EXPECT_TRUE(KernelConfig::parse("sm90_pingpong_128x128x128_c2x1x1_acc32_pdl")->pdl);
  for (const char* bad : {"sm90_pingpong_64x16x256_c4x1x1_pdl_swap", "sm90_pingpong_64x16x256_c4x1x1_pdl_pdl",
                          "sm90_pingpong_64x16x256_c4x1x1_pdl_"})
    EXPECT_FALSE(KernelConfig::parse(bad).has_value()) << "accepted '" << bad << "'";
}

TEST(CutlassConfig, ParseRejectsGarbage) {
  for (const char* bad : {"", "sm90", "sm90_pingpong", "sm90_pingpong_64x128x128", "sm90_pingpong_64x128x128_c2x1x1_",
                          "sm90_pingpong_64x128_c2x1x1", "sm90_pingpong_0x128x128_c2x1x1",
                          "sm90_pingpong_064x128x128_c2x1x1", "sm90_pingpong_64x128x128x1_c2x1x1",
                          "sm90_pingpong_64x-1x128_c2x1x1", "sm90_pingpong_64x128x128_2x1x1",
                          "sm90_pingpong_64x128x128_c2x1", "sm90_foo_64x128x128_c2x1x1", "sm100_pingpong_64x128x128_c2x1x1",
                          "sm90_pingpong_64x128x128_c2x1x1_acc32_swap", "sm90_pingpong_64x128x128_c2x1x1_swap_swap",
                          "sm90_pingpong_64x128x128_c2x1x1_fast", "sm90_pingpong_64x128x99999_c2x1x1",
                          "sm90_pingpong_64x128x128_c2x1x1 ", "SM90_pingpong_64x128x128_c2x1x1"}) {
    EXPECT_FALSE(KernelConfig::parse(bad).has_value()) << "accepted '" << bad << "'";
  }
}

TEST(CutlassConfig, Acc32NameMatchesAccumulationAndTolerance) {
  for (const ConfigRow& row : config_table()) {
    const std::string name = row.config.name();
    EXPECT_EQ(name.find("acc32") != std::string::npos, !row.config.fast_accum) << name;
    EXPECT_EQ(tactic_uses_fast_accum(Tactic{"cutlass", name}), row.config.fast_accum) << name;
  }
}

TEST(CutlassConfig, RowsAreKernelsCutlassCanBuild) {
  bool reduced_swap = false, reduced_plain = false, reduced_mixed = false;
  for (const ConfigRow& row : config_table()) {
    const KernelConfig& c = row.config;
    const std::string name = c.name();
    if (c.schedule == Schedule::Cooperative) EXPECT_EQ(c.tile_m % 128, 0) << name;
    if (c.scheduler == TileScheduler::StreamK) EXPECT_EQ(c.schedule, Schedule::Cooperative) << name;
    EXPECT_GE(c.tile_m, 64) << name << ": wgmma's M is 64 per warpgroup";
    EXPECT_TRUE(c.tile_n % 8 == 0 && c.tile_n <= 256) << name;
    EXPECT_LE(c.cluster_m * c.cluster_n * c.cluster_k, 8) << name;
    EXPECT_EQ(c.cluster_k, 1) << name;
    if (row.reduced) {
      reduced_swap |= c.swap_ab;
      reduced_plain |= !c.swap_ab;
      reduced_mixed |= row.mixed_fp8;
    }
  }
  EXPECT_TRUE(reduced_swap && reduced_plain && reduced_mixed)
      << "the reduced set must still cover small m (swap), large m and mixed FP8 types";
}

TEST(CutlassConfig, BuiltKernelsMatchTheTable) {
  // Every built row has both out types for e4m3 x e4m3, and mixed pairs exactly where marked.
  for (const ConfigRow& row : config_table()) {
    int e4m3 = 0, mixed = 0;
    for (const KernelVariant& v : built_kernels()) {
      if (v.row_id != row.id) continue;
      (v.a_type == DType::kE4M3 && v.b_type == DType::kE4M3 ? e4m3 : mixed)++;
      EXPECT_GT(v.smem_bytes, 0u);
    }
    EXPECT_EQ(e4m3, row_is_built(row) ? 2 : 0) << row.config.name();
    EXPECT_EQ(mixed, row_is_built(row) && row.mixed_fp8 ? 4 : 0) << row.config.name();
  }
}

TEST(CutlassBackend, ListsOnlyTacticsItCanRun) {
  auto backend = make_cutlass_backend(h200(), {});
  ASSERT_TRUE(backend->available()) << backend->available().reason;
  const Problem p = problem(1, 16, 4096, 4096);
  const std::vector<Tactic> ts = backend->tactics(p);
  ASSERT_FALSE(ts.empty());
  // Every built kernel runs a plain 16x4096x4096 e4m3 problem, the persistent ones also with PDL.
  size_t persistent = 0, stream_k = 0, pdl = 0;
  for (const ConfigRow& row : config_table())
    if (row_is_built(row)) ++(row.config.scheduler == TileScheduler::Persistent ? persistent : stream_k);
  for (const Tactic& t : ts) pdl += t.config.size() > 4 && t.config.substr(t.config.size() - 4) == "_pdl";
  EXPECT_EQ(ts.size(), 2 * persistent + stream_k);
  EXPECT_EQ(pdl, persistent) << "one _pdl twin per persistent kernel";
  EXPECT_EQ(ts.front().config, backend->default_tactic(p).config) << "vLLM's choice for this M comes first";
  EXPECT_FALSE(backend->can_implement(p, Tactic{"cutlass", "sm90_cooperative_128x16x256_c1x1x1_swap_streamk_pdl"}))
      << "stream-K kernels are built without GDC";
  for (const Tactic& t : ts) {
    EXPECT_EQ(t.backend, "cutlass");
    EXPECT_TRUE(backend->can_implement(p, t)) << t.name() << ": " << backend->can_implement(p, t).reason;
    EXPECT_TRUE(backend->can_implement(p, Tactic::parse(t.name()))) << "name does not survive a round trip: " << t.name();
  }
}

TEST(CutlassBackend, DefaultTacticFollowsMBuckets) {
  auto backend = make_cutlass_backend(h200(), {});
  for (int64_t m : {1, 3, 16, 17, 64, 100, 128, 256, 1024, 4096, 16384}) {
    for (DType out : {DType::kBF16, DType::kFP16}) {
      const Problem p = problem(1, m, 6144, 4096, DType::kE4M3, DType::kE4M3, out);
      const Tactic t = backend->default_tactic(p);
      EXPECT_TRUE(backend->can_implement(p, t)) << p << " -> " << t;
      if (m <= 16) EXPECT_NE(t.config.find("_swap"), std::string::npos) << p << " -> " << t;
      if (m > 256) EXPECT_EQ(t.config.find("_swap"), std::string::npos) << p << " -> " << t;
    }
  }
  for (auto [a, b] : {std::pair{DType::kE4M3, DType::kE5M2}, std::pair{DType::kE5M2, DType::kE4M3}}) {
    for (int64_t m : {1, 64, 8192}) {
      const Problem p = problem(2, m, 1024, 512, a, b);
      const Tactic t = backend->default_tactic(p);
      EXPECT_TRUE(backend->can_implement(p, t)) << p << " -> " << t;
    }
  }
}

TEST(CutlassBackend, RefusesWithReasons) {
  auto backend = make_cutlass_backend(h200(), {});
  const Tactic ok = first_built();
  auto reason = [&](const Problem& p, const Tactic& t) {
    const Verdict v = backend->can_implement(p, t);
    EXPECT_FALSE(v) << p << " " << t;
    return v.reason;
  };
  EXPECT_NE(reason(problem(1, 16, 4096, 40), ok).find("multiple of 16"), std::string::npos);
  EXPECT_NE(reason(problem(1, 16, 4100, 4096), ok).find("multiple of 8"), std::string::npos);
  Problem misaligned = problem(1, 16, 4096, 4096);
  misaligned.alignment = 8;
  EXPECT_NE(reason(misaligned, ok).find("aligned"), std::string::npos);
  EXPECT_NE(reason(problem(1, 16, 4096, 4096, DType::kE5M2, DType::kE5M2), ok).find("e5m2 x e5m2"), std::string::npos);
  EXPECT_NE(reason(problem(1, 16, 4096, 4096), Tactic{"cutlass", "nonsense"}).find("not a CUTLASS tactic name"),
            std::string::npos);
  EXPECT_NE(reason(problem(1, 16, 4096, 4096), Tactic{"cutlass", "sm90_pingpong_64x128x128_c2x1x1_acc32_swap"})
                .find("not a CUTLASS tactic name"),
            std::string::npos);
  EXPECT_NE(reason(problem(1, 16, 4096, 4096), Tactic{"cutlass", "sm90_pingpong_64x136x128_c2x1x1"}).find("configs.def"),
            std::string::npos);
  // A removed row is refused like any kernel outside configs.def: a cache naming it falls back.
  EXPECT_NE(reason(problem(1, 16, 4096, 4096), Tactic{"cutlass", "sm90_cooperative_128x64x128_c1x1x1_swap_streamk"})
                .find("configs.def"),
            std::string::npos);
  EXPECT_NE(reason(problem(1, 16, 4096, 4096), Tactic{"cublaslt", ok.config}).find("does not belong"), std::string::npos);
  // A kernel compiled only for e4m3 x e4m3 says so for mixed types.
  for (const ConfigRow& row : config_table())
    if (row_is_built(row) && !row.mixed_fp8) {
      EXPECT_NE(reason(problem(1, 16, 4096, 4096, DType::kE4M3, DType::kE5M2), Tactic{"cutlass", row.config.name()})
                    .find("e4m3 x e4m3 only"),
                std::string::npos);
      break;
    }

  EXPECT_THROW(
      {
        try {
          backend->default_tactic(problem(1, 16, 4096, 40));
        } catch (const Error& e) {
          EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
          EXPECT_NE(std::string(e.what()).find("multiple of 16"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
}

TEST(CutlassBackend, RespectsTheDevice) {
  DeviceInfo small_smem = h200();
  small_smem.smem_per_block_optin = 48 * 1024;
  auto backend = make_cutlass_backend(small_smem, {});
  const Problem p = problem(1, 16, 4096, 4096);
  const Verdict v = backend->can_implement(p, first_built());
  EXPECT_FALSE(v);
  EXPECT_NE(v.reason.find("shared memory"), std::string::npos) << v.reason;

  DeviceInfo blackwell = h200();
  blackwell.cc_major = 10;
  auto bw = make_cutlass_backend(blackwell, {});
  EXPECT_FALSE(bw->available());
  EXPECT_NE(bw->available().reason.find("9.0"), std::string::npos) << bw->available().reason;
  EXPECT_TRUE(bw->tactics(p).empty());
  EXPECT_THROW(bw->default_tactic(p), Error);
}

TEST(CutlassBackend, WorkspaceComesFromTheKernel) {
  auto backend = make_cutlass_backend(h200(), {});
  const Problem p = problem(1, 1, 4096, 16384);  // 32 output tiles of 128 for 132 SMs: k is split
  bool saw_streamk = false;
  for (const Tactic& t : backend->tactics(p)) {
    const size_t ws = backend->workspace_bytes(p, t);
    if (t.config.find("_streamk") != std::string::npos) {
      saw_streamk = true;
      EXPECT_GT(ws, 0u) << t << " splits k over SMs and needs partial sums";
    }
    EXPECT_LE(ws, size_t(32) << 20) << t << " fits the Context's default workspace";
  }
  bool streamk_built = false;
  for (const ConfigRow& row : config_table())
    streamk_built |= row_is_built(row) && row.config.scheduler == TileScheduler::StreamK;
  EXPECT_EQ(saw_streamk, streamk_built);
  EXPECT_EQ(backend->workspace_bytes(problem(0, 0, 4096, 4096), first_built()), 0u);
}

}  // namespace
}  // namespace fp8gemm::cutlass_backend
