// The mid_m kernel (sm_90a; docs/mid_m.md has the design and its budget). Swapped orientation: the
// block's weight rows are the wgmma's M side (operand A, 64 rows per consumer warpgroup), the
// activation rows padded to NP its N side (operand B); out^T = W * A^T.
//
// Block: kWG consumer warpgroups (warps 0 .. 4 kWG - 1), then one producer warp whose lane 0
// issues every TMA. Ring of `stages` stages of kKS K blocks (kstage), each K block [weight tile:
// rows x 128 B][activation tile: NP x 128 B], 128-byte swizzled, with a full / empty mbarrier pair
// per stage; K is walked in steps of a stage (past the end of K the copies read zeros). Consumers
// keep one stage's wgmma in flight while waiting for the next, and give a stage back once its
// wgmma are done. Work: units (M block, row tile, batch), one per block, or walked by a persistent
// grid with the ring running on across units (the epilogue of one overlaps the next one's loads).
// msplit=T splits the activation rows into T M blocks of block_m rows; without it the one M block
// is all of M.
//
// mcast=2: two neighbouring blocks form a cluster pair and share one operand, multicast into both:
// without msplit the blocks of adjacent row tiles share the activation tile (the pair's first block
// loads it); with msplit adjacent M blocks of one row tile share the weight tile (each loads half).
// A stage's slot is refilled once both blocks' consumers gave it back (each consumer warp arrives
// on both blocks' empty barrier). Split-K: the cluster's ranks along y split K; once every K loop
// is over they push their partial sums into the owner's ring (st.shared::cluster, fire and
// forget), and each owner adds the ranks in order 0, 1, ... (deterministic) and stores. A cluster
// never lets a block exit while another may still reach into it (the closing cluster barrier).
#pragma once

#include <cuda.h>  // CUtensorMap (types only: the library does not link libcuda)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backends/mid_m/mid_m_layout.h"
#include "core/sm90/arch.cuh"
#include "core/sm90/cluster.cuh"
#include "core/sm90/mbarrier.cuh"
#include "core/sm90/pdl.cuh"
#include "core/sm90/tma.cuh"
#include "core/sm90/wgmma.cuh"

