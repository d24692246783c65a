// Where the fixed per-call cost of the v3 (wgmma + TMA) small_m kernel goes (issue 4): a copy of
// the one-shot v3 kernel with stages left out at compile time (MODE bits), timed the way the
// library's bench times (CUDA graph of back-to-back calls over weight copies rotating through
// >= 256 MB, round-robin replays, median), beside the library's own tactic, cuBLASLt's default and
// a plain 16-byte-load read of the same weights. Differences between variants place the time.
//
// Session 5 added timelines (kTrace: %globaltimer per block at six points, printed as "trace|"
// lines, per call relative to the previous call's last block end) and an activation-buffer
// kernel (actbuf_kernel), stream probes (tma_probe, ldg_probe) and a v3 kernel whose weights come
// through cp.async instead of TMA (ldgsts_kernel, written after the last device call: not run);
// --set picks the variants of session 5's device calls (s5a, s5b, s5c) or the next one (s6a).
// Build (here, no GPU needed; links the library for the cuBLASLt reference and the tactic):
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -I src -I include \
//     src/backends/small_m/bench/small_m_fixed_cost.cu build-s5/libfp8gemm.a -lcublasLt -o small_m_fixed_cost
// Run: small_m_fixed_cost [--set s5a|s5b|s5c|s6a] [--once]   (--once: one eager launch of each variant, for ncu)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/small_m/small_m_wgmma.cuh"
#include "core/device_buffer.h"
#include "fp8gemm/fp8gemm.h"

namespace fp8gemm::small_m::v3 {

enum : int {
  kEmpty = 1,     // return at once (launch, block scheduling, kernel boundary)
  kNoLoad = 2,    // no TMA; consumers skip the K loop (prologue + epilogue + boundary)
  kNoMma = 4,     // consumers wait for each stage and give it back, no wgmma (the TMA stream)
  kNoAct = 8,     // weights only (no activation TMA)
  kNoEpi = 16,    // no stores, no split-K reduction
  kPush = 32,     // split-K: push partials to owner ranks (st.shared::cluster + remote mbarrier
                  // arrive), cluster barrier arrived at setup and waited before the first push;
                  // no trailing cluster.sync
  kFixup = 64,    // split-K without a cluster: partials through global memory, the last block of a
                  // tile (atomic ticket) adds them in rank order
  kNoWait = 128,  // no griddepcontrol.wait at all (wrong in general: the dependency's price)
  kLateTrig = 256,  // launch_dependents after the K loop instead of after setup
  kEarly = 512,     // consumers wait for the previous kernel and read the scales before the K loop
  kPushWarp = 1024,  // with kPush: one remote arrive per (warp, owner) instead of one per thread
                     // (4W * S arrivals per owner instead of ~kC): fence.acq_rel.cluster, __syncwarp,
                     // then lane q < S arrives on rank q's red_full
  kNoStore = 2048,   // everything but the global stores of the output (their flush is on the path
                     // to the dependent kernel's griddepcontrol.wait)
  kTrace = 4096,     // records %globaltimer at six points per block into DParams::trace (session 5)
};

struct DParams {
  Params p;
  float* ws;       // kFixup: [unit][rank][kAcc][consumers]
  unsigned* cnt;   // kFixup: [unit] tickets, zero between calls (the last block resets)
  unsigned long long* trace;  // kTrace: [block][8] ns of this call (block = x + gridDim.x * (y + gridDim.y * z))
};

__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t)::"memory");
  return t;
}

__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }

template <class WT, class AT, int W, int NP, int MODE>
__global__ void __launch_bounds__(kThreads<W>, (W == 1 ? 4 : 2))
    diag_kernel(const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap, const DParams dp) {
#ifdef FP8GEMM_SMALL_M_SM90A
  if constexpr (MODE & kEmpty) return;
  namespace cg = cooperative_groups;
  const Params& p = dp.p;
  // kTrace events: 0 entry, 1 producer issued its pre-wait loads, 2 producer passed the wait,
  // 3 consumer 0 saw the first full stage, 4 consumer 0 finished the K loop, 5 thread 0 done.
  unsigned long long* trow = nullptr;
  if constexpr (MODE & kTrace)
    trow = dp.trace + 8ull * (blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
  auto tr = [&](int e) {
    if constexpr (MODE & kTrace) trow[e] = gtimer();
  };
  if (threadIdx.x == 0) tr(0);
  constexpr int kKB = 128;
  constexpr int kWBytes = W * 64 * kKB;
  constexpr int kABytes = NP * kKB;
  constexpr int kStage = kWBytes + kABytes;
  constexpr int kAcc = NP / 2;
  constexpr int kC = W * 128;
  constexpr bool kAct = !(MODE & kNoAct);
  constexpr uint32_t kTx = kAct ? kStage : kWBytes;

  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[16];
  __shared__ __align__(8) uint64_t empty_bar[16];
  __shared__ __align__(8) uint64_t red_full;
  __shared__ int s_last;
  uint8_t* ring = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  float* red = reinterpret_cast<float*>(ring + p.stages * kStage);  // kPush: [S][kAcc][own]

  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const int stages = p.stages, S = p.splitk;
  const int row0 = int(blockIdx.x) * (64 * W);
  const int batch = int(blockIdx.z);
  const int rank = int(blockIdx.y);
  const int kb0 = rank * p.kblocks_per_split;
  const int nkb = (MODE & kNoLoad) ? 0 : max(0, min(kb0 + p.kblocks_per_split, p.kblocks) - kb0);
  const int own = (kC + S - 1) / S;
  constexpr bool kPushRed = (MODE & kPush) && !(MODE & kNoEpi);
  constexpr bool kWarpArrive = (MODE & kPushWarp) != 0;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full_bar[s], 1);
      mbar_init(&empty_bar[s], 4 * W);
    }
    if (kPushRed && S > 1) mbar_init(&red_full, kWarpArrive ? uint32_t(4 * W * S) : uint32_t(S * ((kC - rank + S - 1) / S)));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();
  if (kPushRed && S > 1) cluster_arrive();
  if constexpr (!(MODE & kLateTrig)) asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");

  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
  float scale = 0.f;

  if (warp == 4 * W) {
    if (lane == 0 && nkb > 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&wmap)) : "memory");
      if (kAct) asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&amap)) : "memory");
      uint64_t pol_w, pol_a;
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol_w));
      asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(pol_a));
      const int pre = min(stages, nkb);
      for (int i = 0; i < pre; ++i) {
        mbar_arrive_expect_tx(&full_bar[i], kTx);
        tma_load(ring + i * kStage, &wmap, &full_bar[i], (kb0 + i) * kKB, row0, batch, pol_w);
      }
      int pf = pre;
      for (const int pf_end = min(nkb, pre + p.l2pf); pf < pf_end; ++pf)
        tma_prefetch_l2(&wmap, (kb0 + pf) * kKB, row0, batch);
      tr(1);
      if constexpr (!(MODE & kNoWait)) asm volatile("griddepcontrol.wait;\n" ::: "memory");
      tr(2);
      if (kAct)
        for (int i = 0; i < pre; ++i)
          tma_load(ring + i * kStage + kWBytes, &amap, &full_bar[i], (kb0 + i) * kKB, 0, batch, pol_a);
      int s = pre == stages ? 0 : pre;
      uint32_t phase = 0;
      for (int i = pre; i < nkb; ++i) {
        mbar_wait(&empty_bar[s], phase);
        mbar_arrive_expect_tx(&full_bar[s], kTx);
        uint8_t* st = ring + s * kStage;
        tma_load(st, &wmap, &full_bar[s], (kb0 + i) * kKB, row0, batch, pol_w);
        if (kAct) tma_load(st + kWBytes, &amap, &full_bar[s], (kb0 + i) * kKB, 0, batch, pol_a);
        if (pf < nkb && pf <= i + p.l2pf) tma_prefetch_l2(&wmap, (kb0 + pf++) * kKB, row0, batch);
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
    }
    if (kPushRed && S > 1) return;  // arrived on the cluster barrier; needs no wait
  } else {
    if constexpr (MODE & kEarly) {
      asm volatile("griddepcontrol.wait;\n" ::: "memory");
      scale = *p.a_scale * *p.b_scale;
    }
    const int wg = warp >> 2;
    int s = 0;
    uint32_t phase = 0;
    int prev = -1;
    if constexpr (MODE & kNoMma) {
      for (int i = 0; i < nkb; ++i) {
        mbar_wait(&full_bar[s], phase);
        __syncwarp();
        if (lane == 0) mbar_arrive(&empty_bar[s]);
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
    } else {
      if constexpr (MODE & kTrace) {
        if (nkb > 0) {
          mbar_wait(&full_bar[0], 0);
          if (threadIdx.x == 0) tr(3);
        }
      }
      consume_k_blocks<WT, AT, NP, RingStage<W, NP>>(acc, nkb, ring, full_bar, empty_bar, stages, wg, lane, s,
                                                         phase, prev);
      if (threadIdx.x == 0) tr(4);
    }
  }
  if constexpr (MODE & kLateTrig) asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  if constexpr (MODE & kNoEpi) return;

  if constexpr (!(MODE & kEarly)) {
    if constexpr (!(MODE & kNoWait)) asm volatile("griddepcontrol.wait;\n" ::: "memory");
    scale = *p.a_scale * *p.b_scale;
  } else if (warp == 4 * W) {
    scale = *p.a_scale * *p.b_scale;  // the producer warp takes part in the cluster reductions
  }
  const int64_t out_base = int64_t(batch) * p.m * int64_t(p.n);
  auto store = [&](int tc, int i, float v) {
    if constexpr (MODE & kNoStore) {
      if (v * scale == 1.2345678e30f) store_fragment(p, row0, out_base, scale, tc, i, v);  // never true
    } else {
      store_fragment(p, row0, out_base, scale, tc, i, v);
    }
  };

  if (S == 1) {
    if (warp < 4 * W) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) store(int(threadIdx.x), i, acc[i]);
    }
    if (threadIdx.x == 0) tr(5);
    return;
  }

  if constexpr (kPushRed) {
    // Consumers only (the producer returned). Thread t's sums go to rank t % S.
    const int t = int(threadIdx.x);
    const int owner = t % S, li = t / S;
    cluster_wait();  // every rank's red_full is initialised
    const uint32_t dst = mapa_rank(smem_addr(red), uint32_t(owner));
#pragma unroll
    for (int i = 0; i < kAcc; ++i) st_cluster_f32(dst + 4u * uint32_t((rank * kAcc + i) * own + li), acc[i]);
    if constexpr (kWarpArrive) {
      asm volatile("fence.acq_rel.cluster;\n" ::: "memory");
      __syncwarp();
      if (lane < S) mbar_arrive_remote(mapa_rank(smem_addr(&red_full), uint32_t(lane)));
    } else {
      mbar_arrive_remote(mapa_rank(smem_addr(&red_full), uint32_t(owner)));
    }
    if (owner == rank) {
      mbar_wait_cluster(&red_full, 0);
#pragma unroll
      for (int i = 0; i < kAcc; ++i) {
        float v = 0.f;
        for (int q = 0; q < S; ++q) v += red[(q * kAcc + i) * own + li];
        store(t, i, v);
      }
    }
    if (threadIdx.x == 0) tr(5);
    return;
  } else if constexpr (MODE & kFixup) {
    const int unit = batch * int(gridDim.x) + int(blockIdx.x);
    const int t = int(threadIdx.x);
    float* mine = dp.ws + (size_t(unit) * S + rank) * (kAcc * kC);
    if (warp < 4 * W) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) __stcg(mine + i * kC + t, acc[i]);
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
      const unsigned old = atomicAdd(&dp.cnt[unit], 1u);
      s_last = old == unsigned(S - 1);
      if (s_last) dp.cnt[unit] = 0;  // every rank has taken its ticket: ready for the next call
    }
    __syncthreads();
    if (!s_last || warp >= 4 * W) return;
    __threadfence();
    const float* all = dp.ws + size_t(unit) * S * (kAcc * kC);
