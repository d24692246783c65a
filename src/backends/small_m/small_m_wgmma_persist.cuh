// The persistent kernel (Family::kPersistent, ",persist=P"); included by small_m_wgmma.cuh after
// its device helpers.
//
// Why: a grid of one block per (row tile, split) pays the ring fill and drain per block, and
// where its blocks fill the SMs' shared memory the next kernel's blocks (PDL) cannot become
// resident until this kernel's blocks exit, so HBM idles across every kernel boundary. Here the
// grid is P blocks per SM (clusters of splitk along grid y); each cluster walks the units
// (row tile, batch) u = blockIdx.x, + gridDim.x, ... and the producer's TMA ring runs on across
// unit boundaries. The ring is sized so that one more block fits each SM: the next kernel's.
//
// Split-K partial sums cannot reuse the ring (it is streaming the next unit), so each rank owns
// the consumer threads t with t % splitk == rank: every rank pushes thread t's accumulators into
// slot [rank] of the owner's receive buffer (st.shared::cluster) and arrives on the owner's
// red_full barrier; the owner adds the slots in rank order 0, 1, ... (deterministic), stores, and
// arrives on every rank's red_free barrier, which a rank waits on before it overwrites a slot
// (next unit). The kernel ends with a cluster barrier: no block exits while a peer may still push
// into its buffer or arrive on its barriers (distributed shared memory lives as long as its block).
#pragma once

