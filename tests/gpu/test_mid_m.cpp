// mid_m against the float64 reference through the backend: every tactic it offers on odd shapes
// (M 33..256, ragged N, K tails, batch > 1), every dtype pair and output, what it refuses, split-K
// determinism, graph capture, and what each kernel was compiled to (no spills, the occupancy the
// candidates assume).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "backends/mid_m/mid_m_launch.h"
#include "core/device_buffer.h"
#include "mid_m_test_util.h"

namespace fp8gemm {
namespace {

using namespace mid_m_test;

TEST(MidM, IsAvailableOnThisGpu) {
  SKIP_UNLESS_SM90();
  const Verdict v = mid_m_backend().available();
  EXPECT_TRUE(v.ok) << v.reason;
}

// Every tactic tactics() returns, default first, on shapes with odd M, ragged N (multiples of 16
// that are not of the 64- or 128-row tiles), K tails and batch > 1.
TEST(MidM, EveryOfferedTacticMatchesTheReference) {
  SKIP_UNLESS_SM90();
  Backend& be = mid_m_backend();
  const Problem problems[] = {
      make(1, 33, 16, 16),     make(1, 48, 4096, 1024),  make(2, 63, 1040, 2064), make(1, 64, 8192, 512),
      make(3, 97, 208, 4112),  make(1, 128, 2048, 4096), make(1, 129, 336, 1088), make(2, 192, 1280, 1024),
      make(1, 201, 4080, 528), make(1, 255, 512, 2064),  make(1, 256, 1024, 2048), make(1, 100, 256, 32768),
  };
  uint64_t seed = 1;
  std::map<std::string, int> runs;
  for (const Problem& p : problems) {
    const std::vector<Tactic> tactics = be.tactics(p);
    ASSERT_FALSE(tactics.empty()) << p;
    EXPECT_EQ(tactics.front(), be.default_tactic(p));
    VerifyCase vc(p, seed++);  // one reference per problem: the expensive part
    for (const Tactic& t : tactics) {
      SCOPED_TRACE(p.to_string() + " " + t.name());
      const CheckResult r = vc.run(testing::test_context(), t);
      EXPECT_TRUE(r.ok) << r.to_string();
      ++runs[t.config];
    }
  }
  std::printf("[mid_m] %zu distinct tactics checked on %zu problems\n", runs.size(), std::size(problems));
}

TEST(MidM, AllDtypePairsAndOutputTypes) {
  SKIP_UNLESS_SM90();
  const std::pair<DType, DType> pairs[] = {
      {DType::kE4M3, DType::kE4M3}, {DType::kE4M3, DType::kE5M2}, {DType::kE5M2, DType::kE4M3}};
  using mid_m::ring;
  using mid_m::with_mcast;
  using mid_m::with_msplit;
  uint64_t seed = 100;
  for (auto [a, b] : pairs)
    for (DType out : {DType::kBF16, DType::kFP16})
      for (int64_t m : {33, 130, 256}) {
        const Problem p = make(2, m, 336, 1088, a, b, out);
        VerifyCase vc(p, seed++);
        for (const mid_m::Config& c :
             {ring(128, 1, 4), ring(64, 3, 3, mid_m::Pdl::kOff), with_mcast(ring(128, 2, 3)),
              mid_m::with_persist(ring(64, 1, 3), 1), with_msplit(ring(128, 1, 4), 2),
              with_mcast(with_msplit(ring(128, 2, 3), 2)), with_mcast(with_msplit(ring(64, 1, 4), 4)),
              mid_m::with_kstage(ring(128, 1, 3), 2),
              mid_m::with_kstage(with_mcast(with_msplit(ring(128, 3, 2), 2)), 2)})
          passes_reference(vc, fitted(p, c));
        for (const Tactic& t : mid_m_backend().tactics(p)) {
          SCOPED_TRACE(p.to_string() + " " + t.name());
          EXPECT_TRUE(vc.run(testing::test_context(), t).ok);
        }
      }
}

TEST(MidM, RejectsWhatItCannotRun) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Backend& be = mid_m_backend();
  for (int64_t m : {1, 32, 257, 1024}) {
    const Problem p = make(1, m, 256, 256);
    EXPECT_TRUE(be.tactics(p).empty()) << m;
    EXPECT_THROW(be.default_tactic(p), Error) << m;
  }
  const Problem p = make(1, 64, 256, 256);
  EXPECT_FALSE(be.can_implement(p, Tactic{"mid_m", "rows=96,splitk=1,stages=4,pdl=1"}));
  EXPECT_FALSE(be.can_implement(p, Tactic{"mid_m", "splitk=1,rows=128,stages=4,pdl=1"}));  // not canonical
  EXPECT_FALSE(be.can_implement(p, Tactic{"small_m", "rows=128,splitk=1,stages=4,pdl=1"}));
  EXPECT_FALSE(be.can_implement(p, Tactic{"mid_m", "rows=128,splitk=3,stages=4,pdl=1"}));  // 2 K blocks
  if (testing::test_context().device().compute_capability() != 90)
    EXPECT_FALSE(be.can_implement(p, Tactic{"mid_m", "rows=128,splitk=1,stages=4,pdl=1"}));
  else
    EXPECT_TRUE(be.can_implement(p, Tactic{"mid_m", "rows=128,splitk=1,stages=4,pdl=1"}));
}

// Split-K is reduced in a fixed order: the same inputs give the same bits every time.
TEST(MidM, SplitKIsDeterministic) {
  SKIP_UNLESS_SM90();
  using mid_m::ring;
  const Problem p = make(1, 96, 1280, 8192);
  const HostInputs in = random_inputs(p, 11);
  DeviceBuffer a(in.a.size()), b(in.b.size()), scales(32), out(size_t(p.m * p.n) * 2);
  a.upload(in.a.data(), in.a.size());
  b.upload(in.b.data(), in.b.size());
  const float s[8] = {in.a_scale, 0, 0, 0, in.b_scale, 0, 0, 0};
  scales.upload(s, sizeof s);
  const GemmArgs args{a.get(), b.get(), scales.as<float>(), scales.as<float>() + 4, out.get()};
  for (const mid_m::Config& c : {ring(128, 8, 3), ring(64, 5, 4), mid_m::with_mcast(ring(128, 4, 3)),
                                 mid_m::with_mcast(mid_m::with_msplit(ring(128, 4, 3), 2))}) {
    const Tactic t = tactic(fitted(p, c));
    std::vector<uint16_t> first(size_t(p.m * p.n)), again(first.size());
    for (int rep = 0; rep < 3; ++rep) {
      FP8GEMM_CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes()));
      testing::test_context().run_tactic(p, t, args, nullptr);
      FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      out.download((rep == 0 ? first : again).data(), out.bytes());
      if (rep > 0) EXPECT_EQ(std::memcmp(first.data(), again.data(), out.bytes()), 0) << t.name() << " rep " << rep;
    }
  }
}