#pragma unroll
    for (int i = 0; i < kAcc; ++i) {
      float v = 0.f;
      for (int q = 0; q < S; ++q) v += q == rank ? acc[i] : __ldcg(all + (q * kAcc + i) * kC + t);
      store(t, i, v);
    }
    return;
  } else {
    __syncthreads();
    float* partial = reinterpret_cast<float*>(ring);
    if (warp < 4 * W) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) partial[i * kC + int(threadIdx.x)] = acc[i];
    }
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    constexpr int kTotal = kAcc * kC;
    const int share = (kTotal + S - 1) / S;
    const int e_end = min(kTotal, (rank + 1) * share);
    for (int e = rank * share + int(threadIdx.x); e < e_end; e += kThreads<W>) {
      float v = 0.f;
      for (int q = 0; q < S; ++q) v += cluster.map_shared_rank(partial, q)[e];
      store(e % kC, e / kC, v);
    }
    cluster.sync();
    if (threadIdx.x == 0) tr(5);
  }
#else
  __trap();
#endif
}


// Session 5: activations of the block's whole K share in their own buffer, requested right after
// griddepcontrol.wait (kOne: one 4-D TMA {128, NP, K blocks, 1} over a map whose K-block
// dimension has a 128-byte stride; else one 3-D TMA per K block), so that the ring stages hold
// weights only and no activation TMA is issued inside the K loop. Smem: [act: kbps x NP x 128]
// [ring: stages x (64 W x 128)]. Otherwise the library's one-shot v3 kernel.
#ifdef FP8GEMM_SMALL_M_SM90A
__device__ __forceinline__ void tma_load4(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2,
                                          int c3, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_addr(bar)), "l"(policy)
      : "memory");
}
#endif

template <class WT, class AT, int W, int NP, bool kOne>
__global__ void __launch_bounds__(kThreads<W>, (W == 1 ? 4 : 2))
    actbuf_kernel(const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap,
                  const __grid_constant__ CUtensorMap amap4, const Params p) {
#ifdef FP8GEMM_SMALL_M_SM90A
  namespace cg = cooperative_groups;
  constexpr int kKB = 128;
  constexpr int kWBytes = W * 64 * kKB;
  constexpr int kABytes = NP * kKB;
  constexpr int kAcc = NP / 2;
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[16];
  __shared__ __align__(8) uint64_t empty_bar[16];
  __shared__ __align__(8) uint64_t act_bar;
  uint8_t* act = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  uint8_t* ring = act + p.kblocks_per_split * kABytes;
  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const int stages = p.stages;
  const int row0 = int(blockIdx.x) * (64 * W);
  const int batch = int(blockIdx.z);
  const int kb0 = int(blockIdx.y) * p.kblocks_per_split;
  const int nkb = max(0, min(kb0 + p.kblocks_per_split, p.kblocks) - kb0);
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full_bar[s], 1);
      mbar_init(&empty_bar[s], 4 * W);
    }
    mbar_init(&act_bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
  if (warp == 4 * W) {
    if (lane == 0 && nkb > 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&wmap)) : "memory");
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(kOne ? &amap4 : &amap)) : "memory");
      uint64_t pol_w, pol_a;
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol_w));
      asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(pol_a));
      const int pre = min(stages, nkb);
      for (int i = 0; i < pre; ++i) {
        mbar_arrive_expect_tx(&full_bar[i], kWBytes);
        tma_load(ring + i * kWBytes, &wmap, &full_bar[i], (kb0 + i) * kKB, row0, batch, pol_w);
      }
      asm volatile("griddepcontrol.wait;\n" ::: "memory");
      if constexpr (kOne) {
        mbar_arrive_expect_tx(&act_bar, uint32_t(p.kblocks_per_split * kABytes));
        tma_load4(act, &amap4, &act_bar, 0, 0, kb0, batch, pol_a);
      } else {
        mbar_arrive_expect_tx(&act_bar, uint32_t(nkb * kABytes));
        for (int i = 0; i < nkb; ++i)
          tma_load(act + i * kABytes, &amap, &act_bar, (kb0 + i) * kKB, 0, batch, pol_a);
      }
      int s = pre == stages ? 0 : pre;
      uint32_t phase = 0;
      for (int i = pre; i < nkb; ++i) {
        mbar_wait(&empty_bar[s], phase);
        mbar_arrive_expect_tx(&full_bar[s], kWBytes);
        tma_load(ring + s * kWBytes, &wmap, &full_bar[s], (kb0 + i) * kKB, row0, batch, pol_w);
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
    }
  } else if (nkb > 0) {
    const int wg = warp >> 2;
    mbar_wait(&act_bar, 0);
    int s = 0, prev = -1;
    uint32_t phase = 0;
    for (int i = 0; i < nkb; ++i) {
      mbar_wait(&full_bar[s], phase);
      const uint64_t da = smem_desc(smem_addr(ring + s * kWBytes) + wg * (64 * kKB));
      const uint64_t db = smem_desc(smem_addr(act + i * kABytes));
      fence_acc(acc);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) wgmma<WT, AT, NP>(acc, da + 2 * kk, db + 2 * kk);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      fence_acc(acc);
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      fence_acc(acc);
      if (prev >= 0) {
        __syncwarp();
        if (lane == 0) mbar_arrive(&empty_bar[prev]);
      }
      prev = s;
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    fence_acc(acc);
  }
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  const float scale = *p.a_scale * *p.b_scale;
  const int64_t out_base = int64_t(batch) * p.m * int64_t(p.n);
  constexpr int kC = W * 128;
  if (p.splitk == 1) {
    if (warp < 4 * W) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) store_fragment(p, row0, out_base, scale, int(threadIdx.x), i, acc[i]);
    }
    return;
  }
  __syncthreads();
  float* partial = reinterpret_cast<float*>(act);  // act buffer + ring: >= kAcc * kC floats
  if (warp < 4 * W) {
#pragma unroll
    for (int i = 0; i < kAcc; ++i) partial[i * kC + int(threadIdx.x)] = acc[i];
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  const int rank = int(cluster.block_rank());
  constexpr int kTotal = kAcc * kC;
  const int share = (kTotal + p.splitk - 1) / p.splitk;
  const int e_end = min(kTotal, (rank + 1) * share);
  for (int e = rank * share + int(threadIdx.x); e < e_end; e += kThreads<W>) {
    float v = 0.f;
    for (int q = 0; q < p.splitk; ++q) v += cluster.map_shared_rank(partial, q)[e];
    store_fragment(p, row0, out_base, scale, e % kC, e / kC, v);
  }
  cluster.sync();
#else
  __trap();
#endif
}

