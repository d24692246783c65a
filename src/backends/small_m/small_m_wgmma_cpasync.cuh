// The cp.async ring (Family::kCpAsyncRing, ",wload=cp"); included by small_m_wgmma.cuh after its
// device helpers.
//
// Why: 16-byte loads in the kernel's own address order can stream the weights faster than TMA,
// most of all where K is split.
//
// Same ring, stage layout, consumers (consume_k_blocks) and epilogue (finish_block) as the TMA
// ring. What differs is the producer: a whole warpgroup (128 threads) instead of
// one lane. Thread pt copies 16-byte chunk pt % 8 of weight rows pt / 8 + 16 j (j < 4 W) of every
// stage with cp.async.cg into the 128-byte-swizzled K-major layout TMA would have written (chunk
// c of row r at r * 128 + ((c ^ (r % 8)) * 16) of the 1024-byte-aligned tile), so the wgmma
// descriptors do not change. Rows at or beyond n and chunks at or beyond k are zero-filled
// through src-size 0 (k % 16 == 0, so a chunk is either wholly inside or wholly outside). Each
// producer thread then arrives on the stage's full barrier with cp.async.mbarrier.arrive.noinc
// (it fires once that thread's copies have landed); thread 0 of the producers still brings the
// stage's activation tile by TMA (zero-filled beyond m) and adds the one expect_tx arrival. The
// full barrier therefore counts 128 + 1 arrivals. Consumers put a proxy fence between the barrier
// and the wgmma (cp.async writes are generic-proxy, wgmma reads async-proxy).
#pragma once

