// The small_m kernels' shared device code: their Params, the consumers' K loop and the epilogues
// (sm_90a only; the mbarrier, TMA and wgmma helpers are src/core/sm90's). The families: small_m_config.h.
//
// Swapped orientation: 64 weight rows per consumer warpgroup are the wgmma's M side (operand A,
// from shared memory), the m <= 32 activation rows padded to NP = 8..32 its N side (operand B).
// Both operands are K-major in shared memory with the 128-byte swizzle: a ring unit holds
// [64*W rows x 128 bytes of K] of weights and [NP rows x 128 bytes] of activations, written by
// TMA (out-of-bounds rows and the K tail are zero-filled) or cp.async, and read by four m64nNPk32
// wgmma. Fitted rows: the block owns only its first `rows` of the 64 W MMA rows; with TMA weights
// its weight tile is `rows` rounded up to 8, so the MMA reads on into the activation tile and the
// next stage for rows that are never stored (RingLayout, small_m_layout.h).
//
// A producer runs a ring of `stages` full/empty mbarriers; the weights of the first stages are
// requested before griddepcontrol.wait (they do not depend on the previous kernel; the
// activations and scales do). Split-K: a cluster of `splitk` blocks along K, reduced through
// distributed shared memory in rank order (deterministic, no workspace).
#pragma once

#include <cooperative_groups.h>
#include <cuda.h>  // CUtensorMap (types only: the library does not link libcuda)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "backends/small_m/small_m_launch.h"
#include "backends/small_m/small_m_layout.h"
#include "fp8gemm/check.h"
#include "core/sm90/arch.cuh"
#include "core/sm90/cluster.cuh"
#include "core/sm90/cp_async.cuh"
#include "core/sm90/mbarrier.cuh"
#include "core/sm90/tma.cuh"
#include "core/sm90/wgmma.cuh"

