// The TMA ring (Family::kTmaRing: the plain "wgmma,..." tactics, with K pairs, fitted rows, early=E
// and kblocks=B); included by small_m_wgmma.cuh after its device helpers, whose opening comment has
// the design. The cp.async ring, activation-once and persistent kernels are its siblings.
#pragma once

namespace fp8gemm::small_m::sm90 {

// kKPair: rows=32 blocks (two K blocks per stage, W = 1; RingStage, combine_k_pair); NP is then the
// MMA's N, twice the activation rows of one K block.
// P: Params, or BiasParams for the kernels that add a bias (kAddsBias).
template <class WT, class AT, int W, int NP, bool kKPair = false, class P = Params>
__global__ void __launch_bounds__(kThreads<W>, (W == 1 ? 4 : 2))
    small_m_wgmma_kernel(const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap,
                         const P p) {
#ifdef FP8GEMM_SMALL_M_SM90A
  using St = RingStage<W, NP>;
  constexpr int kKB = St::kKB, kWBytes = St::kWBytes;
  constexpr int kAcc = NP / 2;  // f32 accumulators per consumer thread
  static_assert(!kKPair || W == 1, "K pairs fill one warpgroup");
  constexpr int kNA = kKPair ? NP / 2 : NP;  // activation rows per K block (the amap box)
  constexpr int kHalfW = kWBytes / 2;        // K pairs: where a stage's second weight box starts
  // The stage layout (RingStage's, or with fitted rows a shorter weight tile; the wmap box is
  // p.rows rows, and so is a block).
  const int stage_bytes = p.stage_bytes, stage_tx = p.stage_tx, w_tile = p.w_bytes;
  // kblocks=B: B units per stage (K blocks, or K pairs: 1 or 2), kb_bytes apart.
  const int skb = p.stage_kblocks, kb_bytes = p.kb_bytes;

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
  const int nst = stage_count<kKPair>(nkb, skb);

  start_block(full_bar, empty_bar, stages, 1, 4 * W, !p.late_trigger);  // full: the producer's expect_tx arrival

  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;

  if (warp == 4 * W) {
    // Producer.
    if (lane == 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&wmap)) : "memory");
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&amap)) : "memory");
      uint64_t pol_w, pol_a;
      stream_policies(pol_w, pol_a);
      // Stage i's weights and activations: units (K blocks, or K pairs: a block and the next)
      // j < KB, kb_bytes apart, from K block stage_kblock (past the split's range: zeros).
      // One producer per stage size (KB = kblocks: 1, 2 or 4; K pairs 1 or 2), with its copies
      // unrolled: the lane issues every stage alone, and its per-stage work bounds blocks with
      // small stages.
      const auto produce = [&](auto kb_constant) {
        constexpr int KB = decltype(kb_constant)::value;
        const auto kblock_at = [&](int i, int j) { return stage_kblock<kKPair, KB>(kb0, nkb, i, j, p.kblocks); };
        const auto load_w = [&](int i, uint8_t* st, uint64_t* bar) {
#pragma unroll
          for (int j = 0; j < KB; ++j) {
            const int kb = kblock_at(i, j);
            tma_load(st + j * kb_bytes, &wmap, bar, kb * kKB, row0, batch, pol_w);
            if constexpr (kKPair) tma_load(st + j * kb_bytes + kHalfW, &wmap, bar, (kb + 1) * kKB, row0, batch, pol_w);
          }
        };
        const auto load_a = [&](int i, uint8_t* st, uint64_t* bar) {
#pragma unroll
          for (int j = 0; j < KB; ++j)
            tma_stage_activations<kNA, kKPair>(st + j * kb_bytes + w_tile, &amap, bar, kblock_at(i, j), batch, pol_a);
        };
        const auto expect = [&](uint64_t* bar) { mbar_arrive_expect_tx(bar, KB * stage_tx); };
        // early=E: only the first E stages before the wait (the rest right after it), so that the
        // next kernel's blocks, which start as this one's leave, do not all ask for a whole ring
        // each just when the current kernel's last loads and this one's activations are due.
        const int pre = min(stages, nst);
        const int before_wait = p.early > 0 ? min(pre, p.early) : pre;
        for (int i = 0; i < before_wait; ++i) {
          expect(&full_bar[i]);
          load_w(i, ring + i * stage_bytes, &full_bar[i]);
        }
        // L2 prefetch (Params::l2pf, 0 in every tactic): the K blocks up to l2pf beyond the ring
        // are requested into L2 before the wait, and one more with each later stage, K block
        // kb0 + pf (at l2pf = 0: kb0 + i). Not with K pairs.
        int pf = pre;
        for (const int pf_end = kKPair ? 0 : min(nkb, pre + p.l2pf); pf < pf_end; ++pf)
          tma_prefetch_l2(&wmap, (kb0 + pf) * kKB, row0, batch);
        // The activations may be written by the previous kernel (programmatic dependent launch).
        asm volatile("griddepcontrol.wait;\n" ::: "memory");
        // The activations first (they are what every stage now waits for), each stage's expected
        // bytes counted before any of its copies can land.
        for (int i = before_wait; i < pre; ++i) expect(&full_bar[i]);
        for (int i = 0; i < pre; ++i) load_a(i, ring + i * stage_bytes, &full_bar[i]);
        for (int i = before_wait; i < pre; ++i) load_w(i, ring + i * stage_bytes, &full_bar[i]);
        int s = pre == stages ? 0 : pre;
        uint32_t phase = 0;  // completions of empty_bar[s] seen so far, mod 2
        for (int i = pre; i < nst; ++i) {
          mbar_wait(&empty_bar[s], phase);
          expect(&full_bar[s]);
          load_w(i, ring + s * stage_bytes, &full_bar[s]);
          load_a(i, ring + s * stage_bytes, &full_bar[s]);
          if (!kKPair && pf < nkb && pf <= i + p.l2pf) tma_prefetch_l2(&wmap, (kb0 + pf++) * kKB, row0, batch);
          if (++s == stages) {
            s = 0;
            phase ^= 1;
          }
        }
      };
      // K pairs take 1 or 2 pairs a stage (config_exists): no four-unit producer is built for them.
      if (!kKPair && skb == 4)
        produce(std::integral_constant<int, kKPair ? 1 : 4>{});
      else if (skb == 2)
        produce(std::integral_constant<int, 2>{});
      else
        produce(std::integral_constant<int, 1>{});
    }
  } else {
    // Consumers: warpgroup wg multiplies weight rows [64 wg, 64 wg + 64) of each stage.
    const int wg = warp >> 2;
    int s = 0;
    uint32_t phase = 0;
    int prev = -1;
    // One branch-free consumer loop per stage size (kblocks=1, 2, 4; K pairs 1, 2).
    if (!kKPair && skb == 4)
      consume_k_blocks<WT, AT, NP, St, false, kKPair ? 1 : 4>(acc, nst, ring, full_bar, empty_bar, stages, wg, lane, s,
                                                              phase, prev, stage_bytes, w_tile, kb_bytes);
    else if (skb == 2)
      consume_k_blocks<WT, AT, NP, St, false, 2>(acc, nst, ring, full_bar, empty_bar, stages, wg, lane, s, phase, prev,
                                                 stage_bytes, w_tile, kb_bytes);
    else
      consume_k_blocks<WT, AT, NP, St>(acc, nst, ring, full_bar, empty_bar, stages, wg, lane, s, phase, prev,
                                       stage_bytes, w_tile);
  }
  release_dependents_late(p);

  finish_one_shot<W, NP, kThreads<W>, kKPair>(p, acc, ring, row0, batch, warp < 4 * W);
#else
  __trap();  // wgmma and this kernel's TMA path exist on sm_90a only (can_implement refuses others)
#endif
}

}  // namespace fp8gemm::small_m::sm90