// run() allocates nothing and synchronizes nothing: each family replays from a CUDA graph.
TEST(MidM, ReplaysFromACudaGraph) {
  SKIP_UNLESS_SM90();
  using mid_m::ring;
  const Problem p = make(2, 77, 1040, 2064);
  for (const mid_m::Config& c : {ring(128, 1, 4), ring(64, 4, 3, mid_m::Pdl::kAfterKLoop),
                                 mid_m::with_mcast(ring(128, 2, 4)), mid_m::with_persist(ring(128, 1, 4), 1),
                                 mid_m::with_persist(mid_m::with_mcast(ring(64, 1, 3)), 2),
                                 mid_m::with_mcast(mid_m::with_msplit(ring(128, 1, 4), 2)),
                                 mid_m::with_persist(mid_m::with_mcast(mid_m::with_msplit(ring(128, 1, 3), 4)), 1),
                                 mid_m::with_kstage(mid_m::with_persist(ring(64, 1, 3), 2), 2)})
    testing::check_in_graph(testing::test_context(), p, tactic(fitted(p, c)));
}

// What each kernel compiled to: no local memory (spills), and an SM holds as many of its blocks as
// the candidates' rings assume (the registers of its __launch_bounds__, the shared memory of its
// ring). Every instantiation (every wgmma N, one and two warpgroups, kstage 1 and 2) is asked.
TEST(MidM, KernelsNeitherSpillNorHoldFewerBlocksThanAssumed) {
  SKIP_UNLESS_SM90();
  const mid_m::DeviceLimits d = limits();
  int checked = 0;
  for (int n : mid_m::kTileNs)
    for (int rows : {64, 128})
      for (int kstage : {1, 2}) {
        const Problem p = make(1, n, 8192, 8192);
        const int reg_blocks = mid_m::blocks_per_sm_by_registers(rows / 64, n);
        for (int per_sm = 1; per_sm <= reg_blocks; ++per_sm) {
          mid_m::Config c = mid_m::with_kstage(mid_m::ring(rows, 1, 4), kstage);
          c.stages = mid_m::deepest_ring(p, c, per_sm, d);
          if (c.stages == 0) continue;
          const mid_m::KernelFacts f = mid_m::kernel_facts(p, c);
          EXPECT_EQ(f.local_bytes, size_t(0)) << c.to_string() << " at N=" << n << ": spills";
          EXPECT_LE(f.registers, mid_m::register_cap(reg_blocks, mid_m::block_threads(rows / 64)));
          EXPECT_GE(f.blocks_per_sm, per_sm)
              << c.to_string() << " at N=" << n << " (" << f.registers << " registers)";
          if (per_sm == 1)
            std::printf("[mid_m] N=%3d rows=%3d kstage=%d: %3d registers, %zu bytes local, built for %d blocks a SM\n", n,
                        rows, kstage, f.registers, f.local_bytes, reg_blocks);
          ++checked;
        }
      }
  EXPECT_GE(checked, 4 * mid_m::kTileNCount);
}