// Session 5, set s6a (written after the last device call of session 5: compiled, NOT RUN yet).
// The v3 kernel with its weight loads moved off TMA (call 3: TMA streams at ~4.3 TB/s, 16-byte
// loads in the same order at 4.7-4.8): a producer warpgroup copies each stage's [64 W rows x
// 128 B] of weights with 16-byte cp.async.cg into the same 128-byte-swizzled layout TMA wrote
// (16-byte chunk c of row r at r * 128 + ((c ^ (r & 7)) * 16) of the 1024-aligned tile; rows
// beyond n and chunks beyond k are zero-filled through src-size 0) and arrives on the stage's full
// barrier with cp.async.mbarrier.arrive.noinc when its copies land; thread 0 of the producers
// still brings the stage's activations with TMA (one expect_tx arrival more on the barrier).
// Consumers fence the generic-proxy writes before wgmma reads them (fence.proxy.async).
struct LParams {
  Params p;
  const uint8_t* w;  // weights [batch][n][k]
  int64_t k;
};

#ifdef FP8GEMM_SMALL_M_SM90A
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, uint32_t src_size, uint64_t policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(dst), "l"(src),
               "r"(src_size), "l"(policy)
               : "memory");
}
__device__ __forceinline__ void cp_async_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
#endif

template <int W>
constexpr int kThreadsL = W * 128 + 128;  // consumers, then a producer warpgroup

template <class WT, class AT, int W, int NP, bool kNoWaitL>
__global__ void __launch_bounds__(kThreadsL<W>, 1)
    ldgsts_kernel(const __grid_constant__ CUtensorMap amap, const LParams lp) {
#ifdef FP8GEMM_SMALL_M_SM90A
  namespace cg = cooperative_groups;
  const Params& p = lp.p;
  constexpr int kKB = 128;
  constexpr int kWBytes = W * 64 * kKB;
  constexpr int kABytes = NP * kKB;
  constexpr int kStage = kWBytes + kABytes;
  constexpr int kAcc = NP / 2;
  constexpr int kC = W * 128;
  constexpr int kChunks = W * 64 * 8 / 128;  // 16-byte chunks per producer thread and stage
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[16];
  __shared__ __align__(8) uint64_t empty_bar[16];
  uint8_t* ring = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const int stages = p.stages;
  const int row0 = int(blockIdx.x) * (64 * W);
  const int batch = int(blockIdx.z);
  const int kb0 = int(blockIdx.y) * p.kblocks_per_split;
  const int nkb = max(0, min(kb0 + p.kblocks_per_split, p.kblocks) - kb0);
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full_bar[s], 128 + 1);  // every producer thread's cp.async arrival + the act expect_tx
      mbar_init(&empty_bar[s], 4 * W);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
  if (warp >= 4 * W) {
    // Producers: thread pt copies rows pt / 8 + 16 j (j < kChunks), chunk pt % 8, of every stage.
    const int pt = int(threadIdx.x) - kC;
    const int c = pt & 7;
    uint64_t pol_w, pol_a;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol_w));
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(pol_a));
    const uint8_t* wb = lp.w + (int64_t(batch) * p.n) * lp.k;
    auto issue_weights = [&](int i, int s) {
      const uint32_t st = smem_addr(ring + s * kStage);
      const int64_t kofs = int64_t(kb0 + i) * kKB + c * 16;
#pragma unroll
      for (int j = 0; j < kChunks; ++j) {
        const int r = (pt >> 3) + 16 * j;
        const bool ok = row0 + r < p.n && kofs < lp.k;
        const uint8_t* src = ok ? wb + int64_t(row0 + r) * lp.k + kofs : lp.w;
        cp_async16(st + uint32_t(r * 128 + ((c ^ (r & 7)) << 4)), src, ok ? 16u : 0u, pol_w);
      }
      cp_async_arrive_noinc(&full_bar[s]);
    };
    const int pre = min(stages, nkb);
    for (int i = 0; i < pre; ++i) issue_weights(i, i);
    if (pt == 0 && nkb > 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&amap)) : "memory");
      if constexpr (!kNoWaitL) asm volatile("griddepcontrol.wait;\n" ::: "memory");
      for (int i = 0; i < pre; ++i) {
        mbar_arrive_expect_tx(&full_bar[i], kABytes);
        tma_load(ring + i * kStage + kWBytes, &amap, &full_bar[i], (kb0 + i) * kKB, 0, batch, pol_a);
      }
    }
    int s = pre == stages ? 0 : pre;
    uint32_t phase = 0;
    for (int i = pre; i < nkb; ++i) {
      mbar_wait(&empty_bar[s], phase);
      issue_weights(i, s);
      if (pt == 0) {
        mbar_arrive_expect_tx(&full_bar[s], kABytes);
        tma_load(ring + s * kStage + kWBytes, &amap, &full_bar[s], (kb0 + i) * kKB, 0, batch, pol_a);
      }
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    }
  } else {
    const int wg = warp >> 2;
    int s = 0, prev = -1;
    uint32_t phase = 0;
    for (int i = 0; i < nkb; ++i) {
      mbar_wait(&full_bar[s], phase);
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // cp.async wrote the weights
      const uint32_t base = smem_addr(ring + s * kStage);
      const uint64_t da = smem_desc(base + wg * (64 * kKB));
      const uint64_t db = smem_desc(base + kWBytes);
      fence_acc(acc);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) wgmma<WT, AT, NP>(acc, da + 2 * kk, db + 2 * kk);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      fence_acc(acc);
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      fence_acc(acc);
      if (prev >= 0) {
        __syncwarp();
        if (lane == 0) mbar_arrive(&empty_bar[prev]);
      }
      prev = s;
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    fence_acc(acc);
  }
  if constexpr (!kNoWaitL) asm volatile("griddepcontrol.wait;\n" ::: "memory");
  const float scale = *p.a_scale * *p.b_scale;
  const int64_t out_base = int64_t(batch) * p.m * int64_t(p.n);
  if (p.splitk == 1) {
    if (warp < 4 * W) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) store_fragment(p, row0, out_base, scale, int(threadIdx.x), i, acc[i]);
    }
    return;
  }
  __syncthreads();
  float* partial = reinterpret_cast<float*>(ring);
  if (warp < 4 * W) {
#pragma unroll
    for (int i = 0; i < kAcc; ++i) partial[i * kC + int(threadIdx.x)] = acc[i];
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  const int rank = int(cluster.block_rank());
  constexpr int kTotal = kAcc * kC;
  const int share = (kTotal + p.splitk - 1) / p.splitk;
  const int e_end = min(kTotal, (rank + 1) * share);
  for (int e = rank * share + int(threadIdx.x); e < e_end; e += kThreadsL<W>) {
    float v = 0.f;
    for (int q = 0; q < p.splitk; ++q) v += cluster.map_shared_rank(partial, q)[e];
    store_fragment(p, row0, out_base, scale, e % kC, e / kC, v);
  }
  cluster.sync();
#else
  __trap();
#endif
}
}  // namespace fp8gemm::small_m::v3