namespace fp8gemm::small_m::sm90 {

// mapa_rank, st_cluster_f32, mbar_arrive_remote, mbar_wait_cluster and the cluster barrier halves:
// src/core/sm90.

template <class WT, class AT, int W, int NP, class P = Params>
__global__ void __launch_bounds__(kThreads<W>, (W == 1 ? 4 : 2))
    small_m_wgmma_persistent_kernel(const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap,
                                    const P p) {
#ifdef FP8GEMM_SMALL_M_SM90A
  namespace cg = cooperative_groups;
  using St = RingStage<W, NP>;  // the one-shot kernel's stage layout
  constexpr int kKB = St::kKB, kWBytes = St::kWBytes, kStage = St::kBytes;
  constexpr int kAcc = NP / 2;
  constexpr int kC = W * 128;  // consumer threads

  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[16];
  __shared__ __align__(8) uint64_t empty_bar[16];
  __shared__ __align__(8) uint64_t red_full;  // this rank's receive buffer is complete
  __shared__ __align__(8) uint64_t red_free;  // every owner has read this rank's pushes
  uint8_t* ring = ring_base(smem_raw);
  float* red = reinterpret_cast<float*>(ring + p.stages * kStage);  // [splitk][kAcc][own]

  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const int stages = p.stages, S = p.splitk;
  const int rank = int(blockIdx.y);  // the cluster spans grid y
  int kb0, nkb;
  split_k_blocks(p, kb0, nkb);
  const int own = (kC + S - 1) / S;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full_bar[s], 1);
      mbar_init(&empty_bar[s], 4 * W);
    }
    if (S > 1) {
      mbar_init(&red_full, uint32_t(S * ((kC - rank + S - 1) / S)));  // S pushes of each owned thread
      mbar_init(&red_free, uint32_t(kC));                             // one per consumer thread, any owner
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();
  if (S > 1) cg::this_cluster().sync();  // remote arrivals need the other ranks' barriers set up
  // The next kernel may become resident now: the ring leaves room for one of its blocks per SM.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");

  const int step = int(gridDim.x);
  if (warp == 4 * W) {
    // Producer: one load per (unit, K block) in the consumers' order, across unit boundaries.
    if (lane == 0 && nkb > 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&wmap)) : "memory");
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&amap)) : "memory");
      uint64_t pol_w, pol_a;
      stream_policies(pol_w, pol_a);
      int u = int(blockIdx.x), kb = 0;
      const auto advance = [&](int& uu, int& kk) {
        if (++kk == nkb) {
          kk = 0;
          uu += step;
        }
      };
      const auto row0 = [&](int uu) { return (uu % p.tiles) * (64 * W); };
      // Weights of the first `stages` loads before waiting for the previous kernel; their
      // activations (which it may write) after.
      int pre = 0;
      {
        int uu = u, kk = kb;
        for (; pre < stages && uu < p.units; ++pre, advance(uu, kk)) {
          mbar_arrive_expect_tx(&full_bar[pre], kStage);
          tma_load(ring + pre * kStage, &wmap, &full_bar[pre], (kb0 + kk) * kKB, row0(uu), uu / p.tiles, pol_w);
        }
      }
      asm volatile("griddepcontrol.wait;\n" ::: "memory");
      for (int i = 0; i < pre; ++i, advance(u, kb))
        tma_load(ring + i * kStage + kWBytes, &amap, &full_bar[i], (kb0 + kb) * kKB, 0, u / p.tiles, pol_a);
      int s = 0;  // if pre < stages every load is issued already
      uint32_t phase = 0;
      for (; u < p.units; advance(u, kb)) {
        mbar_wait(&empty_bar[s], phase);
        mbar_arrive_expect_tx(&full_bar[s], kStage);
        uint8_t* st = ring + s * kStage;
        tma_load(st, &wmap, &full_bar[s], (kb0 + kb) * kKB, row0(u), u / p.tiles, pol_w);
        tma_load(st + kWBytes, &amap, &full_bar[s], (kb0 + kb) * kKB, 0, u / p.tiles, pol_a);
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
    }
    return;
  }

  // Consumers.
  asm volatile("griddepcontrol.wait;\n" ::: "memory");  // scales and out belong to the stream order
  const float scale = *p.a_scale * *p.b_scale;
  const int wg = warp >> 2;
  const int t = int(threadIdx.x);
  int s = 0;
  uint32_t phase = 0;
  int it = 0;
  for (int u = int(blockIdx.x); u < p.units; u += step, ++it) {
    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
    int prev = -1;
    consume_k_blocks<WT, AT, NP, St>(acc, nkb, ring, full_bar, empty_bar, stages, wg, lane, s, phase,
                                                       prev);
    if (prev >= 0) {  // the ring runs on into the next unit: give the last slot back too
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty_bar[prev]);
    }

    const int row0 = (u % p.tiles) * (64 * W);
    const int64_t out_base = int64_t(u / p.tiles) * p.m * int64_t(p.n);
    const auto store = [&](int i, float v) { store_fragment(p, row0, out_base, scale, t, i, v); };
    if (S == 1) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) store(i, acc[i]);
      continue;
    }
    const int owner = t % S, li = t / S;
    if (it > 0) mbar_wait_cluster(&red_free, uint32_t(it - 1) & 1);  // owners read the last unit
    const uint32_t dst = mapa_rank(smem_addr(red), uint32_t(owner));
#pragma unroll
    for (int i = 0; i < kAcc; ++i) st_cluster_f32(dst + 4u * uint32_t((rank * kAcc + i) * own + li), acc[i]);
    mbar_arrive_remote(mapa_rank(smem_addr(&red_full), uint32_t(owner)));
    if (owner == rank) {
      mbar_wait_cluster(&red_full, uint32_t(it) & 1);
#pragma unroll
      for (int i = 0; i < kAcc; ++i) {
        float v = 0.f;
        for (int q = 0; q < S; ++q) v += red[(q * kAcc + i) * own + li];
        store(i, v);
      }
      for (int q = 0; q < S; ++q) mbar_arrive_remote(mapa_rank(smem_addr(&red_free), uint32_t(q)));
    }
  }
  // The last unit's pushes and red_free arrivals reach blocks that are still running: each
  // consumer arrives after its last remote access, and no block leaves before every one has. The
  // consumer warps get here whole (every block of the cluster walks the same units); the producer
  // warp has exited, which counts as arrived.
  if (S > 1 && it > 0) {
    cluster_arrive_release();
    cluster_wait_acquire();
  }
#else
  __trap();  // wgmma and this kernel's TMA path exist on sm_90a only (can_implement refuses others)
#endif
}

}  // namespace fp8gemm::small_m::sm90