// Diagnostic for the fragment and ring mappings: exact small-integer inputs, so that a wrong
// element is wrong by a visible amount; prints which output rows, columns and tiles are affected.
TEST(MidM, ExactIntegersWithMismatchPattern) {
  SKIP_UNLESS_SM90();
  Backend& be = mid_m_backend();
  const int64_t batch = 2, m = 45, n = 208, k = 400;  // 3 full K blocks and a 16-byte tail
  const Problem p = make(batch, m, n, k);
  const uint8_t code[5] = {0xC0, 0xB8, 0x00, 0x38, 0x40};  // e4m3 -2, -1, 0, 1, 2
  std::mt19937 rng(7);
  std::vector<int> av(size_t(batch * m * k)), wv(size_t(batch * n * k));
  std::vector<uint8_t> ab(av.size()), wb(wv.size());
  for (size_t i = 0; i < av.size(); ++i) {
    const int c = int(rng() % 5);
    av[i] = c - 2;
    ab[i] = code[c];
  }
  for (size_t i = 0; i < wv.size(); ++i) {
    const int c = int(rng() % 5);
    wv[i] = c - 2;
    wb[i] = code[c];
  }
  const float sa = 0.5f, sb = 0.25f, scales[8] = {sa, 0, 0, 0, sb, 0, 0, 0};
  DeviceBuffer da(ab.size()), dw(wb.size()), dout(size_t(batch * m * n) * 2), ds(sizeof scales);
  da.upload(ab.data(), ab.size());
  dw.upload(wb.data(), wb.size());
  ds.upload(scales, sizeof scales);
  using mid_m::ring;
  for (const mid_m::Config& c : {ring(128, 1, 2, mid_m::Pdl::kOff), ring(64, 1, 3), ring(128, 2, 3), ring(64, 3, 2),
                                 mid_m::with_mcast(ring(128, 1, 2)), mid_m::with_mcast(ring(64, 2, 3)),
                                 mid_m::with_persist(ring(64, 1, 2), 1), mid_m::with_persist(ring(128, 1, 3), 2),
                                 mid_m::with_msplit(ring(128, 1, 3), 2), mid_m::with_msplit(ring(64, 2, 3), 4),
                                 mid_m::with_mcast(mid_m::with_msplit(ring(128, 1, 3), 2)),
                                 mid_m::with_persist(mid_m::with_mcast(mid_m::with_msplit(ring(64, 1, 3), 2)), 2),
                                 mid_m::with_kstage(ring(128, 3, 2), 2), mid_m::with_kstage(ring(64, 1, 2), 2),
                                 mid_m::with_kstage(mid_m::with_persist(mid_m::with_msplit(ring(64, 1, 2), 2), 1),
                                                    2)}) {
    const Tactic t = tactic(c);
    FP8GEMM_CUDA_CHECK(cudaMemset(dout.get(), 0xFF, dout.bytes()));
    const GemmArgs args{da.get(), dw.get(), ds.as<float>(), ds.as<float>() + 4, dout.get()};
    be.run(p, t, args, testing::test_context().workspace(nullptr), nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << t.name();
    std::vector<uint16_t> out(size_t(batch * m * n));
    dout.download(out.data(), dout.bytes());
    int bad = 0;
    std::map<int, int> by_tile, by_m, by_row;
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double ref = 0;
          for (int64_t q = 0; q < k; ++q)
            ref += double(av[size_t((bi * m + i) * k + q)]) * wv[size_t((bi * n + j) * k + q)];
          ref *= sa * sb;
          const uint32_t bits = uint32_t(out[size_t((bi * m + i) * n + j)]) << 16;
          float got;
          std::memcpy(&got, &bits, 4);
          if (!(std::fabs(got - ref) <= 0.01 * std::fabs(ref) + 1e-6)) {
            if (bad < 8)
              std::printf("  %s: b=%lld m=%lld n=%lld got %g want %g\n", t.name().c_str(), (long long)bi,
                          (long long)i, (long long)j, got, ref);
            ++bad;
            ++by_tile[int(j / c.rows)];
            ++by_m[int(i)];
            ++by_row[int(j % c.rows)];
          }
        }
    if (bad) {
      std::printf("  %s: %d of %lld wrong\n  by row tile:", t.name().c_str(), bad, (long long)(batch * m * n));
      for (auto [key, v] : by_tile) std::printf(" %d:%d", key, v);
      std::printf("\n  by m:");
      for (auto [key, v] : by_m) std::printf(" %d:%d", key, v);
      std::printf("\n  by row in tile:");
      for (auto [key, v] : by_row) std::printf(" %d:%d", key, v);
      std::printf("\n");
    }
    EXPECT_EQ(bad, 0) << t.name();
  }
}

}  // namespace
}  // namespace fp8gemm