namespace {

using namespace fp8gemm;
using namespace fp8gemm::small_m;

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

__global__ void fill_e4m3(uint8_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    uint8_t c = uint8_t(x);
    c = uint8_t((c & 0x80) | (0x30 + (c & 0x1F)));  // |v| in [0.125, 1): no NaN, no overflow
    p[i] = c;
  }
}

// Plain read of `bytes` (16-byte loads, 4 in flight per thread), PDL-friendly.
__global__ void __launch_bounds__(512) read_stream(const uint4* data, size_t count, unsigned* sink) {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned a = 0;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < count; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = __ldcs(data + i + j * stride);
#pragma unroll
    for (int j = 0; j < 4; ++j) a ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  for (; i < count; i += stride) {
    const uint4 v = __ldcs(data + i);
    a ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  if (a == 0x9E3779B9u) *sink = a;
}

// Session 5, set s5c: what limits the stream. Both probes move the same bytes as a v3 grid of
// `blocks` = tiles x splits blocks with nkb K blocks of 64 rows x 128 B each, PDL on and no
// griddepcontrol.wait (calls overlap freely: the data path's throughput alone).
// tma_probe: one producer lane feeds a ring of `stages` 8 KB slots with {128 B, 64 rows} boxes, one
// consumer warp waits and frees them (no MMA). kContig = false: the kernel's addresses (64 rows
// of the weight matrix, K-major, 128 B per row per box); true: the same box shape over a flat view
// of the weights as [N K / 128 lines][128 B], so that each box is 8 KB of consecutive addresses.
template <bool kContig>
__global__ void __launch_bounds__(64) tma_probe(const __grid_constant__ CUtensorMap map, int nkb, int stages,
                                                int kblocks, unsigned* sink) {
#ifdef FP8GEMM_SMALL_M_SM90A
  using namespace fp8gemm::small_m::v3;
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[16];
  __shared__ __align__(8) uint64_t empty_bar[16];
  uint8_t* ring = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const int tile = int(blockIdx.x), split = int(blockIdx.y);
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full_bar[s], 1);
      mbar_init(&empty_bar[s], 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  const int kb0 = split * nkb;
  const int n = max(0, min(nkb, kblocks - kb0));
  // kContig: this block's boxes are lines [(tile * kblocks + kb0) * 64, + n * 64) of the flat view.
  const int line0 = (tile * kblocks + kb0) * 64;
  if (warp == 0) {
    if (lane == 0) {
      uint64_t pol;
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
      int s = 0;
      uint32_t phase = 0;
      for (int i = 0; i < n; ++i) {
        if (i >= stages) mbar_wait(&empty_bar[s], phase ^ 1);
        mbar_arrive_expect_tx(&full_bar[s], 8192);
        if (kContig) tma_load(ring + s * 8192, &map, &full_bar[s], 0, line0 + i * 64, 0, pol);
        else tma_load(ring + s * 8192, &map, &full_bar[s], (kb0 + i) * 128, tile * 64, 0, pol);
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
    }
  } else {
    int s = 0;
    uint32_t phase = 0, x = 0;
    for (int i = 0; i < n; ++i) {
      mbar_wait(&full_bar[s], phase);
      x ^= reinterpret_cast<const uint32_t*>(ring + s * 8192)[lane];
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty_bar[s]);
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    }
    if (x == 0x9E3779B9u) *sink = x;
  }
#endif
}

// ldg_probe: the kernel's addresses with 16-byte loads: per step a block reads its 64 rows x 128 B
// (thread t: rows t/8 + 16 j, 16 bytes at (t % 8) * 16), 8 steps in flight.
__global__ void __launch_bounds__(128) ldg_probe(const uint8_t* w, int64_t k, int nkb, int kblocks, unsigned* sink) {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  const int tile = int(blockIdx.x), kb0 = int(blockIdx.y) * nkb;
  const int n = max(0, min(nkb, kblocks - kb0));
  const int t = int(threadIdx.x);
  const uint8_t* base = w + (int64_t(tile) * 64 + t / 8) * k + (t % 8) * 16;
  unsigned a = 0;
  int i = 0;
  for (; i + 7 < n; i += 8) {  // 8 steps (64 KB per block) in flight
    uint4 v[32];
#pragma unroll
    for (int u = 0; u < 8; ++u)
#pragma unroll
      for (int j = 0; j < 4; ++j)
        v[u * 4 + j] = __ldcs(reinterpret_cast<const uint4*>(base + int64_t(16 * j) * k + int64_t(kb0 + i + u) * 128));
#pragma unroll
    for (int q = 0; q < 32; ++q) a ^= v[q].x ^ v[q].y ^ v[q].z ^ v[q].w;
  }
  for (; i < n; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint4 v = __ldcs(reinterpret_cast<const uint4*>(base + int64_t(16 * j) * k + int64_t(kb0 + i) * 128));
      a ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  if (a == 0x9E3779B9u) *sink = a;
}

__global__ void empty_kernel() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

struct Cfg {
  int rows, splitk, stages;
  int occ = 0;         // > 0: shared memory padded so that at most occ blocks fit an SM
  bool every = false;  // time every variant (else: full, trace, nowait, latetrig, pushwarp)
};
struct Shape {
  const char* name;
  int n, k, m;
  std::vector<Cfg> cfgs;
  std::vector<std::string> lib;  // library tactic configs to time beside
};

using LaunchFn = void (*)(const CUtensorMap&, const CUtensorMap&, const v3::DParams&, dim3, int, size_t,
                          cudaStream_t, bool, bool);

template <int W, int NP, int MODE>
void launch_diag(const CUtensorMap& wm, const CUtensorMap& am, const v3::DParams& dp, dim3 grid, int splitk,
                 size_t smem, cudaStream_t st, bool pdl, bool cluster) {
  auto k = v3::diag_kernel<E4M3, E4M3, W, NP, MODE>;
  static bool raised = false;
  if (!raised) {
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 220 * 1024));
    raised = true;
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(v3::kThreads<W>);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = st;
  cudaLaunchAttribute at[2];
  set_launch_attrs(cfg, at, cluster ? splitk : 1, pdl);
  CK(cudaLaunchKernelEx(&cfg, k, wm, am, dp));
}

// The variants instantiated (each a kernel per (W, NP)); the session-5 set.
#define FP8GEMM_DIAG_MODES                                                        \
  FP8GEMM_DIAG_MODE(0)                                                            \
  FP8GEMM_DIAG_MODE(v3::kEmpty)                                                   \
  FP8GEMM_DIAG_MODE(v3::kNoLoad)                                                  \
  FP8GEMM_DIAG_MODE(v3::kNoMma | v3::kNoEpi)                                      \
  FP8GEMM_DIAG_MODE(v3::kNoMma | v3::kNoEpi | v3::kNoWait)                        \
  FP8GEMM_DIAG_MODE(v3::kNoEpi)                                                   \
  FP8GEMM_DIAG_MODE(v3::kNoWait)                                                  \
  FP8GEMM_DIAG_MODE(v3::kLateTrig)                                                \
  FP8GEMM_DIAG_MODE(v3::kEarly)                                                   \
  FP8GEMM_DIAG_MODE(v3::kNoStore)                                                 \
  FP8GEMM_DIAG_MODE(v3::kNoAct)                                                   \
  FP8GEMM_DIAG_MODE(v3::kPush | v3::kPushWarp)                                    \
  FP8GEMM_DIAG_MODE(v3::kPush | v3::kPushWarp | v3::kEarly)                       \
  FP8GEMM_DIAG_MODE(v3::kTrace)                                                   \
  FP8GEMM_DIAG_MODE(v3::kTrace | v3::kLateTrig)                                   \
  FP8GEMM_DIAG_MODE(v3::kTrace | v3::kPush | v3::kPushWarp)

using ActBufFn = void (*)(const CUtensorMap&, const CUtensorMap&, const CUtensorMap&, const v3::Params&, dim3, int,
                         size_t, cudaStream_t);
template <int W, int NP, bool kOne>
void launch_actbuf(const CUtensorMap& wm, const CUtensorMap& am, const CUtensorMap& am4, const v3::Params& p, dim3 grid,
                   int splitk, size_t smem, cudaStream_t st) {
  auto k = v3::actbuf_kernel<E4M3, E4M3, W, NP, kOne>;
  static bool raised = false;
  if (!raised) {
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 220 * 1024));
    raised = true;
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(v3::kThreads<W>);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = st;
  cudaLaunchAttribute at[2];
  set_launch_attrs(cfg, at, splitk, true);
  CK(cudaLaunchKernelEx(&cfg, k, wm, am, am4, p));
}
using LdgstsFn = void (*)(const CUtensorMap&, const v3::LParams&, dim3, int, size_t, cudaStream_t);
template <int W, int NP, bool kNoWait>
void launch_ldgsts(const CUtensorMap& am, const v3::LParams& lp, dim3 grid, int splitk, size_t smem, cudaStream_t st) {
  auto k = v3::ldgsts_kernel<E4M3, E4M3, W, NP, kNoWait>;
  static bool raised = false;
  if (!raised) {
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 220 * 1024));
    raised = true;
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(v3::kThreadsL<W>);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = st;
  cudaLaunchAttribute at[2];
  set_launch_attrs(cfg, at, splitk, true);
  CK(cudaLaunchKernelEx(&cfg, k, am, lp));
}
LdgstsFn pick_ldgsts(int rows, int np, bool nowait) {
  if (rows == 64 && np == 8) return nowait ? launch_ldgsts<1, 8, true> : launch_ldgsts<1, 8, false>;
  if (rows == 64 && np == 16) return nowait ? launch_ldgsts<1, 16, true> : launch_ldgsts<1, 16, false>;
  if (rows == 128 && np == 8) return nowait ? launch_ldgsts<2, 8, true> : launch_ldgsts<2, 8, false>;
  if (rows == 128 && np == 16) return nowait ? launch_ldgsts<2, 16, true> : launch_ldgsts<2, 16, false>;
  return nullptr;
}