namespace fp8gemm::small_m {

namespace sm90 {

// The shared sm_90a helpers (src/core/sm90: mbarriers, TMA, cp.async, cluster, descriptors).
using namespace ::fp8gemm::sm90;

struct Params {
  const float* a_scale;
  const float* b_scale;
  void* out;  // [batch, m, n]
  int m, n;
  int kblocks;            // ceil(k / 128)
  int kblocks_per_split;  // per cluster rank (LaunchShape)
  int splitk;
  int stages;
  int out_fp16;
  // The TMA ring's L2 prefetch index runs this many K blocks ahead of the ring; 0 in every tactic
  // (older names spelled it l2pf=0). It stays a run-time value so that the kernel's code stays as it was built
  // and measured.
  int l2pf;
  int tiles;  // persistent kernel: row tiles per batch (ceil(n / rows))
  int units;  // persistent kernel: tiles * batch
  const uint8_t* w;  // cp.async kernel: weights [batch][n][k] (the TMA kernels read a tensor map)
  int64_t k;         // cp.async and activation-once kernels: bytes of K per row (a multiple of 16)
  const uint8_t* a;  // activation-once kernel: activations [batch][m][k]
  int late_trigger;  // one-shot kernels: release dependents after the K loop (pdl=2)
  int early;  // TMA ring: > 0: only this many stages of weights are requested before the wait
  int rows;   // weight rows per block (c.rows): the stores skip a fragment's rows at or beyond it
  // The one-shot rings (RingLayout, small_m_layout.h): a ring stage's stride, where a unit's
  // activation tile starts, and the bytes a unit's copies bring (expect_tx). Fitted rows make them
  // differ from RingStage's.
  int stage_bytes, w_bytes, stage_tx;
  // kblocks=B: units per ring stage (1 otherwise), each laid out as a one-unit stage `kb_bytes`
  // apart (stage_bytes = B * kb_bytes + pad; w_bytes and stage_tx are per unit).
  int stage_kblocks, kb_bytes;
  // [n] of the output type, added to each output in float32 before it is rounded: read only by
  // the kernels built for BiasParams.
  const void* bias;
  // Unused: keeps the parameter block at the size the kernels were built and measured with (ptxas
  // compiles them differently for a smaller one).
  int64_t reserved[2];
};

// The same parameters for the kernels that add Params::bias in their epilogue: a kernel is
// instantiated for one or the other, so that the kernels without a bias keep the code they were
// measured with (a run-time branch in the store slowed some tactics by up to 6%).
struct BiasParams : Params {};
template <class P>
inline constexpr bool kAddsBias = std::is_same_v<P, BiasParams>;

// One stage of the TMA-layout ring (the TMA, cp.async and persistent kernels): 128 bytes of K of
// the block's 64 W weight rows, then of its NP activation rows, both 128-byte swizzled. rows=32
// blocks (K pairs; W = 1) fill the same 64 weight rows with two K blocks of their 32 rows (rows
// 32..63: the second) and the NP activation rows with the two K blocks' NP / 2 rows each.
template <int W, int NP>
struct RingStage {
  static constexpr int kKB = 128;               // bytes of K per stage
  static constexpr int kWBytes = W * 64 * kKB;  // weight tile
  static constexpr int kABytes = NP * kKB;      // activation tile
  static constexpr int kBytes = kWBytes + kABytes;
  static_assert(kBytes % 1024 == 0, "stage tiles must stay 1024-byte aligned");
};

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FP8GEMM_SMALL_M_SM90A 1
#endif

#ifdef FP8GEMM_SMALL_M_SM90A

// This cluster rank's K blocks (the split runs along grid y): [kb0, kb0 + nkb), nkb >= 0.
__device__ __forceinline__ void split_k_blocks(const Params& p, int& kb0, int& nkb) {
  kb0 = int(blockIdx.y) * p.kblocks_per_split;
  nkb = max(0, min(kb0 + p.kblocks_per_split, p.kblocks) - kb0);
}

// Start of the one-shot kernels' blocks: thread 0 initializes the ring's barriers (full:
// `full_arrivals` complete a stage; empty: one arrival per consumer warp), everyone waits for it,
// and dependents may launch (their prologue and weight prefetch) once every block got here;
// unless `trigger` is false (pdl=2): the kernel then releases them after its K loop
// (release_dependents_late).
__device__ __forceinline__ void start_block(uint64_t* full_bar, uint64_t* empty_bar, int stages,
                                            uint32_t full_arrivals, uint32_t consumer_warps, bool trigger = true) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full_bar[s], full_arrivals);
      mbar_init(&empty_bar[s], consumer_warps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();
  if (trigger) asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

// pdl=2: every thread of the block, once past its part of the K loop, releases the dependents
// (a block that never gets here releases them when it exits).
__device__ __forceinline__ void release_dependents_late(const Params& p) {
  if (p.late_trigger) asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

// D(64 x NP, f32) += A(64 x 32 weights) * B(32 x NP activations), descriptors of both in shared
// memory; A type = weight dtype, B type = activation dtype; scale-d = 1 (accumulate).
template <class T>
struct CoreOperand;
template <>
struct CoreOperand<E4M3> {
  using type = ::fp8gemm::sm90::E4M3;
};
template <>
struct CoreOperand<E5M2> {
  using type = ::fp8gemm::sm90::E5M2;
};
template <class WT, class AT, int NP>
__device__ __forceinline__ void wgmma(float (&d)[NP / 2], uint64_t da, uint64_t db) {
  wgmma_fp8<typename CoreOperand<WT>::type, typename CoreOperand<AT>::type, NP>(d, da, db);
}

// The end of a ring stage's MMA in the consumers' K loops: commit the stage's wgmma (two
// accumulator chains) and keep them in flight; the previous stage's are done, so its slot goes back
// to the producer; the ring position moves on.
template <int NA>
__device__ __forceinline__ void end_stage(float (&acc)[NA], float (&acc2)[NA], uint64_t* empty_bar, int stages,
                                          int lane, int& s, uint32_t& phase, int& prev) {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  fence_acc(acc);
  fence_acc(acc2);
  asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  fence_acc(acc);
  fence_acc(acc2);
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

// After the last stage: every wgmma complete, the second chain added into the first.
template <int NA>
__device__ __forceinline__ void finish_chains(float (&acc)[NA], float (&acc2)[NA]) {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  fence_acc(acc);
  fence_acc(acc2);
#pragma unroll
  for (int i = 0; i < NA; ++i) acc[i] += acc2[i];
}

// The consumers' K loop over one unit of work: per ring stage, wait until it is full, issue its
// four k32 wgmma for this warpgroup's 64 weight rows (a RingStage: St::kKB bytes of K of the
// weights, then of the activations), keep them in flight and give the previous stage back (its
// wgmma are done). s / phase / prev carry the ring position across calls: the persistent
// kernel runs the ring on from one unit to the next. Returns with every wgmma complete.
// kGenericWrites: the weights were written by cp.async (the generic proxy), which wgmma (the
// async proxy) sees only after a proxy fence on the reading side, once the full barrier says the
// writes landed. TMA writes are async-proxy already and need none.
// stage_bytes / w_bytes: the stage stride and where its activation tile starts (St's but in the
// one-shot rings with fitted rows: Params::stage_bytes).
// kKB > 1 (the one-shot rings, kblocks=B): a stage holds kKB units `kb_bytes` apart, all of them
// multiplied (a split's last stage is padded with zero-filled K blocks by the producer):
// a fixed, branch-free sequence, so that ptxas keeps the wgmma in flight together (a branch
// between them made it wait for each one, WARPGROUP.DEPBAR after every QGMMA).
template <class WT, class AT, int NP, class St, bool kGenericWrites = false, int kKB = 1>
__device__ __forceinline__ void consume_k_blocks(float (&acc)[NP / 2], int nkb, uint8_t* ring, uint64_t* full_bar,
                                                 uint64_t* empty_bar, int stages, int wg, int lane, int& s,
                                                 uint32_t& phase, int& prev, int stage_bytes = St::kBytes,
                                                 int w_bytes = St::kWBytes, int kb_bytes = 0) {
  // Two accumulator chains (odd k32 steps into acc2): a wgmma into one accumulator waits for the
  // one before it, and a 64 x 8 x 32 step is short.
  float acc2[NP / 2];
#pragma unroll
  for (int i = 0; i < NP / 2; ++i) acc2[i] = 0.f;
  for (int i = 0; i < nkb; ++i) {
    mbar_wait(&full_bar[s], phase);
    if constexpr (kGenericWrites) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    const uint32_t base = smem_addr(ring + s * stage_bytes);
    const uint64_t da = smem_desc(base + wg * (64 * St::kKB));
    const uint64_t db = smem_desc(base + w_bytes);
    fence_acc(acc);
    fence_acc(acc2);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int j = 0; j < kKB; ++j) {
      const uint64_t step = uint64_t(j * kb_bytes) >> 4;  // descriptors count 16-byte units
#pragma unroll
      for (int kk = 0; kk < 4; kk += 2) {  // +32 bytes of K a step
        wgmma<WT, AT, NP>(acc, da + step + 2 * kk, db + step + 2 * kk);
        wgmma<WT, AT, NP>(acc2, da + step + 2 * kk + 2, db + step + 2 * kk + 2);
      }
    }
    end_stage(acc, acc2, empty_bar, stages, lane, s, phase, prev);
  }
  finish_chains(acc, acc2);
}

// Writes v (+ bias[n] with BiasParams) to output element (m, n) of the batch starting at out_base
// (bf16 or fp16), if it is inside the output.
template <class P>
__device__ __forceinline__ void store_output(const P& p, int64_t out_base, int m, int n, float v) {
  if (n >= p.n || m >= p.m) return;
  const int64_t o = out_base + int64_t(m) * p.n + n;
  if (p.out_fp16) {
    if constexpr (kAddsBias<P>) v += __half2float(static_cast<const __half*>(p.bias)[n]);
    static_cast<__half*>(p.out)[o] = __float2half_rn(v);
  } else {
    if constexpr (kAddsBias<P>) v += __bfloat162float(static_cast<const __nv_bfloat16*>(p.bias)[n]);
    static_cast<__nv_bfloat16*>(p.out)[o] = __float2bfloat16_rn(v);
  }
}

// Writes scale * v, accumulator i of consumer thread tc, to out. Fragment of m64nNP f32:
// thread tc holds weight rows (output columns n) row0 + 16 (tc/32) + (tc%32)/4 (+8 for q >= 2)
// and activation rows (output rows m) 8 j + 2 (tc%4) + (q & 1) in acc[4 j + q]; out_base is
// the batch's first output element. Rows at or beyond the block's p.rows are not its own (fitted
// rows: the MMA's rows past them read zeros or, with TMA weights, whatever the ring holds there)
// and are not stored.
template <class P>
__device__ __forceinline__ void store_fragment(const P& p, int row0, int64_t out_base, float scale, int tc, int i,
                                               float v) {
  const int l = tc & 31, j = i >> 2, q = i & 3;
  const int r = (tc >> 5) * 16 + (l >> 2) + ((q & 2) ? 8 : 0);  // (tc >> 5): warp incl. wg
  const int m = j * 8 + (l & 3) * 2 + (q & 1);
  if (r < p.rows) store_output(p, out_base, m, row0 + r, v * scale);
}

// Which output element value i of consumer thread tc is: the m64nNP accumulator fragment above.
struct AccumulatorFragment {
  template <class P>
  __device__ __forceinline__ static void store(const P& p, int row0, int64_t out_base, float scale, int tc, int i,
                                               float v) {
    store_fragment(p, row0, out_base, scale, tc, i, v);
  }
};

// Epilogue of the one-shot kernels (TMA and cp.async rings, activation once): consumer threads
// (threads 0 .. 128 W - 1, `consumer`) hold kAcc values each; Frag::store says which output
// element each one is. Without split-K they store them; with split-K every rank's partial sums go
// to its now idle ring, [i][consumer thread], and each rank finishes a contiguous share of the
// outputs, adding the ranks in order 0, 1, ... (deterministic). kBlockThreads: all threads of the
// block (they share the reduction). Called by every thread of the block.
template <int W, int NP, int kBlockThreads, int kAcc = NP / 2, class Frag = AccumulatorFragment, class P = Params>
__device__ __forceinline__ void finish_block(const P& p, const float (&acc)[kAcc], uint8_t* ring, int row0,
                                             int batch, bool consumer) {
  namespace cg = cooperative_groups;
  constexpr int kConsumers = W * 128;
  asm volatile("griddepcontrol.wait;\n" ::: "memory");  // scales and out belong to the stream order
  const float scale = *p.a_scale * *p.b_scale;
  const int64_t out_base = int64_t(batch) * p.m * int64_t(p.n);
  auto store = [&](int tc, int i, float v) { Frag::store(p, row0, out_base, scale, tc, i, v); };
  if (p.splitk == 1) {
    if (consumer) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) store(int(threadIdx.x), i, acc[i]);
    }
    return;
  }
  __syncthreads();  // all wgmma and weight/activation traffic of this block is over (the ring is free)
  float* partial = reinterpret_cast<float*>(ring);
  if (consumer) {
#pragma unroll
    for (int i = 0; i < kAcc; ++i) partial[i * kConsumers + int(threadIdx.x)] = acc[i];
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  const int rank = int(cluster.block_rank());
  constexpr int kTotal = kAcc * kConsumers;
  const int share = (kTotal + p.splitk - 1) / p.splitk;
  const int e_end = min(kTotal, (rank + 1) * share);
  for (int e = rank * share + int(threadIdx.x); e < e_end; e += kBlockThreads) {
    float v = 0.f;
    for (int q = 0; q < p.splitk; ++q) v += cluster.map_shared_rank(partial, q)[e];
    store(e % kConsumers, e / kConsumers, v);
  }
  cluster.sync();  // no block may exit while another still reads its shared memory
}

// A ring stage holds `kblocks` units (kblocks=B, 1 otherwise): K blocks, or with K pairs (rows=32,
// kKPair) pairs of consecutive K blocks, each unit laid out as a one-unit stage (RingStage).
// stage_count: the stages of a block whose split covers nkb K blocks (an odd range's last pair
// reads past the tensor, which fills zeros; the last stage is padded). stage_kblock: the first K
// block of unit j of stage i, or `past_end` (a K block past the tensor's K, read as zeros: it adds
// nothing, and the consumers multiply every unit of a stage) for the padding past the range.
template <bool kKPair>
__device__ __forceinline__ int stage_count(int nkb, int kblocks = 1) {
  const int units = kKPair ? (nkb + 1) / 2 : nkb;
  return (units + kblocks - 1) / kblocks;
}
template <bool kKPair, int kKBlocks = 1>
__device__ __forceinline__ int stage_kblock(int kb0, int nkb, int i, int j, int past_end) {
  constexpr int kStep = kKPair ? 2 : 1;  // K blocks per unit
  if constexpr (kKBlocks == 1) return kb0 + kStep * i;
  const int u = i * kKBlocks + j;
  return u * kStep < nkb ? kb0 + kStep * u : past_end;
}

// A stage's activation tile by TMA into `dst`: the kNA rows of K block kb, and with K pairs those
// of kb + 1 right behind them (the MMA's N holds both).
template <int kNA, bool kKPair>
__device__ __forceinline__ void tma_stage_activations(uint8_t* dst, const CUtensorMap* amap, uint64_t* bar, int kb,
                                                      int batch, uint64_t policy) {
  constexpr int kKB = 128;
  tma_load(dst, amap, bar, kb * kKB, 0, batch, policy);
  if constexpr (kKPair) tma_load(dst + kNA * kKB, amap, bar, (kb + 1) * kKB, 0, batch, policy);
}

// rows=32 (K pairs, see RingStage): the warpgroup's 64 MMA rows are the block's 32 weight rows
// twice, rows 32..63 holding the stage's second K block, and its 2 NA activation columns are
// the two K blocks' activations, so D = [W_a; W_b] x [X_a | X_b] and output (row r, column m) is
// D[r][m] + D[32 + r][NA + m]. In the m64nNP fragment (store_fragment) warps 2 and 3 hold rows
// 32..63, and the second half of their values (columns NA..) are exactly what the same lane of
// warp w - 2 needs: they go through the idle ring. out: the first 32 rows' sums (warps 0 and 1;
// zero for warps 2 and 3, whose values KPairFragment does not store). Called by every thread.
template <int NP>
__device__ __forceinline__ void combine_k_pair(const float (&acc)[NP / 2], float (&out)[NP / 4], uint8_t* ring,
                                               bool consumer) {
  constexpr int kHalf = NP / 4;
  float* scratch = reinterpret_cast<float*>(ring);
  const int tc = int(threadIdx.x);
  // Barrier 1 over the 128 consumer threads only: every wgmma of the warpgroup (and so every
  // read of the ring) is done before the ring is written, and every write before a read.
  if (consumer) asm volatile("bar.sync 1, 128;\n" ::: "memory");
  if (consumer && tc >= 64) {
#pragma unroll
    for (int i = 0; i < kHalf; ++i) scratch[i * 64 + (tc - 64)] = acc[kHalf + i];
  }
  if (consumer) asm volatile("bar.sync 1, 128;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < kHalf; ++i) out[i] = consumer && tc < 64 ? acc[i] + scratch[i * 64 + tc] : 0.f;
}

// Output fragment of rows=32 blocks: only the first 64 consumer threads hold outputs (the
// block's 32 weight rows; combine_k_pair).
struct KPairFragment {
  template <class P>
  __device__ __forceinline__ static void store(const P& p, int row0, int64_t out_base, float scale, int tc, int i,
                                               float v) {
    if (tc < 64) store_fragment(p, row0, out_base, scale, tc, i, v);
  }
};

// The one-shot kernels' end: finish_block on the accumulators, or for rows=32 (kKPair) on the
// K-pair halves added first (combine_k_pair; the 64 threads of the block's 32 rows store).
template <int W, int NP, int kBlockThreads, bool kKPair, class P>
__device__ __forceinline__ void finish_one_shot(const P& p, const float (&acc)[NP / 2], uint8_t* ring, int row0,
                                                int batch, bool consumer) {
  if constexpr (kKPair) {
    float out[NP / 4];
    combine_k_pair<NP>(acc, out, ring, consumer);
    finish_block<1, NP / 2, kBlockThreads, NP / 4, KPairFragment>(p, out, ring, row0, batch, consumer);
  } else {
    finish_block<W, NP, kBlockThreads>(p, acc, ring, row0, batch, consumer);
  }
}

#endif  // FP8GEMM_SMALL_M_SM90A

// Block: W consumer warpgroups (warps 0 .. 4W-1) and one producer warp (warp 4W).
template <int W>
constexpr int kThreads = block_threads(W, false);

}  // namespace sm90
}  // namespace fp8gemm::small_m

#include "backends/small_m/small_m_wgmma_tma.cuh"
#include "backends/small_m/small_m_wgmma_persist.cuh"
#include "backends/small_m/small_m_wgmma_cpasync.cuh"
#include "backends/small_m/small_m_wgmma_aonce.cuh"
#include "backends/small_m/small_m_wgmma_launch.cuh"
