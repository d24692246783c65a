// small_m's rule on a cache miss (default_config) and the tactics worth timing for a problem
// (candidate_configs, streamk_candidates): split-K, ring depths and fitted rows from the problem
// and the device's SM count, each rule with the H200 measurement it rests on. Host-only, so the
// CPU tests cover it (tests/cpu/test_small_m_config.cpp); the names, limits and layouts they build
// on are in small_m_config.cpp.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/small_m/small_m_config.h"
#include "core/cuda_check.h"  // FP8GEMM_REQUIRE

namespace fp8gemm::small_m {

namespace {

// Weights of at most 40 MB (the whole slice fits the L2): where the candidates for small weights
// (L2 lookahead, pdl=2 and early=4 twins, two K blocks a stage for fitted rows) are offered.
bool small_weights(const Problem& p) { return p.n * p.k * p.batch <= (int64_t(40) << 20); }

// Split-K that brings the warps in flight close to what the SMs hold (~16 warps per SM at
// <= 128 registers), without giving a warp less than one load batch of K.
int fill_splitk(const Problem& p, const Config& c, int sm_count) {
  const int64_t blocks = (p.n / 16 + c.row_tiles() - 1) / c.row_tiles() * p.batch;
  const int64_t target_warps = int64_t(sm_count) * 16;
  const int64_t have = blocks * c.warps;
  int64_t s = (target_warps + have / 2) / have;  // nearest
  const int64_t chunks = (p.k + kChunkK - 1) / kChunkK;
  s = std::min<int64_t>(s, chunks / (int64_t(c.warps) * c.stages));
  return int(std::clamp<int64_t>(s, 1, kMaxSplitK));
}

// v3: split-K that gives the grid at least `target` blocks (rounded up), keeping >= 4 K blocks
// (512 bytes of K per row) per split.
int wgmma_fill_splitk(const Problem& p, int rows, int64_t target) {
  const int64_t tiles = (p.n + rows - 1) / rows * p.batch;
  int64_t s = (target + tiles - 1) / tiles;
  const int64_t kblocks = wgmma_kblocks(p);
  s = std::min<int64_t>(s, std::max<int64_t>(1, kblocks / 4));
  return int(std::clamp<int64_t>(s, 1, kMaxSplitK));
}

// v3: the deepest ring, up to 16 stages of `kblocks` K blocks, with which `occ` blocks fit one
// SM's shared memory (228 KB; per block ~1 KB reserved by the system, `static_bytes` of barriers,
// up to 1 KB of alignment and `extra_bytes` beside the ring); 0 if < 4.
int wgmma_ring_stages(const Problem& p, int rows, int occ, int64_t static_bytes, int64_t extra_bytes,
                      bool cp_weights = false, int kblocks = 1) {
  const WgmmaStageLayout l = wgmma_stage_layout(p.m, rows, cp_weights);
  const int64_t per_block = std::min<int64_t>(kSmSharedBytes / occ - 1024 - static_bytes, int64_t(kWgmmaMaxSharedBytes)) -
                            1024 - extra_bytes - l.tail_bytes;
  const int64_t stage = int64_t(l.stage_bytes) * kblocks + l.stage_pad_bytes;
  const int64_t st = std::min<int64_t>(kWgmmaMaxStages, per_block / stage);
  return st >= 4 ? int(st) : 0;
}

// v3 one-shot kernels: 512 bytes of barriers per block (two arrays of kWgmmaMaxRingStages);
// rings of at most 16 stages (deeper ones run only when named), of `kblocks` K blocks each.
int wgmma_stages_for(const Problem& p, int rows, int occ, bool cp_weights = false, int kblocks = 1) {
  return wgmma_ring_stages(p, rows, occ, 512, 0, cp_weights, kblocks);
}

// Fitted rows (33..127 but 64) that spread n over `per_sm` blocks per SM (rounded up: at most that
// many blocks); 0 where that row count is not a fitted one.
int fitted_rows_at(const Problem& p, int sm_count, int per_sm) {
  const int64_t per_batch = int64_t(per_sm) * sm_count / p.batch;
  if (per_batch < 1) return 0;
  const int64_t rows = (p.n + per_batch - 1) / per_batch;
  return fitted_rows(int(std::min<int64_t>(rows, 1024))) ? int(rows) : 0;
}

// aonce=1: the deepest ring (up to 16 two-pair stages) with which two blocks fit an SM (228 KB, ~1
// KB reserved per block); 0 if < 4.
int aonce_stages(const Problem& p) {
  for (int st = kWgmmaMaxStages; st >= 4; --st) {
    const Config c = with_aonce(with_kblocks(wgmma_config(32, 1, st, true, 0), 2));
    if (int64_t(shared_bytes(p, c)) + 1024 <= kSmSharedBytes / 2) return st;
  }
  return 0;
}

// v3 persistent: <= 512 bytes of barriers, and the split-K receive buffer beside the ring.
int wgmma_persist_stages(const Problem& p, int rows, int splitk, int occ) {
  const Config probe = wgmma_config(rows, splitk, 2, true, 0, 1);
  return wgmma_ring_stages(p, rows, occ, 512, int64_t(wgmma_reduce_bytes(p, probe)));
}

// v3 persistent: the grid holds min(units, persist * SMs / splitk) clusters and each walks
// units (row tile, batch) in steps of the grid; the fraction of the persist * SMs block slots
// that do useful work over the rounds (1 = every slot busy until the end).
double wgmma_persist_utilization(const Problem& p, int rows, int splitk, int persist, int sm_count) {
  const int64_t units = (p.n + rows - 1) / rows * p.batch;
  const int64_t grid = std::min<int64_t>(units, std::max<int64_t>(1, int64_t(persist) * sm_count / splitk));
  const int64_t rounds = (units + grid - 1) / grid;
  return double(units * splitk) / double(rounds * std::max<int64_t>(int64_t(persist) * sm_count, splitk));
}

// v3 persistent: the splits (1..8, >= 4 K blocks each) ordered by utilization, best first.
std::vector<int> wgmma_persist_splits(const Problem& p, int rows, int persist, int sm_count) {
  const int64_t kblocks = wgmma_kblocks(p);
  std::vector<int> s;
  for (int sk = 1; sk <= kMaxSplitK && (sk == 1 || sk * 4 <= kblocks); ++sk) s.push_back(sk);
  std::stable_sort(s.begin(), s.end(), [&](int a, int b) {
    return wgmma_persist_utilization(p, rows, a, persist, sm_count) >
           wgmma_persist_utilization(p, rows, b, persist, sm_count) + 1e-9;
  });
  return s;
}

// The v2 rule (any architecture with FP8 conversion).
Config v2_default_config(const Problem& p, int sm_count) {
  // Measured on the H200 (docs/perf/small_m.md, v2 bench over the DESIGN suite, m 1..32): at
  // m <= 8 one row tile per block, 2-chunk batches, 8 warps and PDL was the most frequent best
  // (geomean regret 1.06 against the best tactic per point); at m > 8 the activation conversion
  // dominates and two row tiles per block with 1-chunk batches share it (regret 1.06-1.10).
  // Split-K only to fill the SMs.
  Config c;
  const int64_t chunks = (p.k + kChunkK - 1) / kChunkK;
  if (p.m <= 8) {
    c.rows = 16;
    c.stages = 2;
    c.pdl = true;
  } else {
    c.rows = 32;
    c.stages = 1;
    c.pdl = false;
  }
  // A block's warps split its K range; a warp without a whole batch of K would idle.
  c.warps = 8;
  while (c.warps > 1 && (shared_bytes(p, c) > 48 * 1024 || int64_t(c.warps) * c.stages > chunks)) c.warps /= 2;
  c.splitk = fill_splitk(p, c, sm_count);
  return c;
}

// The v3 rule (sm_90): 64-row blocks, the deepest ring with which two blocks share an SM,
// split-K up to about one block per SM, PDL on (docs/perf/small_m.md, Version 3).
Config v3_default_config(const Problem& p, int sm_count) {
  const int rows = 64;
  return wgmma_config(rows, wgmma_fill_splitk(p, rows, sm_count), std::max(4, wgmma_stages_for(p, rows, 2)), true, 0);
}

}  // namespace

Config default_config(const Problem& p, int sm_count, int cc) {
  FP8GEMM_REQUIRE(sm_count > 0, kInternal, "small_m: sm_count must be known");
  Config c = v2_default_config(p, sm_count);
  if (cc == 90) {
    // Measured on the H200 (docs/perf/small_m.md, Version 3): v3 wins wherever K is longer
    // than 1 KB; at k <= 1024 (llama70b_tp8.o, k = 1024) the v2 kernel with 1-chunk batches and
    // PDL was faster at every M (3.8 us against 4.3 for the best v3 tactic at M = 1).
    if (p.k > 1024) {
      const Config v3 = v3_default_config(p, sm_count);
      if (can_implement(p, v3, cc)) return v3;
    } else {
      // k <= 1024: 64-row tiles, no split, the ring of the persistent kernel (room for the next
      // kernel's block), cp.async weights, one-shot. The persistent kernel itself was the default
      // (llama70b_tp8.o, docs/perf/small_m.md Version 4: 2.9-3.8 us at M = 1..32 against 3.7-3.9
      // for v2) until its cp.async twin beat it: H200 session 20, the whole acceptance, at all 7
      // suite points where both ran (1.4-15% faster), and by 1.16x timed again head to head at
      // M=32, where a tune had taken the persistent kernel on a tie (as the first small_m candidate).
      if (const int st = wgmma_persist_stages(p, 64, 1, 2); st > 0) {
        const Config one_shot = with_cp_weights(wgmma_config(64, 1, st, true, 0));
        if (can_implement(p, one_shot, cc)) return one_shot;
        const Config v4 = wgmma_config(64, 1, st, true, 0, 1);
        if (can_implement(p, v4, cc)) return v4;
      }
      c.rows = p.m <= 8 ? 16 : 32;
      c.stages = 1;
      c.warps = 8;
      c.pdl = true;
      c.splitk = fill_splitk(p, c, sm_count);
      if (!can_implement(p, c, cc)) c = v2_default_config(p, sm_count);
    }
  }
  const Verdict v = can_implement(p, c, cc);
  FP8GEMM_REQUIRE(v.ok, kUnsupported, "small_m cannot run ", p, ": ", v.reason);
  return c;
}

namespace {

// The cp.async-weight candidates (sm_90), from the v3 TMA candidates offered so far (`tma`, the
// default first), in the order they are offered; the caller drops what cannot run or repeats.
// - Twins of the split-K one-shot PDL ones, at most 8: the first H200 run of this path
//   (small_m_fixed_cost --set s6a, docs/perf/small_m.md Session 5) won 6 of 7 shapes with
//   split-K >= 2 and lost without it.
// - Twins of the split-1 ones; at about one block per SM (split-K of floor or ceil(SMs / row
//   tiles), rings for 1 or 2 blocks per SM); and the split that fills 2, 3 or 4 blocks per SM in
//   one wave (rounded down, where the TMA rule rounds up into a second wave). Session 8, H200,
//   M <= 16 over the suite: the first two made cp.async the best small_m tactic at 72 of 115
//   points (+3.2% geomean; >= 64 MB weights: median HBM fraction 0.85 -> 0.91), the one-wave
//   splits added 0.15% (docs/perf/small_m.md, Session 8).
std::vector<Config> cp_weight_candidates(const Problem& p, int sm_count, const std::vector<Config>& tma) {
  const auto one_shot_pdl = [](const Config& c) {
    return c.wgmma && c.persist == 0 && c.l2pf == 0 && c.pdl && !c.cp_weights && !c.reg_weights && !c.late_trigger;
  };
  std::vector<Config> out;
  constexpr size_t kCpTwins = 8;
  for (const Config& c : tma)
    if (one_shot_pdl(c) && c.splitk >= 2 && out.size() < kCpTwins) out.push_back(with_cp_weights(c));
  for (const Config& c : tma)
    if (one_shot_pdl(c) && c.splitk == 1) out.push_back(with_cp_weights(c));
  for (int rows : {64, 128}) {
    const int64_t tiles = (p.n + rows - 1) / rows * p.batch;
    for (int64_t per_sm : {int64_t(sm_count) / tiles, (int64_t(sm_count) + tiles - 1) / tiles})
      for (int occ : {1, 2})
        if (const int st = wgmma_stages_for(p, rows, occ); st > 0)
          out.push_back(with_cp_weights(wgmma_config(rows, wgmma_fill_splitk(p, rows, per_sm * tiles), st, true, 0)));
    for (int occ : {2, 3, 4})
      if (const int64_t per_wave = int64_t(occ) * sm_count / tiles; per_wave >= 1)
        if (const int st = wgmma_stages_for(p, rows, occ); st > 0)
          out.push_back(with_cp_weights(wgmma_config(rows, wgmma_fill_splitk(p, rows, per_wave * tiles), st, true, 0)));
  }
  return out;
}

}  // namespace

// Stream-K configs worth timing (sm_90): 64- and 128-row blocks, 1 or 2 blocks per SM, each with
// the deepest ring that fits that many blocks and with the one that leaves room for one more (the
// next kernel's block, which then streams its first weights while this one ends). Not offered by
// candidate_configs: on the H200 (session 9, docs/perf/small_m.md) they were the best small_m
// tactic at no suite point at M <= 16; they run when named.
std::vector<Config> streamk_candidates(const Problem& p) {
  std::vector<Config> out;
  for (int rows : {64, 128})
    for (int per_sm : {1, 2})
      for (int room : {0, 1})
        if (const int st = wgmma_stages_for(p, rows, per_sm + room); st > 0)
          out.push_back(streamk_config(rows, st, true, per_sm));
  return out;
}

std::vector<Config> candidate_configs(const Problem& p, int sm_count, int cc) {
  std::vector<Config> out{default_config(p, sm_count, cc)};
  const auto add = [&](Config c) {
    if (!can_implement(p, c, cc)) return;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  if (cc == 90) {
    // v3: 64- and 128-row blocks, rings as deep as 1, 2, 3 or 4 blocks per SM allow, split-K to
    // about one block per SM or to every block slot, PDL on; a few PDL-off and L2-prefetch ones.
    // (4 blocks per SM: the first v4 measurement had llama8b.o fastest with the ring that leaves
    // the most room to the next kernel's blocks.)
    for (int rows : {64, 128})
      for (int occ : {1, 2, 3, 4}) {
        const int stages = wgmma_stages_for(p, rows, occ);
        if (stages == 0) continue;
        for (int64_t target : {int64_t(sm_count), int64_t(sm_count) * 2, int64_t(sm_count) * occ})
          add(wgmma_config(rows, wgmma_fill_splitk(p, rows, target), stages, true, 0));
      }
    for (const Config& c : cp_weight_candidates(p, sm_count, out)) add(c);
    // rows=32 (K pairs, M <= 16): the split that gives each SM at most one block in one wave (none
    // where ceil(n/32) row tiles reach the SMs), rings for 1, 2 and 3 blocks per SM, TMA and
    // cp.async weights. Why (H200, session 13, docs/perf/small_m.md): at equal bytes per block a
    // grid of ~128 blocks without split-K ran 10-18% faster than with split-K 2 on 16-22 MB
    // weights; the 3-per-SM ring was the best tactic at 30 of 115 suite points when timed by name
    // (llama70b.qkv 0.87 -> 0.90-0.91 of the HBM floor with cp.async weights).
    if (p.m <= 16) {
      const int64_t tiles = (p.n + 31) / 32 * p.batch;
      const int split = wgmma_fill_splitk(p, 32, int64_t(sm_count) / tiles * tiles);
      for (int occ : {1, 2, 3})
        if (const int st = wgmma_stages_for(p, 32, occ); st > 0) {
          add(wgmma_config(32, split, st, true, 0));
          add(with_cp_weights(wgmma_config(32, split, st, true, 0)));
        }
      // Two pairs a stage (kblocks=2, TMA weights) where K >= 8192 and the grid is one wave of one
      // block per SM, with the deepest ring one block fits and two stages less. H200, session 28
      // (docs/perf/small_m.md): 4096 x 21504 in 21.41 us at M=1 (the best listed tactic 21.66),
      // 4096 x 8192 in 9.29 (9.59); at K <= 5376 they lost (4096 x 4096 5.70 against 5.68), with
      // cp.async weights they were slower, and in two waves far slower (8192 x 8192, 256 blocks:
      // 18.21 against 15.39).
      if (p.k >= 8192 && tiles * split <= sm_count)
        if (const int st = wgmma_stages_for(p, 32, 1, false, 2); st > 0)
          for (int less : {0, 2})
            if (st - less >= 4) add(with_kblocks(wgmma_config(32, split, st - less, true, 0), 2));
    }
    // The activation row once, whole (aonce=1: m = 1, weights <= 40 MB): two K pairs a stage and
    // the deepest ring two blocks per SM fit (its pdl=2 twin comes below). H200, session 33
    // (docs/perf/small_m.md): nemotron3super.qkv 6.10 -> 5.78 us at M=1 (0.726 of the floor),
    // shared_up 6.60 -> 6.21, llama8b.qkv 7.06 -> 6.82, llama8b.o 5.65 -> 5.60; slower at nano9b.qkv
    // (1.6%), nemoH8b.out_proj and the 8-10 MB weights, where the tuner keeps what it had.
    if (p.m == 1 && small_weights(p))
      if (const int st = aonce_stages(p); st > 0)
        add(with_aonce(with_kblocks(wgmma_config(32, 1, st, true, 0), 2)));
    // Fitted rows: the rows per block that make the grid as many blocks as 2, 3 or 4 per SM
    // (rounded up: at most that many), where that is 33..127 rows but 64; no split-K; the ring
    // for that occupancy; TMA and cp.async. Why these (H200, session 14, docs/perf/small_m.md):
    // of 1..4 blocks per SM with rings for that occupancy and one more, only 2-3 blocks per SM with
    // the ring for that occupancy ever won; one block per SM (nano9b.down: 132 blocks of 34 rows)
    // never did. With cp.async on the whole tile they are the best small_m tactic at 20 of the 30
    // suite points at M <= 16 where they are offered, by up to 9.5% (nemoH8b.in_proj: 47 rows).
    for (int per_sm = 2; per_sm <= 4; ++per_sm) {
      const int rows = fitted_rows_at(p, sm_count, per_sm);
      if (rows == 0) continue;
      if (const int st = wgmma_stages_for(p, rows, per_sm); st > 0) add(wgmma_config(rows, 1, st, true, 0));
      if (const int st = wgmma_stages_for(p, rows, per_sm, true); st > 0)
        add(with_cp_weights(wgmma_config(rows, 1, st, true, 0)));
    }
    // Fitted rows at one block per SM (the rows that spread n over the SMs) with four K blocks per
    // stage (kblocks=4, TMA weights) and the deepest ring one block fits. Why (H200, session 15,
    // docs/perf/small_m.md): with one K block per stage such a block streams at ~25 GB/s, bound by
    // its single producer lane's work per stage; four per stage took nano9b.down (132 blocks of 34
    // rows) from 22.1 to 18.5 us, past the best other tactic (19.6), and llama70b.o (131 of 63) to
    // the K pairs' 16.4. Rings deeper than 16 stages of one K block (kWgmmaMaxRingStages) won
    // nowhere (session 15 call 2) and run only when named.
    // With cp.async weights (session 16, call 2, H200): four K blocks a stage with the deepest ring
    // and one stage less (the better of the two changed with the shape and M) for one warpgroup;
    // two K blocks a stage for two (four leave them < 4 stages). llama70b.o 16.0 us against 16.5
    // for the K pairs, llama70b.qkv (78 rows) 19.8 against 21.2, nano9b.qkv 8.4 against 8.5.
    if (const int rows = fitted_rows_at(p, sm_count, 1); rows > 0 && wgmma_kblocks(p) >= 2 * 4) {
      if (const int st = wgmma_stages_for(p, rows, 1, false, 4); st > 0)
        add(with_kblocks(wgmma_config(rows, 1, st, true, 0), 4));
      const int cp_kblocks = wgmma_warpgroups(rows) == 1 ? 4 : 2;
      if (const int st = wgmma_stages_for(p, rows, 1, true, cp_kblocks); st > 0) {
        add(with_kblocks(with_cp_weights(wgmma_config(rows, 1, st, true, 0)), cp_kblocks));
        if (cp_kblocks == 4 && st > 4) add(with_kblocks(with_cp_weights(wgmma_config(rows, 1, st - 1, true, 0)), 4));
      }
      // Weights <= 40 MB: two K blocks a stage (TMA) with the ring two blocks per SM fit and one
      // stage less, so that the next kernel's block fits beside this one (their pdl=2 and early=4
      // twins come below). H200, session 28 (docs/perf/small_m.md): nemotron3super.qkv (132
      // blocks of 35 rows) at M=1 in 5.85 us with 8 stages and early=4, the best listed 6.10.
      if (small_weights(p))
        if (const int st = wgmma_stages_for(p, rows, 2, false, 2); st > 0)
          for (int less : {0, 1})
            if (st - less >= 4) add(with_kblocks(wgmma_config(rows, 1, st - less, true, 0), 2));
    }
    // Weights in registers (",wload=reg") are not offered: on the H200 they lost to the best
    // other small_m tactic at every suite point at M = 1 and 16 (docs/perf/small_m.md, Session 6).
    // They run when named.
    if (const int st3 = wgmma_stages_for(p, 64, 3); st3 > 0) {
      add(wgmma_config(64, wgmma_fill_splitk(p, 64, sm_count), st3, false, 0));
      add(wgmma_config(64, wgmma_fill_splitk(p, 64, int64_t(sm_count) * 3), st3, false, 0));
    }
    // Persistent v3: 1 or 2 blocks per SM with a ring that leaves one block's room for the next
    // kernel (PDL: its blocks become resident and stream their first weights while this one
    // finishes). Measured on the H200 (docs/perf/small_m.md, Version 4): without split-K it won
    // llama70b.gate_up and llama70b_tp8.o; with split-K it is 1.5-2.5x slower as soon as a
    // cluster walks more than one unit (not understood), so split-K only where one round of
    // clusters covers every unit, and only at 1 block per SM (2 never won with split-K).
    for (int rows : {64, 128})
      for (int persist : {1, 2}) {
        const int64_t units = (p.n + rows - 1) / rows * p.batch;
        const std::vector<int> splits = wgmma_persist_splits(p, rows, persist, sm_count);
        int added = 0;
        for (int sk : splits) {
          if (added == 2) break;
          if (sk > 1 && (persist > 1 || int64_t(persist) * sm_count / sk < units)) continue;
          if (const int st = wgmma_persist_stages(p, rows, sk, persist + 1); st > 0) {
            add(wgmma_config(rows, sk, st, true, 0, persist));
            ++added;
          }
        }
      }
    if (small_weights(p)) {
      if (const int st = wgmma_stages_for(p, 128, 3); st > 0)
        add(wgmma_config(128, wgmma_fill_splitk(p, 128, int64_t(sm_count) * 2), st, true, 64));
      add(wgmma_config(64, wgmma_fill_splitk(p, 64, sm_count), std::max(4, wgmma_stages_for(p, 64, 2)), true, 8));
      // cp.async weights at split-K 2 with the two-blocks-per-SM ring: the fastest llama8b.o
      // configuration of the tool's first cp run (64,2,12: 6.16 us, the library's best 6.81),
      // which the split rule above (about one block per SM or per slot) does not reach.
      if (const int st = wgmma_stages_for(p, 64, 2); st > 0) add(with_cp_weights(wgmma_config(64, 2, st, true, 0)));
      // Late-trigger twins (pdl=2) of the one-shot PDL candidates: on the H200 (session 8) the
      // best small_m tactic got 2.5-3.5% faster with it at 8 of 40 points of 16-33.6 MB weights
      // (nano9b.qkv, llama8b.qkv, llama8b.o, nemotron3super.shared_down) and 1.5% slower in
      // geomean on weights >= 64 MB, where it is not offered.
      // Twins of every candidate offered so far (collected first: add grows `out`); the ones the
      // field's rules refuse (config_exists) are dropped by add.
      const auto add_twins = [&](auto twin_of) {
        std::vector<Config> twins;
        for (const Config& c : out) twins.push_back(twin_of(c));
        for (const Config& c : twins) add(c);
      };
      add_twins([](const Config& c) { return with_late_trigger(c); });
      // Twins with early=4 of the TMA one-shot PDL candidates (pdl=1 and 2) whose ring is deeper:
      // on the H200 (session 10, docs/perf/small_m.md) they made the best small_m tactic 2-5%
      // faster at about half of the 16-34 MB points (+0.6% geomean over the suite at M <= 16);
      // the same cap on the cp.async kernel gained nothing, and on weights > 40 MB it lost.
      add_twins([](const Config& c) { return c.early == 0 && c.stages > kEarlyStages ? with_early(c, kEarlyStages) : c; });
    }
  }
  // v2: its default (with and without PDL) and, where v3 cannot run, the other shapes of block.
  const Config v2 = v2_default_config(p, sm_count);
  add(v2);
  Config other_pdl = v2;
  other_pdl.pdl = !other_pdl.pdl;
  add(other_pdl);
  for (int rows : {16, 32, 64})
    for (int stages : {1, 2, 4})
      for (int warps : {4, 8}) {
        Config c;
        c.rows = rows;
        c.stages = stages;
        c.warps = warps;
        if (!config_exists(c)) continue;
        // On sm_90 only the v2 shapes that still won a point against v3 (docs/perf/small_m.md).
        if (cc == 90 && !(warps == 8 && ((rows == 16 && stages <= 2) || (rows == 32 && stages == 1)))) continue;
        c.splitk = fill_splitk(p, c, sm_count);
        add(c);
        c.pdl = !c.pdl;
        if (cc == 90) add(c);
      }
  return out;
}

}  // namespace fp8gemm::small_m