ActBufFn pick_actbuf(int rows, int np, bool one) {
  if (rows == 64 && np == 8) return one ? launch_actbuf<1, 8, true> : launch_actbuf<1, 8, false>;
  if (rows == 64 && np == 16) return one ? launch_actbuf<1, 16, true> : launch_actbuf<1, 16, false>;
  if (rows == 128 && np == 8) return one ? launch_actbuf<2, 8, true> : launch_actbuf<2, 8, false>;
  if (rows == 128 && np == 16) return one ? launch_actbuf<2, 16, true> : launch_actbuf<2, 16, false>;
  return nullptr;
}

template <int W, int NP>
LaunchFn pick(int mode) {
  using namespace v3;
  switch (mode) {
#define FP8GEMM_DIAG_MODE(M) \
  case (M): return launch_diag<W, NP, (M)>;
    FP8GEMM_DIAG_MODES
#undef FP8GEMM_DIAG_MODE
  }
  return nullptr;
}
LaunchFn pick_any(int rows, int np, int mode) {
  const int W = rows / 64;
  if (W == 1) {
    if (np == 8) return pick<1, 8>(mode);
    if (np == 16) return pick<1, 16>(mode);
  } else {
    if (np == 8) return pick<2, 8>(mode);
    if (np == 16) return pick<2, 16>(mode);
  }
  return nullptr;
}

std::string mode_name(int m) {
  using namespace v3;
  if (m == 0) return "full";
  if (m == kEmpty) return "empty";
  if (m == (kNoMma | kNoEpi)) return "tma_stream";
  if (m == (kNoMma | kNoEpi | kNoWait)) return "tma_stream+nowait";
  if (m == (kNoMma | kNoEpi | kNoAct)) return "tma_stream_w";
  std::string n;
  auto add = [&](int bit, const char* s) {
    if (m & bit) n += (n.empty() ? "" : "+") + std::string(s);
  };
  if ((m & kPush) && (m & kPushWarp)) n = "pushwarp";
  else add(kPush, "push");
  add(kNoLoad, "noload");
  add(kNoMma, "nomma");
  add(kNoAct, "noact");
  add(kNoEpi, "noepi");
  add(kFixup, "fixup");
  add(kNoWait, "nowait");
  add(kLateTrig, "latetrig");
  add(kEarly, "early");
  add(kNoStore, "nostore");
  add(kTrace, "trace");
  return n;
}

void encode(CUtensorMap* map, const void* base, int64_t k, int64_t rows, int box_rows) {
  using Fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                          const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                          CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static Fn fn = nullptr;
  if (!fn) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    fn = reinterpret_cast<Fn>(p);
  }
  const cuuint64_t dims[3] = {cuuint64_t(k), cuuint64_t(rows), 1};
  const cuuint64_t strides[2] = {cuuint64_t(k), cuuint64_t(k) * cuuint64_t(rows)};
  const cuuint32_t box[3] = {128, cuuint32_t(box_rows), 1};
  const cuuint32_t es[3] = {1, 1, 1};
  const CUresult r = fn(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, const_cast<void*>(base), dims, strides, box, es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "encode failed %d\n", int(r));
    std::exit(1);
  }
}