namespace fp8gemm::mid_m::kernel {

using namespace ::fp8gemm::sm90;

struct Params {
  const float* a_scale;
  const float* b_scale;
  void* out;  // [batch, m, n]
  int m, n;
  int ksteps;  // stages along K: ceil(ceil(k / 128) / kstage)
  int splitk;
  int stages;
  int mcast;              // 1 or 2: blocks of a multicast pair (cluster x)
  int shares_weights;     // the pair shares the weight tile (msplit), else the activation tile
  int msplit;             // M blocks per row tile (units are M block fastest)
  int block_m;            // activation rows of an M block: ceil(m / msplit)
  int tiles;              // padded row tiles per batch (units are batch-major)
  int real_tiles;         // ceil(n / rows): tiles at or past it are never stored
  int units;              // msplit * tiles * batch
  int out_fp16;
  int late_trigger;  // pdl=2: release the dependents after the K loop
};

// Block: kWG consumer warpgroups and the producer warp.
template <int kWG>
constexpr int kThreads = block_threads(kWG);

#ifdef FP8GEMM_SM90A

// This split rank's K steps: an even share, [kb0, kb0 + nkb), nkb >= 1 when splitk <= ksteps.
__device__ __forceinline__ void split_range(const Params& p, int& kb0, int& nkb) {
  const int y = int(blockIdx.y);
  kb0 = int(int64_t(y) * p.ksteps / p.splitk);
  nkb = int(int64_t(y + 1) * p.ksteps / p.splitk) - kb0;
}

// A unit's place: its M block's first activation row, its row tile and its batch.
struct Unit {
  int m0, tile, batch;
};
__device__ __forceinline__ Unit unit_of(const Params& p, int u) {
  const int t = u / p.msplit;
  return {(u % p.msplit) * p.block_m, t % p.tiles, t / p.tiles};
}

// Output element (m, n) of unit w, if inside the output and w's M block (the activation tile's
// rows past it are the next block's).
__device__ __forceinline__ void store_output(const Params& p, const Unit& w, int m, int n, float v) {
  if (n >= p.n || m >= p.m || m >= w.m0 + p.block_m) return;
  const int64_t o = (int64_t(w.batch) * p.m + m) * int64_t(p.n) + n;
  if (p.out_fp16) static_cast<__half*>(p.out)[o] = __float2half_rn(v);
  else static_cast<__nv_bfloat16*>(p.out)[o] = __float2bfloat16_rn(v);
}

// Accumulator i of consumer thread tc, scaled, to out. m64nNP f32 fragment: thread t of a
// warpgroup holds MMA rows 16 (t / 32) + (t % 32) / 4 (+8 for values 2, 3 mod 4), i.e. weight rows
// (output columns n), and MMA columns 8 j + 2 (t % 4) (+1 for odd values), i.e. activation rows
// (output rows m0 + m), in value 4 j + q; warpgroup wg holds weight rows 64 wg ... of the row tile
// starting at n0.
__device__ __forceinline__ void store_accumulator(const Params& p, const Unit& w, int n0, float scale, int tc, int i,
                                                  float v) {
  const int wg = tc >> 7, t = tc & 127, l = t & 31;
  const int r = wg * 64 + (t >> 5) * 16 + (l >> 2) + ((i & 2) ? 8 : 0);
  const int m = (i >> 2) * 8 + (l & 3) * 2 + (i & 1);
  store_output(p, w, w.m0 + m, n0 + r, v * scale);
}

#endif  // FP8GEMM_SM90A

template <class WT, class AT, int NP, int kWG, int kKS>
__global__ void __launch_bounds__(kThreads<kWG>, blocks_per_sm_by_registers(kWG, NP))
    mid_m_kernel(const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap,
                 const Params p) {
#ifdef FP8GEMM_SM90A
  constexpr int kKB = kKBlockBytes;
  constexpr int kRows = 64 * kWG;
  // A K block's weight and activation tiles; a stage is kKS of them.
  constexpr int kWBytes = kRows * kKB, kABytes = NP * kKB, kTiles = kWBytes + kABytes, kStage = kKS * kTiles;
  constexpr int kAcc = NP / 2;           // per consumer thread
  constexpr int kConsumers = kWG * 128;  // consumer threads
  static_assert(kTiles % 1024 == 0, "stage tiles must stay 1024-byte aligned");

  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[kMaxStages];
  __shared__ __align__(8) uint64_t empty_bar[kMaxStages];
  uint8_t* ring = ring_base(smem_raw);

  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const int stages = p.stages, mc = p.mcast, S = p.splitk;
  const bool clustered = mc * S > 1;
  // The cluster is (mcast, splitk): this block is (blockIdx.x % mc, blockIdx.y) in it, and rank
  // x + mc * y (x fastest).
  const int cx = int(blockIdx.x) % mc;
  const uint32_t pair_rank0 = uint32_t(mc * int(blockIdx.y));  // rank of this pair's first block
  int kb0, nkb;
  split_range(p, kb0, nkb);

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full_bar[s], 1);                  // the producer's expect_tx arrival
      mbar_init(&empty_bar[s], uint32_t(4 * kWG * mc));  // every consumer warp of the pair
    }
    fence_barrier_init();
  }
  // A multicast writes into the peer's ring and completes on its barrier: both must be set up.
  if (mc > 1) cluster_sync_all();
  else __syncthreads();
  if (!p.late_trigger) pdl_launch_dependents();

  float acc[kAcc];
  const int step = int(gridDim.x);

  if (warp == 4 * kWG) {
    // Producer: one stage per (unit, K block) in the consumers' order, across unit boundaries.
    if (lane == 0 && nkb > 0 && int(blockIdx.x) < p.units) {
      prefetch_tensormap(&wmap);
      prefetch_tensormap(&amap);
      uint64_t pol_w, pol_a;
      stream_policies(pol_w, pol_a);
      const bool share_w = p.shares_weights != 0, share_a = mc > 1 && !share_w;
      const uint16_t pair_mask = uint16_t(((1u << mc) - 1u) << pair_rank0);
      // Where a load goes: unit u, its K step kb0 + kk, and the unit's coordinates, decoded once
      // per unit (a division by a run-time value is a chain of dependent instructions that one
      // thread must not pay per stage: it would pace the whole ring).
      struct Cursor {
        int u, kk, row0, m0, batch;
      };
      const auto at = [&](int u) {
        Cursor c{u, 0, 0, 0, 0};
        if (u < p.units) {
          const Unit w = unit_of(p, u);
          c.row0 = min(w.tile, p.real_tiles - 1) * kRows;  // a padded tile past n reads the last real one
          c.m0 = w.m0;
          c.batch = w.batch;
        }
        return c;
      };
      const auto advance = [&](Cursor& c) {
        if (++c.kk == nkb) c = at(c.u + step);
      };
      const auto load_w = [&](const Cursor& c, int s) {
#pragma unroll
        for (int j = 0; j < kKS; ++j) {
          const int kx = ((kb0 + c.kk) * kKS + j) * kKB;
          uint8_t* dst = ring + s * kStage + j * kTiles;
          if (share_w) {  // this block's half of the tile, into both blocks' rings
            constexpr int kHalf = kRows / 2;
            tma_load_multicast(dst + cx * (kHalf * kKB), &wmap, &full_bar[s], kx, c.row0 + cx * kHalf, c.batch,
                               pair_mask, pol_w);
          } else {
            tma_load(dst, &wmap, &full_bar[s], kx, c.row0, c.batch, pol_w);
          }
        }
      };
      const auto load_a = [&](const Cursor& c, int s) {
        if (share_a && cx != 0) return;  // the pair's first block loads the shared activation tile
#pragma unroll
        for (int j = 0; j < kKS; ++j) {
          const int kx = ((kb0 + c.kk) * kKS + j) * kKB;
          uint8_t* dst = ring + s * kStage + j * kTiles + kWBytes;
          if (share_a) tma_load_multicast(dst, &amap, &full_bar[s], kx, c.m0, c.batch, pair_mask, pol_a);
          else tma_load(dst, &amap, &full_bar[s], kx, c.m0, c.batch, pol_a);
        }
      };
      // The first `stages` loads' weights before waiting for the previous kernel (they do not
      // depend on it), each stage's bytes counted first; their activations after the wait.
      Cursor c = at(int(blockIdx.x));
      int pre = 0;
      for (Cursor w = c; pre < stages && w.u < p.units; ++pre, advance(w)) {
        mbar_arrive_expect_tx(&full_bar[pre], kStage);
        load_w(w, pre);
      }
      pdl_wait();
      for (int i = 0; i < pre; ++i, advance(c)) load_a(c, i);
      int s = pre == stages ? 0 : pre;  // if pre < stages every load is issued already
      uint32_t phase = 0;               // completions of empty_bar[s] seen so far, mod 2
      for (; c.u < p.units; advance(c)) {
        mbar_wait(&empty_bar[s], phase);
        mbar_arrive_expect_tx(&full_bar[s], kStage);
        load_w(c, s);
        load_a(c, s);
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
    }
  } else {
    // Consumers: warpgroup wg multiplies weight rows 64 wg .. 64 wg + 63 of each stage.
    const int wg = warp >> 2;
    const int tc = int(threadIdx.x);
    pdl_wait();  // the scales and out belong to the stream order
    const float scale = *p.a_scale * *p.b_scale;
    // Gives stage `slot` back: to this block's producer, and with multicast to the pair's first
    // block's too (every block of the pair counts every consumer warp of both).
    const auto release = [&](int slot) {
      __syncwarp();
      if (mc == 1) {
        if (lane == 0) mbar_arrive(&empty_bar[slot]);
      } else if (lane < mc) {
        mbar_arrive_cluster(mapa_rank(smem_addr(&empty_bar[slot]), pair_rank0 + uint32_t(lane)));
      }
    };
    int s = 0;
    uint32_t phase = 0;
    for (int u = int(blockIdx.x); u < p.units; u += step) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
      int prev = -1;
      for (int i = 0; i < nkb; ++i) {
        mbar_wait(&full_bar[s], phase);
        fence_acc(acc);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < kKS; ++j) {
          const uint32_t base = smem_addr(ring + s * kStage + j * kTiles);
          const uint64_t da = smem_desc(base + wg * (64 * kKB));
          const uint64_t db = smem_desc(base + kWBytes);
#pragma unroll
          for (int kk = 0; kk < 4; ++kk)  // +32 bytes of K a step (2 in the descriptor's 16-byte units)
            wgmma_fp8<WT, AT, NP>(acc, da + 2 * kk, db + 2 * kk);
        }
        wgmma_commit();
        fence_acc(acc);
        wgmma_wait<1>();  // the previous stage's wgmma are done: its slot goes back
        fence_acc(acc);
        if (prev >= 0) release(prev);
        prev = s;
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
      fence_acc(acc);
      if (prev >= 0) release(prev);  // the ring runs on into the next unit
      if (S > 1) break;              // one unit per block: the cluster reduces it below
      const Unit w = unit_of(p, u);
      if (w.tile >= p.real_tiles) continue;
#pragma unroll
      for (int i = 0; i < kAcc; ++i) store_accumulator(p, w, w.tile * kRows, scale, tc, i, acc[i]);
    }
    if (S > 1 && p.late_trigger) pdl_launch_dependents();
    if (S > 1) {
      // Split-K: once every block of the cluster is past its K loop (the first barrier, below, by
      // all threads), consumer thread tc's accumulators go to rank tc % S, slot [rank][i][tc / S] of
      // its ring; then (second barrier) each rank adds the ranks' slots in order 0, 1, ... for the
      // threads it owns and stores.
      cluster_sync_all();
      const int rank = int(blockIdx.y);
      const int own = (kConsumers + S - 1) / S;  // consumer threads a rank reduces
      {
        const uint32_t dst = mapa_rank(smem_addr(ring), uint32_t(cx + mc * (tc % S))) +
                             4u * uint32_t(rank * kAcc * own + tc / S);
#pragma unroll
        for (int i = 0; i < kAcc; ++i) st_cluster_f32(dst + 4u * uint32_t(i * own), acc[i]);
      }
      cluster_sync_all();
      const float* red = reinterpret_cast<const float*>(ring);
      const Unit w = unit_of(p, int(blockIdx.x));
      const int owned = (kConsumers - rank + S - 1) / S;  // threads t < kConsumers with t % S == rank
      if (w.tile < p.real_tiles)
        for (int e = tc; e < owned * kAcc; e += kConsumers) {
          const int li = e % owned, i = e / owned;
          float v = 0.f;
          for (int q = 0; q < S; ++q) v += red[(q * kAcc + i) * own + li];
          store_accumulator(p, w, w.tile * kRows, scale, li * S + rank, i, v);
        }
      return;  // the consumers are past both cluster barriers: nothing reaches into this block now
    }
  }
  if (p.late_trigger) pdl_launch_dependents();
  if (S > 1) {
    // The producer warp's part of the two split-K barriers above.
    cluster_sync_all();
    cluster_sync_all();
  } else if (clustered) {
    // Multicast pair: no block leaves while its peer may still arrive on its empty barriers.
    cluster_sync_all();
  }
#else
  __trap();  // wgmma, TMA multicast and clusters exist on sm_90a only (can_implement refuses others)
#endif
}

}  // namespace fp8gemm::mid_m::kernel
