// mid_m's rule on a cache miss (default_config) and the configs worth timing for a problem
// (candidate_configs): a small table of rules, each a condition on the problem and the configs it
// offers, applied in order. Host-only, so the CPU tests cover it.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/mid_m/mid_m_select.h"
#include "fp8gemm/check.h"  // FP8GEMM_REQUIRE

namespace fp8gemm::mid_m {

namespace {

// A block's fixed cost (its ring's fill latency and its epilogue, about a microsecond) in bytes of
// weights one SM streams meanwhile (HBM's ~4.5 TB/s over 132 SMs is ~34 KB a microsecond).
constexpr int64_t kBlockFixedBytes = 32 * 1024;

// What the rules read: the problem, the device, and the quantities they are built on.
struct Setting {
  const Problem& p;
  const DeviceLimits& d;

  int64_t kblocks() const { return (p.k + kKBlockBytes - 1) / kKBlockBytes; }
  // Units (M blocks of the row tiles of every batch) of `c`, multicast pairs padded.
  int64_t units(const Config& c) const { return padded_row_tiles(p, c) * c.msplit * p.batch; }
  // Blocks per SM the kernel of `rows` is built for at this M split into `msplit` blocks (its
  // register cap).
  int register_blocks(int rows, int msplit = 1) const {
    return blocks_per_sm_by_registers(rows / 64, tile_n(block_m(p.m, msplit)));
  }
  // Split-K ranks allowed for `c`: >= 4 K blocks (512 bytes of K) per split, the cluster within 8
  // blocks.
  int most_splitk(const Config& c) const {
    return int(std::min<int64_t>({kMaxClusterBlocks / c.mcast, kMaxSplitK, std::max<int64_t>(1, kblocks() / 4)}));
  }
  // The time `c` takes with `splitk` at `per_sm` blocks per SM, in bytes of weights one SM streams
  // meanwhile: each wave of blocks streams a block's weights (per_sm of them share the SM) and
  // pays kBlockFixedBytes (the ring's fill and the epilogue).
  double cost(const Config& c, int splitk, int per_sm) const {
    const int64_t blocks = units(c) * splitk, slots = int64_t(per_sm) * d.sm_count;
    const int64_t waves = (blocks + slots - 1) / slots;
    const int64_t bytes = int64_t(c.rows) * kKBlockBytes * ((kblocks() + splitk - 1) / splitk);
    return double(waves) * double(kBlockFixedBytes + bytes * per_sm);
  }
  // The split-K of least cost (the smaller split within 2%: less to reduce, fewer blocks).
  int fill_splitk(const Config& c, int per_sm) const {
    int best = 1;
    for (int sk = 2; sk <= most_splitk(c); ++sk)
      if (cost(c, sk, per_sm) < cost(c, best, per_sm) * 0.98) best = sk;
    return best;
  }
  // The deepest ring (3..16 stages) with which `per_sm` blocks of `c` share an SM; 0 if none.
  int ring_depth(const Config& c, int per_sm) const { return deepest_ring(p, c, per_sm, d); }
  // `c` with its ring: stages of two K blocks where at least kMinPairedStages of them fit (the
  // producer's per-stage work is then paid once per 256 bytes of K), else of one, as deep as fit;
  // stages 0 where no ring fits.
  static constexpr int kMinPairedStages = 4;
  Config with_ring(Config c, int per_sm) const {
    c.kstage = kMaxKStage;
    c.stages = ring_depth(c, per_sm);
    if (c.stages < kMinPairedStages) {
      c.kstage = 1;
      c.stages = ring_depth(c, per_sm);
    }
    return c;
  }
  // The one-shot config of `rows` / msplit / mcast at `per_sm` blocks per SM: the split-K of least
  // cost, the ring of with_ring.
  Config one_wave(int rows, bool mcast, int per_sm, Pdl pdl = Pdl::kAtStart, int msplit = 1) const {
    Config c = with_msplit(ring(rows, 1, 4, pdl), msplit);
    if (mcast) c = with_mcast(c);
    c.splitk = fill_splitk(c, per_sm);
    return with_ring(c, per_sm);
  }
};

// The candidate list being built: what cannot run `p`, or is offered already, is dropped.
struct Candidates {
  const Problem& p;
  const DeviceLimits& d;
  std::vector<Config> list;
  void add(const Config& c) {
    if (c.stages == 0 || !can_implement(p, c, d)) return;
    if (std::find(list.begin(), list.end(), c) == list.end()) list.push_back(c);
  }
};

struct Rule {
  const char* offers;                        // what the rule adds, and why
  bool (*applies)(const Setting&);           // the condition on the problem
  void (*add)(const Setting&, Candidates&);  // the configs, in the order they are timed
};

bool always(const Setting&) { return true; }

const Rule kRules[] = {
    {"one-shot blocks of 128 and 64 rows, with and without activation multicast, at each occupancy "
     "their registers allow (1..4 blocks per SM): the split-K of least estimated cost (waves of "
     "blocks, each streaming its weights and paying a fixed cost), the deepest ring",
     always,
     [](const Setting& s, Candidates& out) {
       for (int rows : {128, 64})
         for (bool mcast : {false, true})
           for (int per_sm = 1; per_sm <= s.register_blocks(rows); ++per_sm)
             out.add(s.one_wave(rows, mcast, per_sm));
     }},
    {"128-row blocks over M blocks of 33 to 128 activation rows (msplit 2 or 4), with and without "
     "the pair sharing the weight tile by multicast, where M is above 64: a block then holds at "
     "least as many weight bytes as activation bytes a stage, like cuBLASLt's 128 x 64 tiles",
     [](const Setting& s) { return s.p.m > 64; },
     [](const Setting& s, Candidates& out) {
       for (int msplit : {2, kMaxMSplit}) {
         if (block_m(s.p.m, msplit) <= 32 || block_m(s.p.m, msplit) > 128) continue;
         for (bool mcast : {false, true})
           for (int per_sm = 1; per_sm <= s.register_blocks(128, msplit); ++per_sm)
             out.add(s.one_wave(128, mcast, per_sm, Pdl::kAtStart, msplit));
       }
     }},
    {"persistent blocks (one or two per SM, where the registers allow two) where the row tiles are "
     "more than one wave: the ring runs on across tiles, so a tile's epilogue overlaps the next "
     "tile's weight stream",
     [](const Setting& s) { return s.units(ring(128, 1, 4)) > s.d.sm_count; },
     [](const Setting& s, Candidates& out) {
       for (int rows : {128, 64})
         for (bool mcast : {false, true})
           for (int per_sm = 1; per_sm <= std::min(kMaxPersist, s.register_blocks(rows)); ++per_sm) {
             Config c = ring(rows, 1, 4);
             if (mcast) c = with_mcast(c);
             c = s.with_ring(with_persist(c, per_sm), per_sm);
             if (s.units(c) > int64_t(per_sm) * s.d.sm_count) out.add(c);
           }
     }},
    {"pdl=2 twins of the one-shot 128-row candidates on weights of at most 40 MB (they stay in L2 "
     "between calls): the next kernel's blocks then do not compete with this one's weight stream",
     [](const Setting& s) { return s.p.n * s.p.k * s.p.batch <= (int64_t(40) << 20); },
     [](const Setting&, Candidates& out) {
       const std::vector<Config> above = out.list;
       for (const Config& c : above)
         if (c.rows == 128 && c.persist == 0 && c.pdl == Pdl::kAtStart) out.add(with_pdl(c, Pdl::kAfterKLoop));
     }},
};

}  // namespace

Config default_config(const Problem& p, const DeviceLimits& d) {
  FP8GEMM_REQUIRE(d.sm_count > 0, kInternal, "mid_m: the device's SM count must be known");
  const Setting s{p, d};
  const Config c = s.one_wave(128, false, 1);
  const Verdict v = c.stages > 0 ? can_implement(p, c, d) : Verdict::no("no ring of 3 stages fits shared memory");
  FP8GEMM_REQUIRE(v.ok, kUnsupported, "mid_m cannot run ", p, ": ", v.reason);
  return c;
}

std::vector<Config> candidate_configs(const Problem& p, const DeviceLimits& d) {
  if (d.cc != 90) return {};
  Candidates out{p, d, {default_config(p, d)}};
  const Setting s{p, d};
  for (const Rule& r : kRules)
    if (r.applies(s)) r.add(s, out);
  return out.list;
}

int64_t same_tiles_up_to(const Problem& p, const Config& c) {
  const int64_t most = int64_t(c.msplit) * tile_n(block_m(p.m, c.msplit));
  return std::max<int64_t>(p.m, std::min<int64_t>(kMaxM, most));
}

}  // namespace fp8gemm::mid_m