// Activations [m, k] as {128 (k in a K block), m, K blocks, 1} with strides {k, 128, m k} bytes:
// a {128, np, kbps, 1} box is the block's K share as kbps tiles of [np x 128 B] (k % 128 == 0).
bool encode4(CUtensorMap* map, const void* base, int64_t k, int64_t m, int np, int kbps) {
  using Fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                          const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                          CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
  const cuuint64_t dims[4] = {128, cuuint64_t(m), cuuint64_t(k / 128), 1};
  const cuuint64_t strides[3] = {cuuint64_t(k), 128, cuuint64_t(k) * cuuint64_t(m)};
  const cuuint32_t box[4] = {128, cuuint32_t(np), cuuint32_t(kbps), 1};
  const cuuint32_t es[4] = {1, 1, 1, 1};
  const CUresult r = reinterpret_cast<Fn>(p)(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, const_cast<void*>(base), dims,
                                             strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) std::printf("# encode4 failed (%d): k=%lld m=%lld np=%d kbps=%d\n", int(r), (long long)k,
                                     (long long)m, np, kbps);
  return r == CUDA_SUCCESS;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bool once = false;
  std::string set = "s5b";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--once") == 0) once = true;
    else if (std::strcmp(argv[i], "--set") == 0 && i + 1 < argc) set = argv[++i];
  }
  if (set != "s5a" && set != "s5b" && set != "s5c" && set != "s6a") {
    std::fprintf(stderr, "--set must be s5a, s5b or s5c (session 5 calls 1, 2, 3) or s6a (not run yet)\n");
    return 2;
  }
  const bool actbuf = set == "s5b", ldgsts = set == "s6a", probe = set == "s5c" || ldgsts;
  constexpr int kCalls = 20, kReplays = 11;
  Context ctx;
  std::printf("# %s\n", ctx.device().to_string().c_str());
  const int sms = ctx.device().sm_count;
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

  // Session 5: geometries that prefetch more of each block's K share before the wait (deeper
  // split-K, smaller blocks), the same ones with fewer blocks per SM (occ), beside session 4's.
  using namespace v3;
  // --set s5a (session 5, first device call): geometries that prefetch more of each block's K
  // share before the wait (deeper split-K, smaller blocks), the same with fewer blocks per SM
  // (occ), timelines (trace), the late trigger and the per-warp push reduction.
  // --set s5b (second call): activations once per block (actbuf1 / actbufN beside every config)
  // against the library kernel (full) and the kernel without activation loads (noact).
  const std::string l8o = "wgmma,rows=64,splitk=5,stages=6,l2pf=0,pdl=1";
  const std::vector<Shape> shapes_a = {
      {"llama8b.o", 4096, 4096, 1,
       {{64, 5, 6, 0, true}, {64, 1, 12, 0, true}, {64, 1, 12, 1}, {64, 2, 12}, {64, 2, 8}, {64, 2, 8, 2},
        {64, 3, 11}, {64, 4, 8}, {64, 4, 6}, {64, 4, 6, 2}, {64, 8, 4}, {64, 8, 4, 3}, {128, 8, 4}, {128, 4, 6}},
       {l8o}},
      {"llama8b.o", 4096, 4096, 16, {{64, 5, 6, 0, true}, {64, 4, 6}, {64, 2, 11}}, {l8o}},
      {"llama8b.qkv", 6144, 4096, 1, {{64, 2, 8, 0, true}, {64, 4, 6}, {64, 2, 12}, {64, 1, 12}},
       {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1"}},
      {"tp8.down", 8192, 3584, 1, {{64, 1, 12, 0, true}, {64, 2, 8}, {64, 2, 12}, {64, 4, 7}},
       {"wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,persist=1"}},
      {"super.down", 4096, 5376, 1, {{64, 5, 6}, {64, 4, 8}, {64, 3, 11}, {64, 2, 12}},
       {"wgmma,rows=64,splitk=5,stages=6,l2pf=0,pdl=1"}},
      {"nemoh8b.out_proj", 4096, 8192, 1, {{64, 5, 8}, {64, 4, 8}, {64, 2, 12}},
       {"wgmma,rows=64,splitk=5,stages=8,l2pf=0,pdl=1"}},
      {"llama70b.o", 8192, 8192, 1, {{64, 2, 12, 0, true}, {64, 1, 12}, {64, 2, 8}},
       {"wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1"}},
      {"llama70b.qkv", 10240, 8192, 1, {{64, 2, 8}, {64, 1, 12}, {64, 1, 8}},
       {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1"}},
      {"nemoh8b.down", 4096, 21504, 1, {{64, 5, 8}, {64, 4, 8}, {64, 2, 12}},
       {"wgmma,rows=64,splitk=5,stages=8,l2pf=0,pdl=1"}},
  };
  const std::vector<Shape> shapes_b = {
      {"llama8b.o", 4096, 4096, 1, {{64, 5, 6}, {64, 1, 12}, {64, 2, 12}, {64, 2, 8}, {128, 8, 4}, {64, 4, 6}}, {l8o}},
      {"llama8b.o", 4096, 4096, 16, {{64, 5, 6}, {64, 4, 6}, {64, 2, 11}}, {l8o}},
      {"llama8b.qkv", 6144, 4096, 1, {{64, 2, 8}, {64, 2, 12}, {64, 1, 12}},
       {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1"}},
      {"tp8.down", 8192, 3584, 1, {{64, 1, 12}, {64, 2, 8}}, {"wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1"}},
      {"super.down", 4096, 5376, 1, {{64, 4, 8}, {64, 2, 12}}, {"wgmma,rows=64,splitk=5,stages=6,l2pf=0,pdl=1"}},
      {"nemoh8b.out_proj", 4096, 8192, 1, {{64, 5, 8}, {64, 2, 12}}, {"wgmma,rows=64,splitk=5,stages=8,l2pf=0,pdl=1"}},
      {"llama70b.o", 8192, 8192, 1, {{64, 2, 12}, {64, 2, 8}}, {"wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1"}},
      {"llama70b.qkv", 10240, 8192, 1, {{64, 2, 8}, {64, 1, 8}}, {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1"}},
      {"nemoh8b.down", 4096, 21504, 1, {{64, 5, 8}, {64, 2, 12}}, {"wgmma,rows=64,splitk=5,stages=8,l2pf=0,pdl=1"}},
  };
  // --set s5c (third call): stream probes (tma_probe rows / contiguous, ldg_probe) for the
  // configs below, beside the same config's tma_stream without the wait and read_stream.
  const std::vector<Shape> shapes_c = {
      {"llama8b.o", 4096, 4096, 1, {{64, 1, 12}, {64, 2, 12}, {64, 5, 6}}, {l8o}},
      {"llama70b.o", 8192, 8192, 1, {{64, 2, 12}, {64, 1, 12}}, {"wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1"}},
      {"llama70b.qkv", 10240, 8192, 1, {{64, 2, 8}}, {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1"}},
      {"nemoh8b.down", 4096, 21504, 1, {{64, 2, 12}, {64, 5, 8}}, {"wgmma,rows=64,splitk=5,stages=8,l2pf=0,pdl=1"}},
  };
  // --set s6a (written after session 5's last device call, not run yet): the cp.async weight path
  // (ldgsts_kernel) beside the library tactic, the same config's v3 kernel and the probes.
  const std::vector<Shape> shapes_d = {
      {"llama8b.o", 4096, 4096, 1, {{64, 5, 6}, {64, 2, 12}, {64, 1, 12}}, {l8o}},
      {"llama8b.o", 4096, 4096, 16, {{64, 5, 6}, {64, 4, 6}}, {l8o}},
      {"llama8b.qkv", 6144, 4096, 1, {{64, 2, 8}, {64, 2, 12}}, {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1"}},
      {"super.down", 4096, 5376, 1, {{64, 4, 8}, {64, 5, 6}}, {"wgmma,rows=64,splitk=5,stages=6,l2pf=0,pdl=1"}},
      {"llama70b.o", 8192, 8192, 1, {{64, 2, 12}, {64, 1, 12}, {128, 2, 6}},
       {"wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1"}},
      {"llama70b.qkv", 10240, 8192, 1, {{64, 2, 8}, {64, 1, 12}}, {"wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1"}},
      {"nemoh8b.down", 4096, 21504, 1, {{64, 2, 12}, {64, 5, 8}}, {"wgmma,rows=64,splitk=5,stages=8,l2pf=0,pdl=1"}},
  };
  const std::vector<Shape>& shapes = ldgsts ? shapes_d : probe ? shapes_c : actbuf ? shapes_b : shapes_a;
  const std::vector<int> modes =
      probe    ? std::vector<int>{0, kNoWait, kNoMma | kNoEpi | kNoWait}
      : actbuf ? std::vector<int>{0, kNoAct, kNoWait}
             : std::vector<int>{0,         kEmpty,           kNoLoad,          kNoMma | kNoEpi,
                                kNoEpi,    kNoWait,          kLateTrig,        kEarly,
                                kNoStore,  kPush | kPushWarp, kPush | kPushWarp | kEarly, kTrace,
                                kTrace | kLateTrig, kTrace | kPush | kPushWarp};
  const std::vector<int> few = probe    ? std::vector<int>{0, kNoWait, kNoMma | kNoEpi | kNoWait}
                              : actbuf ? std::vector<int>{0, kNoAct}
                                      : std::vector<int>{0, kNoWait, kLateTrig, kPush | kPushWarp, kTrace,
                                                         kTrace | kPush | kPushWarp};
  constexpr int kMaxBlocks = 4096;
  DeviceBuffer tbuf(size_t(kCalls) * kMaxBlocks * 8 * 8);

  const size_t rot = size_t(256) << 20;
  size_t maxw = 0;
  for (auto& s : shapes) maxw = std::max(maxw, size_t(s.n) * s.k);
  DeviceBuffer pool(rot + 2 * maxw), act(32 * 32768), scales(64), ws(size_t(64) << 20), cnt(1 << 16),
      sink(64);
  DeviceBuffer outs(size_t(kCalls) * 32 * 16384 * 2), ref(32 * 16384 * 2);
  fill_e4m3<<<1024, 256, 0, st>>>(pool.as<uint8_t>(), pool.bytes(), 1);
  fill_e4m3<<<64, 256, 0, st>>>(act.as<uint8_t>(), act.bytes(), 2);
  CK(cudaMemsetAsync(cnt.get(), 0, cnt.bytes(), st));
  const float sc[8] = {0.5f, 0, 0, 0, 0.25f, 0, 0, 0};
  CK(cudaMemcpy(scales.get(), sc, sizeof sc, cudaMemcpyHostToDevice));
  CK(cudaStreamSynchronize(st));

  struct Row {
    std::string shape, cfg, variant;
    double us, floor;
    long mism;
  };
  std::vector<Row> rows;

  for (const Shape& s : shapes) {
    const size_t wb = size_t(s.n) * s.k;
    const size_t stride = (wb + 1023) / 1024 * 1024;
    const int copies = int(std::max<size_t>(2, (rot + wb - 1) / wb));
    const double floor_us = double(wb + size_t(s.m) * s.k + 2 * size_t(s.m) * s.n) / 4.5e12 * 1e6;
    Problem pr;
    pr.m = s.m;
    pr.n = s.n;
    pr.k = s.k;
    const int np = wgmma_n(s.m);

    struct Cand {
      std::string cfg, variant;
      std::function<void(int call, void* out)> run;
      bool checks;  // produces the full output (compared bitwise with the first "full")
      int trace_blocks = 0;  // kTrace: blocks per call (their events are read after the timing)
    };
    std::vector<Cand> cands;
    auto W = [&](int i) { return pool.as<uint8_t>() + size_t(i % copies) * stride; };
    // Tensor maps per copy (encoded once, outside the capture).
    std::vector<std::vector<CUtensorMap>> wmaps(2, std::vector<CUtensorMap>(copies));
    for (int c = 0; c < copies; ++c) {
      encode(&wmaps[0][c], W(c), s.k, s.n, 64);
      encode(&wmaps[1][c], W(c), s.k, s.n, 128);
    }
    auto amap = std::make_shared<CUtensorMap>();
    encode(amap.get(), act.get(), s.k, s.m, np);

    try {
      Tactic t = ctx.choose(pr, "cublaslt");
      for (int rep = 0; rep < 2; ++rep)
        cands.push_back({"cublaslt", rep ? "default(again)" : "default", [&, t, pr](int i, void* out) {
                           GemmArgs a{act.get(), W(i), scales.as<float>(), scales.as<float>() + 4, out};
                           ctx.run_tactic(pr, t, a, st);
                         },
                         false});
    } catch (const std::exception& e) {
      std::printf("# cublaslt: %s\n", e.what());
    }
    for (const std::string& lc : s.lib) {
      Tactic t{"small_m", lc};
      cands.push_back({lc, "library", [&, t, pr](int i, void* out) {
                         GemmArgs a{act.get(), W(i), scales.as<float>(), scales.as<float>() + 4, out};
                         ctx.run_tactic(pr, t, a, st);
                       },
                       true});
    }
    cands.push_back({"ldg", "read_stream", [&, wb](int i, void*) {
                       cudaLaunchConfig_t cfg{};
                       cfg.gridDim = dim3(unsigned(sms * 4));
                       cfg.blockDim = dim3(512);
                       cfg.stream = st;
                       cudaLaunchAttribute at[2];
                       set_launch_attrs(cfg, at, 1, true);
                       CK(cudaLaunchKernelEx(&cfg, read_stream, reinterpret_cast<const uint4*>(W(i)), wb / 16,
                                             sink.as<unsigned>()));
                     },
                     false});
    cands.push_back({"empty", "1 block", [&](int, void*) {
                       cudaLaunchConfig_t cfg{};
                       cfg.gridDim = dim3(1);
                       cfg.blockDim = dim3(32);
                       cfg.stream = st;
                       cudaLaunchAttribute at[2];
                       set_launch_attrs(cfg, at, 1, true);
                       CK(cudaLaunchKernelEx(&cfg, empty_kernel));
                     },
                     false});

    for (const Cfg& c : s.cfgs) {
      char cname[64];
      std::snprintf(cname, sizeof cname, "rows=%d,splitk=%d,stages=%d%s", c.rows, c.splitk, c.stages,
                    c.occ ? (",occ=" + std::to_string(c.occ)).c_str() : "");
      Params kp{};
      kp.a_scale = scales.as<float>();
      kp.b_scale = scales.as<float>() + 4;
      kp.m = s.m;
      kp.n = s.n;
      kp.kblocks = (s.k + 127) / 128;
      kp.kblocks_per_split = (kp.kblocks + c.splitk - 1) / c.splitk;
      kp.splitk = c.splitk;
      kp.stages = c.stages;
      kp.l2pf = 0;
      kp.rows = c.rows;  // the stores skip rows at or beyond it (fitted rows, session 14)
      const int tiles = (s.n + c.rows - 1) / c.rows;
      const dim3 grid(unsigned(tiles), unsigned(c.splitk), 1);
      const size_t stage_b = size_t(c.rows + np) * 128;
      const int own = (c.rows * 2 + c.splitk - 1) / c.splitk;
      size_t smem_lib = c.stages * stage_b + 1024;  // as shared_bytes() (occupancy as the library's)
      if (c.occ > 0)  // pad so that only occ blocks fit an SM (228 KB, 1 KB reserved per block)
        smem_lib = std::max(smem_lib, std::min<size_t>(220 * 1024, 233472 / (c.occ + 1) + 2048));
      const size_t smem_push = smem_lib + size_t(c.splitk) * (np / 2) * own * 4;
      for (int mode : c.every ? modes : few) {
        if ((mode & (kPush | kFixup)) && c.splitk == 1) continue;
        for (int variant = 0; variant < 4; ++variant) {
          // variant 0: as the library launches (cluster for split-K, PDL); 1: PDL off;
          // 2: no cluster attribute (only where the kernel uses no cluster op).
          const bool pdl = variant != 1;
          const bool cluster = variant != 2 && c.splitk > 1 && !(mode & kFixup);
          if (variant == 1 && !(c.every && (mode == 0 || mode == (kPush | kPushWarp)))) continue;
          if (variant == 2 && !(c.every && c.splitk > 1 && (mode & (kNoEpi | kEmpty)))) continue;
          // variant 3: the whole K range of the block requested into L2 before the wait (l2pf=64).
          if (variant == 3 && !(c.every && mode == 0)) continue;
          LaunchFn fn = pick_any(c.rows, np, mode);
          if (!fn) continue;
          std::string vn = std::string(mode_name(mode)) + (pdl ? "" : ",pdl=0") + (variant == 2 ? ",nocluster" : "") +
                           (variant == 3 ? ",l2pf" : "");
          const int wi = c.rows / 128;
          v3::DParams dp{kp, ws.as<float>(), cnt.as<unsigned>(), nullptr};
          if (variant == 3) dp.p.l2pf = 64;
          const bool checks = !(mode & (kEmpty | kNoLoad | kNoMma | kNoAct | kNoEpi | kNoWait | kNoStore));
          const size_t smem = (mode & kPush) ? smem_push : smem_lib;
          const int blocks = int(grid.x * grid.y * grid.z);
          const bool traced = (mode & kTrace) && blocks <= kMaxBlocks;
          cands.push_back({cname, vn, [&, fn, dp, grid, c, smem, pdl, cluster, wi, traced](int i, void* out) {
                             v3::DParams d = dp;
                             d.p.out = out;
                             if (traced)
                               d.trace = reinterpret_cast<unsigned long long*>(tbuf.get()) +
                                         size_t(i) * kMaxBlocks * 8;
                             fn(wmaps[wi][i % copies], *amap, d, grid, c.splitk, smem, st, pdl, cluster);
                           },
                           checks, traced ? blocks : 0});
        }
      }
      if (ldgsts) {
        for (int nw = 0; nw < 2; ++nw) {
          LdgstsFn fn = pick_ldgsts(c.rows, np, nw != 0);
          if (!fn) continue;
          const size_t smem = size_t(c.stages) * (c.rows + np) * 128 + 1024;
          const int64_t kk = s.k;
          const int n_ = s.n;
          cands.push_back({cname, nw ? "ldgsts+nowait" : "ldgsts", [&, fn, kp, grid, c, smem, kk, n_](int i, void* out) {
                             v3::LParams lp{kp, static_cast<const uint8_t*>(W(i)), kk};
                             lp.p.out = out;
                             (void)n_;
                             fn(*amap, lp, grid, c.splitk, smem, st);
                           },
                           nw == 0, 0});
        }
      }
      if (probe && c.rows == 64) {
        // Flat view of each weight copy: [N K / 128 lines][128 B], box {128, 64} (8 KB contiguous).
        auto flat = std::make_shared<std::vector<CUtensorMap>>(copies);
        for (int cp = 0; cp < copies; ++cp) encode(&(*flat)[cp], W(cp), 128, int64_t(s.n) * s.k / 128, 64);
        const int kbl = kp.kblocks, nkbp = kp.kblocks_per_split, sts = c.stages;
        for (int contig = 0; contig < 2; ++contig) {
          cands.push_back({cname, contig ? "tma_probe_contig" : "tma_probe_rows",
                           [&, flat, grid, kbl, nkbp, sts, contig](int i, void*) {
                             cudaLaunchConfig_t cfg{};
                             cfg.gridDim = dim3(grid.x, grid.y, 1);
                             cfg.blockDim = dim3(64);
                             cfg.dynamicSmemBytes = size_t(sts) * 8192 + 1024;
                             cfg.stream = st;
                             cudaLaunchAttribute at[2];
                             set_launch_attrs(cfg, at, 1, true);
                             auto k = contig ? tma_probe<true> : tma_probe<false>;
                             static bool raised[2] = {false, false};
                             if (!raised[contig]) {
                               CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 220 * 1024));
                               raised[contig] = true;
                             }
                             const CUtensorMap& m = contig ? (*flat)[i % copies] : wmaps[0][i % copies];
                             CK(cudaLaunchKernelEx(&cfg, k, m, nkbp, sts, kbl, sink.as<unsigned>()));
                           },
                           false, 0});
        }
        cands.push_back({cname, "ldg_probe", [&, grid, kbl, nkbp](int i, void*) {
                           cudaLaunchConfig_t cfg{};
                           cfg.gridDim = dim3(grid.x, grid.y, 1);
                           cfg.blockDim = dim3(128);
                           cfg.stream = st;
                           cudaLaunchAttribute at[2];
                           set_launch_attrs(cfg, at, 1, true);
                           CK(cudaLaunchKernelEx(&cfg, ldg_probe, static_cast<const uint8_t*>(W(i)), int64_t(s.k), nkbp,
                                                 kbl, sink.as<unsigned>()));
                         },
                         false, 0});
      }
      // Session 5: activations once per block (actbuf1: one 4-D TMA; actbufN: one TMA per K block).
      for (int one = 1; actbuf && one >= 0; --one) {
        ActBufFn fn = pick_actbuf(c.rows, np, one != 0);
        // Same shared memory as the config's (same blocks per SM): the ring loses what the buffer takes.
        const int64_t act_b = int64_t(kp.kblocks_per_split) * np * 128;
        const int sta = int(std::min<int64_t>(16, (int64_t(c.stages) * (c.rows + np) * 128 - act_b) / (c.rows * 128)));
        if (!fn || s.k % 128 || sta < 2 || kp.kblocks_per_split > 256) continue;
        const size_t smem = size_t(sta) * c.rows * 128 + size_t(act_b) + 1024;
        Params kpa = kp;
        kpa.stages = sta;
        auto am4 = std::make_shared<CUtensorMap>();
        if (one && !encode4(am4.get(), act.get(), s.k, s.m, np, kp.kblocks_per_split)) continue;
        const int wi = c.rows / 128;
        const std::string vn = std::string(one ? "actbuf1" : "actbufN") + ",st=" + std::to_string(sta);
        cands.push_back({cname, vn, [&, fn, kpa, grid, c, smem, wi, am4](int i, void* out) {
                           Params d = kpa;
                           d.out = out;
                           fn(wmaps[wi][i % copies], *amap, *am4, d, grid, c.splitk, smem, st);
                         },
                         true, 0});
      }
    }

    if (once) {
      for (auto& c : cands) c.run(0, outs.get());
      CK(cudaStreamSynchronize(st));
      continue;
    }

    // Correctness of the variants that write the whole output: bitwise against the first.
    std::vector<long> mism(cands.size(), -1);
    {
      const size_t ob = size_t(s.m) * s.n * 2;
      std::vector<uint16_t> h0(ob / 2), h(ob / 2);
      bool have = false;
      for (size_t ci = 0; ci < cands.size(); ++ci) {
        if (!cands[ci].checks) continue;
        CK(cudaMemsetAsync(outs.get(), 0xFF, ob, st));
        cands[ci].run(0, outs.get());
        cands[ci].run(0, outs.get());
        CK(cudaStreamSynchronize(st));
        CK(cudaMemcpy(have ? h.data() : h0.data(), outs.get(), ob, cudaMemcpyDeviceToHost));
        if (!have) {
          have = true;
          mism[ci] = 0;
          for (auto v : h0) mism[ci] += v == 0xFFFF;
          continue;
        }
        auto bf = [](uint16_t v) {
          uint32_t u = uint32_t(v) << 16;
          float f;
          std::memcpy(&f, &u, 4);
          return f;
        };
        // ||out - first|| / ||first|| over the output, in units of 1e-4 (another split order rounds
        // differently: ~1e-3 is bf16 rounding; a NaN (unwritten: the poison) counts as a failure).
        double d2 = 0, r2 = 0;
        for (size_t e = 0; e < h.size(); ++e) {
          const double a = bf(h[e]), b = bf(h0[e]);
          d2 += (a - b) * (a - b);
          r2 += b * b;
        }
        const double rel = std::sqrt(d2 / std::max(r2, 1e-30));
        mism[ci] = std::isfinite(rel) ? long(rel * 1e4) : 999999;
      }
    }

    std::vector<cudaGraphExec_t> g(cands.size(), nullptr);
    for (size_t ci = 0; ci < cands.size(); ++ci) {
      cudaGraph_t gr;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < kCalls; ++i) cands[ci].run(i, outs.as<uint8_t>() + size_t(i) * 32 * 16384 * 2);
      CK(cudaStreamEndCapture(st, &gr));
      CK(cudaGraphInstantiate(&g[ci], gr, 0));
      cudaGraphDestroy(gr);
      CK(cudaGraphLaunch(g[ci], st));
    }
    CK(cudaStreamSynchronize(st));
    std::vector<std::vector<double>> smp(cands.size());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int r = 0; r < kReplays; ++r)
      for (size_t ci = 0; ci < cands.size(); ++ci) {
        CK(cudaEventRecord(e0, st));
        CK(cudaGraphLaunch(g[ci], st));
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        smp[ci].push_back(1000.0 * ms / kCalls);
      }
    // Timelines of the traced variants: one more replay each, then per call (calls 2 .. 17, in
    // us, relative to the previous call's last block end `prev`): first/last block start, the
    // producers' wait release (first/last), the last consumer's first full stage and K-loop end,
    // the last block end; averaged over the calls.
    for (size_t ci = 0; ci < cands.size(); ++ci) {
      const int B = cands[ci].trace_blocks;
      if (B == 0) continue;
      CK(cudaMemsetAsync(tbuf.get(), 0, tbuf.bytes(), st));
      CK(cudaGraphLaunch(g[ci], st));
      CK(cudaStreamSynchronize(st));
      std::vector<unsigned long long> h(size_t(kCalls) * kMaxBlocks * 8);
      CK(cudaMemcpy(h.data(), tbuf.get(), h.size() * 8, cudaMemcpyDeviceToHost));
      double acc[9] = {0};
      int n = 0;
      auto ev = [&](int call, int b, int e) { return h[(size_t(call) * kMaxBlocks + b) * 8 + e]; };
      auto mn = [&](int call, int e) {
        unsigned long long v = ~0ull;
        for (int b = 0; b < B; ++b)
          if (ev(call, b, e)) v = std::min(v, ev(call, b, e));
        return double(v);
      };
      auto mx = [&](int call, int e) {
        unsigned long long v = 0;
        for (int b = 0; b < B; ++b) v = std::max(v, ev(call, b, e));
        return double(v);
      };
      for (int call = 2; call < kCalls - 2; ++call, ++n) {
        const double prev = mx(call - 1, 5);
        const double x[9] = {mx(call, 5) - prev, mn(call, 0) - prev, mx(call, 0) - prev, mn(call, 1) - prev,
                             mn(call, 2) - prev, mx(call, 2) - prev, mx(call, 3) - prev, mx(call, 4) - prev,
                             mx(call, 5) - mx(call, 4)};
        for (int j = 0; j < 9; ++j) acc[j] += x[j] / 1000.0;
      }
      std::printf("trace|%s.m%d|%s|%s|blocks=%d|period %.2f|start %.2f..%.2f|issued %.2f|wait %.2f..%.2f|"
                  "first %.2f|kend %.2f|epi %.2f\n",
                  s.name, s.m, cands[ci].cfg.c_str(), cands[ci].variant.c_str(), B, acc[0] / n, acc[1] / n,
                  acc[2] / n, acc[3] / n, acc[4] / n, acc[5] / n, acc[6] / n, acc[7] / n, acc[8] / n);
      std::fflush(stdout);
    }
    for (auto x : g) cudaGraphExecDestroy(x);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    char sn[64];
    std::snprintf(sn, sizeof sn, "%s.m%d", s.name, s.m);
    for (size_t ci = 0; ci < cands.size(); ++ci)
      rows.push_back({sn, cands[ci].cfg, cands[ci].variant, median(smp[ci]), floor_us, mism[ci]});
  }

  std::printf("shape|config|variant|us|floor_us|rel_err_1e4\n");
  for (const Row& r : rows)
    std::printf("%s|%s|%s|%.3f|%.3f|%ld\n", r.shape.c_str(), r.cfg.c_str(), r.variant.c_str(), r.us, r.floor, r.mism);
  return 0;
}
