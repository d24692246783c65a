// The activation-once kernel (Family::kActivationOnce, ",aonce=1"; m = 1): K pairs, two a stage,
// with the activation row in shared memory once, whole; included by small_m_wgmma.cuh after its
// device helpers.
//
// Why: below m = 8 the in-stage activation tile pads the wgmma's N to 8 rows per K block, and it
// sits in every ring stage, so two blocks per SM hold at most 80 KB of weights. Here the ring holds
// weights only (two K pairs, 16 KB, a stage) and the block's activation row, the whole K, is copied
// once right after the wait (K bytes: 4 KB at K = 4096). A no-swizzle K-major B descriptor whose K
// step (LBO) is 16 bytes reads it as row 0 of each 16-byte chunk; its rows 1..7 read the next
// chunks, whose output columns are never stored. The pair's second K block is the second 8-row
// group, 8 chunks (128 bytes, SBO) on. The layout generalizes to m < 8 ([chunk][row][16 bytes],
// LBO 16 m), but copying it with 16-byte cp.async is slower there than the in-stage tiles, so
// m = 1 only. Past K, to the last pair's end, the buffer holds zeros (the weights there are zeros
// too, and garbage could be NaN).
#pragma once

namespace fp8gemm::small_m::sm90 {

// smem_desc_plain2 (the no-swizzle descriptor this kernel reads its activation row with):
// src/core/sm90/wgmma.cuh.

template <class WT, class AT, class P = Params>
__global__ void __launch_bounds__(kThreads<1>, 2)
    small_m_wgmma_aonce_kernel(const __grid_constant__ CUtensorMap wmap, const P p) {
#ifdef FP8GEMM_SMALL_M_SM90A
  constexpr int kUnit = 64 * 128;        // one K pair of the block's 32 rows (RingStage<1, *>::kWBytes)
  constexpr int kStageBytes = kAonceStageBytes;  // two pairs a stage (2 kUnit)
  constexpr int kHalfW = kUnit / 2;       // the pair's second K block
  constexpr int NP = 16;                  // K pairs at m <= 8: two K blocks' 8 columns
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* ring = smem_raw;
  const int stages = p.stages;
  uint8_t* act = ring + stages * kStageBytes;
  const int64_t act_bytes = aonce_act_bytes(p.k);
  uint64_t* full_bar = reinterpret_cast<uint64_t*>(act + act_bytes);  // stages, then empty, then act
  uint64_t* empty_bar = full_bar + stages;  // then the activation's barrier
  if ((smem_addr(ring) & 1023) != 0) __trap();  // sized without alignment slack

  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const int row0 = int(blockIdx.x) * p.rows;
  const int batch = int(blockIdx.z);
  const int nkb = p.kblocks;                  // splitk = 1
  const int npairs = (nkb + 1) / 2;
  const int nst = stage_count<true>(nkb, 2);  // two pairs a stage (the last may hold one)
  if (threadIdx.x == 0) mbar_init(empty_bar + stages, 1);  // made visible by start_block's fence and barrier
  start_block(full_bar, empty_bar, stages, 1, 4, !p.late_trigger);

  float acc[NP / 2];
#pragma unroll
  for (int i = 0; i < NP / 2; ++i) acc[i] = 0.f;

  if (warp == 4) {
    // Producer: weights only, never waiting for the previous kernel.
    if (lane == 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&wmap)) : "memory");
      uint64_t pol_w, pol_a;
      stream_policies(pol_w, pol_a);
      const auto load = [&](int i, int s) {
        mbar_arrive_expect_tx(&full_bar[s], uint32_t(2 * 2 * p.rows * 128));
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int kb = stage_kblock<true, 2>(0, nkb, i, j, p.kblocks);  // past the end: zeros
          uint8_t* st = ring + s * kStageBytes + j * kUnit;
          tma_load(st, &wmap, &full_bar[s], kb * kKBlockBytes, row0, batch, pol_w);
          tma_load(st + kHalfW, &wmap, &full_bar[s], (kb + 1) * kKBlockBytes, row0, batch, pol_w);
        }
      };
      const int pre = min(stages, nst);
      for (int i = 0; i < pre; ++i) load(i, i);
      int s = pre == stages ? 0 : pre;
      uint32_t phase = 0;
      for (int i = pre; i < nst; ++i) {
        mbar_wait(&empty_bar[s], phase);
        load(i, s);
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
    }
  } else {
    asm volatile("griddepcontrol.wait;\n" ::: "memory");  // the activations are the previous kernel's
    // The block's activation row (m = 1), whole: one bulk copy of K bytes (the TMA engine asks for
    // each line once), and zeros from K to the last pair's end and past it, which the wgmma reads
    // too.
    const uint32_t act_s = smem_addr(act);
    uint64_t* act_bar = empty_bar + stages;
    const int64_t padded = int64_t(npairs) * 256;  // the pairs' bytes of K
    for (int64_t e = p.k + 16 * int64_t(threadIdx.x); e < padded + 256; e += 16 * 128)
      *reinterpret_cast<uint4*>(act + e) = make_uint4(0, 0, 0, 0);
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the zeros (generic) -> wgmma
    if (threadIdx.x == 0) {
      mbar_arrive_expect_tx(act_bar, uint32_t(p.k));
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(act_s),
          "l"(p.a + int64_t(batch) * p.k), "r"(uint32_t(p.k)), "r"(smem_addr(act_bar))
          : "memory");
    }
    asm volatile("bar.sync 1, 128;\n" ::: "memory");  // the zeros are stored
    mbar_wait(act_bar, 0);
    constexpr uint32_t lbo = 16, sbo = 128;
    float acc2[NP / 2];
#pragma unroll
    for (int i = 0; i < NP / 2; ++i) acc2[i] = 0.f;
    int s = 0;
    uint32_t phase = 0;
    int prev = -1;
    for (int i = 0; i < nst; ++i) {
      mbar_wait(&full_bar[s], phase);
      const uint32_t base = smem_addr(ring + s * kStageBytes);
      fence_acc(acc);
      fence_acc(acc2);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const uint64_t da = smem_desc(base + j * kUnit);
        // Pair 2i + j's first chunk; past the last pair (a stage's padding) the last pair's row
        // again, against the zeros TMA fills the weights with there.
        const int pair = min(2 * i + j, npairs - 1);
        const uint32_t a0 = act_s + uint32_t(pair * 16) * lbo;
#pragma unroll
        for (int kk = 0; kk < 4; kk += 2) {  // +32 bytes of K a step: two chunks
          wgmma<WT, AT, NP>(acc, da + 2 * kk, smem_desc_plain2(a0 + uint32_t(2 * kk) * lbo, lbo, sbo));
          wgmma<WT, AT, NP>(acc2, da + 2 * kk + 2, smem_desc_plain2(a0 + uint32_t(2 * kk + 2) * lbo, lbo, sbo));
        }
      }
      end_stage(acc, acc2, empty_bar, stages, lane, s, phase, prev);
    }
    finish_chains(acc, acc2);
  }
  release_dependents_late(p);
  finish_one_shot<1, NP, kThreads<1>, true>(p, acc, ring, row0, batch, warp < 4);
#else
  __trap();
#endif
}

}  // namespace fp8gemm::small_m::sm90