namespace fp8gemm::small_m::sm90 {

#ifdef FP8GEMM_SMALL_M_SM90A

// cp_async_16_zfill and cp_async_mbar_arrive_noinc: src/core/sm90/cp_async.cuh.

// A producer thread's weight rows, fixed for the whole K loop: the address of its first one (row
// r0 of the block, at K offset 0), the distance to its next (16 rows down), and how many of them
// (rows r0 + 16 j, j < valid) the block owns: inside n and inside its p.rows (64 W, 32 with K
// pairs, fewer with fitted rows). Computed once, so that a stage's copy is an add and a cp.async:
// the address arithmetic redone per copy (64-bit multiplies, predicates) makes the stage loop
// half as long again, and slower.
struct CpRows {
  const uint8_t* base;
  int64_t stride;
  int valid;
};
__device__ __forceinline__ CpRows cp_rows(const Params& p, const uint8_t* wb, int row0, int r0) {
  const int limit = min(p.n - row0, p.rows);
  CpRows c;
  c.base = wb + int64_t(row0 + r0) * p.k;
  c.stride = 16 * p.k;
  c.valid = limit > r0 ? (limit - r0 + 15) / 16 : 0;
  return c;
}

// One producer thread's share of one K block of a weight stage: 16-byte chunk `ko` (bytes into
// K, this thread's chunk column included) of its rows (CpRows), into the 128-byte-swizzled tile
// at shared address `st` (this thread's first row and swizzled column included; its rows are
// 16 x 128 bytes apart). Rows the block does not own and chunks at or beyond k are zero-filled
// (fitted rows: every row of the tile, 64 W or a compact 48 / 80, is written; RingLayout);
// the caller then arrives on the stage's full barrier (cp_async_mbar_arrive_noinc). Every copy is
// issued, back to back: skipping the rows a fitted block does not own (a predicate per copy), or
// an early exit (every copy one branch apart), makes the copies slower.
// kKPair (rows=32): stage rows 32..63 are the block's 32 weight rows again, one K block further.
template <int kRows, bool kKPair = false>
__device__ __forceinline__ void cp_weight_kblock(const Params& p, const CpRows& rows, int64_t ko, uint32_t st,
                                                 uint64_t policy) {
#pragma unroll
  for (int j = 0; j < kRows; ++j) {
    const int jr = kKPair ? (j & 1) : j;  // which of the thread's weight rows
    const int64_t k = kKPair ? ko + (j >> 1) * 128 : ko;
    const bool in = jr < rows.valid && k < p.k;
    const uint8_t* src = in ? rows.base + jr * rows.stride + k : p.w;  // any valid address
    cp_async_16_zfill(st + uint32_t(j * 16 * 128), src, in ? 16u : 0u, policy);
  }
}

// A producer thread's place in a weight stage: its index among the producers, its 16-byte chunk
// column of each 128-byte row segment, its first row (its rows are r0 + 16 j, all with the same
// r % 8) and that column's offset in the 128-byte swizzle.
struct CpProducerLane {
  int pt, chunk, r0;
  uint32_t swz;
};
template <int W>
__device__ __forceinline__ CpProducerLane cp_producer_lane() {
  constexpr int kChunks = 128 / 16;  // 16-byte chunks per 128-byte row segment of a stage
  CpProducerLane l;
  l.pt = int(threadIdx.x) - W * 128;
  l.chunk = l.pt % kChunks;
  l.r0 = l.pt / kChunks;
  l.swz = uint32_t((l.chunk ^ (l.r0 & 7)) << 4);
  return l;
}

#endif  // FP8GEMM_SMALL_M_SM90A

// Block: W consumer warpgroups (warps 0 .. 4W-1), then one producer warpgroup.
constexpr int kCpProducers = kCpProducerThreads;
template <int W>
constexpr int kThreadsCp = block_threads(W, true);

// Occupancy hint as the TMA ring's (4 blocks per SM at 64 rows, 2 at 128): the candidates size
// rings for up to 4 blocks per SM, and the register cap this implies (64 / 85) leaves no spills.
// kKPair: rows=32 blocks (two K blocks per stage; see the TMA ring). Fitted rows (p.rows < 64 W)
// need nothing of their own: the producers copy the rows the block owns (CpRows) and zero-fill
// the others. kTileRows: the weight tile's rows, 64 W, or the compact 48 / 80 for fitted rows up
// to 48 / 65..80 (cp_compact_tile_rows, RingLayout): the wgmma still reads 64 W
// rows, those past the tile from the unit's activation tile and the next unit of the stage or,
// after the stage's last unit, its pad (kPad), so never a stage the producers may be writing.
// kKBlocks: kblocks=B, B K blocks per ring stage (K pairs: B pairs, 1 or 2), each laid out as a
// one-unit stage (RingStage) under one pair of barriers. A kernel per B: with a run-time count of
// K blocks the consumers wait for every wgmma, and a run-time dispatch between the three inside
// one kernel slows its one-K-block tactics.
template <class WT, class AT, int W, int NP, bool kKPair = false, int kKBlocks = 1, int kTileRows = 64 * W,
          class P = Params>
__global__ void __launch_bounds__(kThreadsCp<W>, (W == 1 ? 4 : 2))
    small_m_wgmma_cp_kernel(const __grid_constant__ CUtensorMap amap, const P p) {
#ifdef FP8GEMM_SMALL_M_SM90A
  using St = RingStage<W, NP>;  // the 64 W-row stage (kTileRows = 64 W; fitted rows zero-filled past p.rows)
  constexpr int kKB = St::kKB, kABytes = St::kABytes;
  constexpr int kWBytes = kTileRows * kKB, kStage = kWBytes + kABytes;  // one unit (K block or pair)
  // What the wgmma reads past a compact stage's last unit (RingLayout::stage_pad_bytes).
  constexpr int kPad = (64 * W - kTileRows) * kKB > kABytes ? (64 * W - kTileRows) * kKB - kABytes : 0;
  static_assert(kTileRows % 16 == 0 && kTileRows <= 64 * W, "a producer thread copies rows 16 apart");
  static_assert(kTileRows == 64 * W || (!kKPair && kTileRows > 64 * (W - 1)), "a compact tile holds rows of every warpgroup");
  static_assert(kStage % 1024 == 0 && kPad % 1024 == 0, "stage tiles must stay 1024-byte aligned");
  constexpr int kAcc = NP / 2;  // f32 accumulators per consumer thread
  constexpr int kRowsPerThread = kTileRows * (kKB / 16) / kCpProducers;  // 16-byte chunks per stage
  static_assert(kCpProducers % (kKB / 16) == 0, "a producer thread keeps one chunk column");
  static_assert(kKB == 128, "cp_weight_kblock writes 128-byte swizzled rows");
  static_assert(!kKPair || W == 1, "K pairs fill one warpgroup");
  constexpr int kNA = kKPair ? NP / 2 : NP;  // activation rows per K block (the amap box)

  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[kMaxRingStages];
  __shared__ __align__(8) uint64_t empty_bar[kMaxRingStages];
  uint8_t* ring = ring_base(smem_raw);

  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const int stages = p.stages;
  const int row0 = int(blockIdx.x) * p.rows;
  const int batch = int(blockIdx.z);
  int kb0, nkb;
  split_k_blocks(p, kb0, nkb);

  // full: each producer's cp.async arrival + the activation TMA's expect_tx
  start_block(full_bar, empty_bar, stages, kCpProducers + 1, 4 * W, !p.late_trigger);

  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;

  constexpr int KB = kKBlocks, kStride = KB * kStage + kPad;  // a ring stage: KB units (K blocks or pairs)
  static_assert(!kKPair || KB <= 2, "K pairs: one or two pairs a stage");
  const int nst = stage_count<kKPair>(nkb, KB);

  if (warp >= 4 * W) {
    // Producers. A warp covers 4 whole rows x 128 bytes per step: each row segment is one
    // 128-byte line, read by 8 consecutive lanes.
    const CpProducerLane prod = cp_producer_lane<W>();
    const int pt = prod.pt;
    uint64_t pol_w, pol_a;
    stream_policies(pol_w, pol_a);
    const CpRows rows = cp_rows(p, p.w + int64_t(batch) * p.n * p.k, row0, prod.r0);
    const uint32_t st0 = smem_addr(ring) + uint32_t(prod.r0 * 128) + prod.swz;  // this thread's first chunk
    const int64_t chunk_k = prod.chunk * 16;
    // The first K block of unit j of stage i (stage_kblock: past the split's range, zeros).
    const auto kblock_at = [&](int i, int j) { return stage_kblock<kKPair, KB>(kb0, nkb, i, j, p.kblocks); };
    const auto load_weights = [&](int i, int s) {
#pragma unroll
      for (int j = 0; j < KB; ++j)
        cp_weight_kblock<kRowsPerThread, kKPair>(p, rows, int64_t(kblock_at(i, j)) * kKB + chunk_k,
                                                 st0 + uint32_t(s * kStride + j * kStage), pol_w);
      cp_async_mbar_arrive_noinc(&full_bar[s]);
    };
    const auto load_activations = [&](int i, int s) {
      mbar_arrive_expect_tx(&full_bar[s], KB * kABytes);
#pragma unroll
      for (int j = 0; j < KB; ++j)
        tma_stage_activations<kNA, kKPair>(ring + s * kStride + j * kStage + kWBytes, &amap, &full_bar[s],
                                           kblock_at(i, j), batch, pol_a);
    };
    // The weights of the first `stages` stages do not depend on the previous kernel: request
    // them before griddepcontrol.wait (PDL), the activations after it.
    const int pre = min(stages, nst);
    for (int i = 0; i < pre; ++i) load_weights(i, i);
    if (pt == 0 && nst > 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&amap)) : "memory");
      asm volatile("griddepcontrol.wait;\n" ::: "memory");
      for (int i = 0; i < pre; ++i) load_activations(i, i);
    }
    int s = pre == stages ? 0 : pre;
    uint32_t phase = 0;  // completions of empty_bar[s] seen so far, mod 2
    for (int i = pre; i < nst; ++i) {
      mbar_wait(&empty_bar[s], phase);
      load_weights(i, s);
      if (pt == 0) load_activations(i, s);
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    }
  } else {
    // Consumers: warpgroup wg multiplies weight rows [64 wg, 64 wg + 64) of each stage.
    const int wg = warp >> 2;
    int s = 0;
    uint32_t phase = 0;
    int prev = -1;
    consume_k_blocks<WT, AT, NP, St, true, KB>(acc, nst, ring, full_bar, empty_bar, stages, wg, lane, s, phase, prev,
                                               kStride, kWBytes, kStage);
  }
  release_dependents_late(p);

  // Every cp.async has landed: the consumers saw each stage's full barrier, which needs them all.
  finish_one_shot<W, NP, kThreadsCp<W>, kKPair>(p, acc, ring, row0, batch, warp < 4 * W);
#else
  __trap();  // wgmma exists on sm_90a only (can_implement refuses other devices)
#endif
}

}  // namespace fp8gemm::small_m::sm90
