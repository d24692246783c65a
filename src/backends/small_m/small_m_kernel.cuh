// The small_m kernel: out[b, m, n] = sa * sb * sum_k A[b, m, k] * W[b, n, k] for m <= 32.
//
// Swapped orientation: the weight rows (n) are the M side of mma.sync.m16n8k16 (fp16 inputs,
// fp32 accumulate) and the few activation rows (m) its N side, so a 16x8 MMA tile wastes nothing
// on N even at m = 1..8. Each lane loads 16 contiguous bytes of K per weight row (LDG.128) and
// converts each FP8 word to fp16 once (weights with integer ops, activations once per warp and
// reused by its row tiles); the FP8 m16n8k32 MMA is emulated on sm_90a with a conversion of
// both operands per MMA (docs/perf/small_m.md, v1). The reduction over K is order-free, so the
// 16 bytes of a lane are fed to four MMAs in a fixed permutation, the same for both operands.
//
// Work split: a block owns `R` tiles of 16 weight rows; its warps split the block's K range
// (interleaved batches of `U` 64-byte chunks, two batches in flight per warp) and reduce through
// shared memory in warp order; with split-K the blocks of a cluster split K and reduce through
// distributed shared memory in rank order. Both orders are fixed, so results are bitwise
// reproducible.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "backends/small_m/small_m_launch.h"
#include "core/cuda_check.h"

namespace fp8gemm::small_m {

struct KernelParams {
  const uint8_t* a;  // [batch, m, k] activations
  const uint8_t* w;  // [batch, n, k] weights
  const float* a_scale;
  const float* b_scale;
  void* out;  // [batch, m, n]
  int m, n, k;
  int chunks_per_split;  // 64-byte K chunks per cluster rank
  int splitk;
  int out_fp16;
  int pdl;
};

// D = A(16x16 weights) * B(16x8 activations) + D, fp16 inputs, fp32 accumulate. Native on
// sm_90a (HMMA.16816.F32); the FP8 m16n8k32 form is not (ptxas emulates it with conversions of
// both operands for every MMA), so the kernel converts each FP8 word once itself.
__device__ __forceinline__ void mma_f16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                        uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// FP8 word w = bytes [b3 b2 b1 b0] -> two fp16x2: even = (b0, b2), odd = (b1, b3) (low half
// first). The pairing is a permutation of K, the same for both operands, so the sum is unchanged.
//
// e5m2 is the top byte of an fp16 (same exponent bias): one byte permute per fp16x2, exact.
__device__ __forceinline__ void to_f16_e5m2(uint32_t w, uint32_t& even, uint32_t& odd) {
  even = __byte_perm(w, 0u, 0x2404);
  odd = __byte_perm(w, 0u, 0x3414);
}
// e4m3 with integer ops (the conversion unit is slow on Hopper and is kept for the activations):
// sign in place, exponent and mantissa shifted right by one, i.e. the fp16 with the same bits
// and exponent bias 15 instead of 7: exactly 2^-8 times the value, subnormals included. The
// kernel multiplies the result by 2^8 (kE4M3WeightScale). NaN (0x7f) reads as 480 * 2^-8.
__device__ __forceinline__ void to_f16_e4m3_alu(uint32_t w, uint32_t& even, uint32_t& odd) {
  odd = (w & 0x80008000u) | ((w & 0x7F007F00u) >> 1);
  const uint32_t u = w << 8;
  even = (u & 0x80008000u) | ((u & 0x7F007F00u) >> 1);
}
// e4m3 through the conversion unit (cvt keeps byte order: low byte -> low half): exact values.
__device__ __forceinline__ void to_f16_e4m3_cvt(uint32_t w, uint32_t& even, uint32_t& odd) {
  const uint32_t q = __byte_perm(w, 0u, 0x3120);  // [b3 b1 b2 b0]: low half (b0,b2), high (b1,b3)
  asm("{.reg .b16 lo, hi;\n"
      " mov.b32 {lo, hi}, %2;\n"
      " cvt.rn.f16x2.e4m3x2 %0, lo;\n"
      " cvt.rn.f16x2.e4m3x2 %1, hi;}\n"
      : "=r"(even), "=r"(odd)
      : "r"(q));
}

// Weights (B, the MMA's A side): e4m3 through integer ops, scaled by 2^-8.
template <class WT>
__device__ __forceinline__ void weight_to_f16(uint32_t w, uint32_t& even, uint32_t& odd) {
  if constexpr (std::is_same_v<WT, E4M3>) to_f16_e4m3_alu(w, even, odd);
  else to_f16_e5m2(w, even, odd);
}
template <class WT>
constexpr float kWeightScale = std::is_same_v<WT, E4M3> ? 256.f : 1.f;

// Activations (A, the MMA's B side): converted per warp and reused by all its row tiles, through
// the conversion unit so the integer pipe is left to the weights. Exact values.
template <class AT>
__device__ __forceinline__ void act_to_f16(uint32_t w, uint32_t& even, uint32_t& odd) {
  if constexpr (std::is_same_v<AT, E4M3>) to_f16_e4m3_cvt(w, even, odd);
  else to_f16_e5m2(w, even, odd);
}

// Weights are read exactly once: no L1 allocation, and a 256-byte L2 fetch so that the warps
// reading neighbouring chunks of a row share DRAM bursts.
__device__ __forceinline__ uint4 load_weights(const uint8_t* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// Activations are re-read by every block with the same K range: keep them cacheable. Plain
// (coherent) loads, since with PDL the previous kernel may have just written them.
__device__ __forceinline__ uint4 load_activations(const uint8_t* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ uint32_t word(const uint4& v, int s) {
  return s == 0 ? v.x : s == 1 ? v.y : s == 2 ? v.z : v.w;
}

// One batch of U 64-byte K chunks: per lane 16 bytes of weight rows g and g+8 of each row tile
// and 16 bytes of activation row g of each m tile, at chunk offset 16t.
template <int R, int MT, int U>
struct Batch {
  uint4 w[U][R][2];
  uint4 a[U][MT];
};

// Registers: two batches in flight (the next one loads while this one is multiplied).
template <int R, int MT, int U>
constexpr bool kFitsRegisters = U * (2 * R + MT) <= 16 && R * MT <= 8;
// Up to 12 loads per batch fit in 128 registers (two blocks of 8 warps per SM, checked with
// ptxas -v: no spills); the largest instantiations take up to 255 (one block).
template <int R, int MT, int U>
constexpr int kMinBlocks = U * (2 * R + MT) <= 12 ? 2 : 1;

template <class WT, class AT, int R, int MT, int U>
__global__ void __launch_bounds__(256, (kMinBlocks<R, MT, U>)) small_m_kernel(const KernelParams p) {
  static_assert(kFitsRegisters<R, MT, U>, "instantiation exceeds the register budget");
  namespace cg = cooperative_groups;
  extern __shared__ float smem[];
  constexpr int V = R * MT * 4;  // accumulators per lane

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int g = lane >> 2, t = lane & 3;  // MMA fragment coordinates
  const int ntiles = p.n / 16;
  const int tile0 = blockIdx.x * R;
  const int split = blockIdx.y;
  const int64_t batch = blockIdx.z;
  const int64_t k = p.k;

  // Row tiles past N re-read the last valid tile (only in the last block) and store nothing:
  // cheaper than predicating every load.
  const uint8_t* w_base = p.w + batch * int64_t(p.n) * k + t * 16;
  const uint8_t* wrow[R][2];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int tile = min(tile0 + r, ntiles - 1);
    wrow[r][0] = w_base + (int64_t(tile) * 16 + g) * k;
    wrow[r][1] = wrow[r][0] + 8 * k;
  }
  // Activation rows past M re-read row M-1: they only feed output columns that are not stored.
  const uint8_t* arow[MT];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) arow[mt] = p.a + (batch * p.m + min(mt * 8 + g, p.m - 1)) * k + t * 16;

  const int chunks = int((k + 63) / 64);
  const int c_begin = split * p.chunks_per_split;
  const int c_end = min(c_begin + p.chunks_per_split, chunks);
  const int full_end = min(c_end, int(k / 64));  // chunks that need no K-tail predicate
  const int step = warps * U;

  // Tail chunks (past c_end or the 16-byte K tail) load zeros: they add nothing. `full`: the
  // whole batch from chunk c lies before full_end, so no chunk of it needs the predicate.
  auto in_range = [&](int c, int u, bool full) { return full || (c + u < c_end && (c + u) * 64 + t * 16 < p.k); };
  auto load_w = [&](Batch<R, MT, U>& b, int c) {
    const bool full = c + U <= full_end;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int off = (c + u) * 64;
      const bool ok = in_range(c, u, full);
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int h = 0; h < 2; ++h) b.w[u][r][h] = ok ? load_weights(wrow[r][h] + off) : make_uint4(0, 0, 0, 0);
    }
  };
  auto load_a = [&](Batch<R, MT, U>& b, int c) {
    const bool full = c + U <= full_end;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int off = (c + u) * 64;
      const bool ok = in_range(c, u, full);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) b.a[u][mt] = ok ? load_activations(arow[mt] + off) : make_uint4(0, 0, 0, 0);
    }
  };

  float acc[R][MT][4];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[r][mt][i] = 0.f;

  // Word s of a lane's 16 bytes holds K slots {2t, 2t+1, 2t+8, 2t+9} of one m16n8k16 step: the
  // even pair feeds a0/a1 (b0), the odd pair a2/a3 (b1).
  auto compute = [&](const Batch<R, MT, U>& b) {
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        uint32_t be[MT], bo[MT];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) act_to_f16<AT>(word(b.a[u][mt], s), be[mt], bo[mt]);
#pragma unroll
        for (int r = 0; r < R; ++r) {
          uint32_t a0, a1, a2, a3;
          weight_to_f16<WT>(word(b.w[u][r][0], s), a0, a2);
          weight_to_f16<WT>(word(b.w[u][r][1], s), a1, a3);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) mma_f16(acc[r][mt], a0, a1, a2, a3, be[mt], bo[mt]);
        }
      }
  };

  // The weights do not depend on the previous kernel: with PDL the first batch is requested
  // before waiting for it (griddepcontrol.wait is a no-op without programmatic serialization).
  Batch<R, MT, U> b0, b1;
  int c = c_begin + warp * U;
  if (c < c_end) load_w(b0, c);
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");
  if (c < c_end) load_a(b0, c);
  // Two register batches: batch i+1 is in flight while batch i is converted and multiplied.
  while (c < c_end) {
    int next = c + step;
    if (next < c_end) {
      load_w(b1, next);
      load_a(b1, next);
    }
    compute(b0);
    c = next;
    if (c >= c_end) break;
    next = c + step;
    if (next < c_end) {
      load_w(b0, next);
      load_a(b0, next);
    }
    compute(b1);
    c = next;
  }

  // Warps -> block, in warp order. Slab layout [warp][j][lane]: conflict-free.
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int i = 0; i < 4; ++i) smem[(warp * V + (r * MT + mt) * 4 + i) * 32 + lane] = acc[r][mt][i];
  __syncthreads();

  float* partial = smem + warps * V * 32;  // this block's sum, read by the cluster when split
  const float scale = *p.a_scale * *p.b_scale * kWeightScale<WT>;
  const int64_t out_base = batch * p.m * int64_t(p.n);

  auto store = [&](int e, float v) {
    const int j = e >> 5, l = e & 31, i = j & 3, rm = j >> 2;
    const int r = rm / MT, mt = rm % MT;
    const int tile = tile0 + r;
    const int m = mt * 8 + (l & 3) * 2 + (i & 1);
    const int n = tile * 16 + (l >> 2) + (i >= 2 ? 8 : 0);
    if (tile >= ntiles || m >= p.m) return;
    const int64_t o = out_base + int64_t(m) * p.n + n;
    if (p.out_fp16) static_cast<__half*>(p.out)[o] = __float2half_rn(v * scale);
    else static_cast<__nv_bfloat16*>(p.out)[o] = __float2bfloat16_rn(v * scale);
  };

  if (p.splitk == 1) {
    for (int e = threadIdx.x; e < V * 32; e += blockDim.x) {
      float s = 0.f;
      for (int w = 0; w < warps; ++w) s += smem[w * V * 32 + e];
      store(e, s);
    }
    return;
  }

  for (int e = threadIdx.x; e < V * 32; e += blockDim.x) {
    float s = 0.f;
    for (int w = 0; w < warps; ++w) s += smem[w * V * 32 + e];
    partial[e] = s;
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every rank's partial is written
  const int rank = int(cluster.block_rank());
  for (int e = threadIdx.x; e < V * 32; e += blockDim.x) {
    if (e % p.splitk != rank) continue;  // each rank finishes a share of the outputs
    float s = 0.f;
    for (int q = 0; q < p.splitk; ++q) s += cluster.map_shared_rank(partial, q)[e];
    store(e, s);
  }
  cluster.sync();  // no block may exit while another still reads its shared memory
}

template <class WT, class AT, int R, int MT, int U>
void launch_one(const LaunchArgs& l, const KernelParams& kp) {
  const Config& c = l.config;
  auto kernel = small_m_kernel<WT, AT, R, MT, U>;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned((l.problem.n / 16 + R - 1) / R), unsigned(c.splitk), unsigned(l.problem.batch));
  cfg.blockDim = dim3(unsigned(c.warps * 32));
  cfg.dynamicSmemBytes = shared_bytes(l.problem, c);
  cfg.stream = l.stream;
  cudaLaunchAttribute attrs[kMaxLaunchAttrs];
  set_launch_attrs(cfg, attrs, c.splitk, c.pdl);
  FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, kp));
}

template <class WT, class AT, int R, int U>
void launch_mt(const LaunchArgs& l, const KernelParams& kp) {
  // can_implement admits only what kFitsRegisters admits: instantiate nothing beyond.
  const int mt = m_tiles(l.problem.m);
  if constexpr (kFitsRegisters<R, 1, U>) {
    if (mt == 1) return launch_one<WT, AT, R, 1, U>(l, kp);
  }
  if constexpr (kFitsRegisters<R, 2, U>) {
    if (mt == 2) return launch_one<WT, AT, R, 2, U>(l, kp);
  }
  if constexpr (kFitsRegisters<R, 3, U>) {
    if (mt == 3) return launch_one<WT, AT, R, 3, U>(l, kp);
  }
  if constexpr (kFitsRegisters<R, 4, U>) {
    if (mt == 4) return launch_one<WT, AT, R, 4, U>(l, kp);
  }
  FP8GEMM_FAIL(kInternal, "small_m: m=", l.problem.m, " passed can_implement but has no kernel");
}

// The (rows, stages) pairs config_exists() admits; one instantiation set each.
template <class WT, class AT>
void launch_pair(const LaunchArgs& l) {
  const Problem& p = l.problem;
  const Config& c = l.config;
  KernelParams kp{};
  kp.a = static_cast<const uint8_t*>(l.args.a);
  kp.w = static_cast<const uint8_t*>(l.args.b);
  kp.a_scale = l.args.a_scale;
  kp.b_scale = l.args.b_scale;
  kp.out = l.args.out;
  kp.m = int(p.m);
  kp.n = int(p.n);
  kp.k = int(p.k);
  const int chunks = int((p.k + 63) / 64);
  kp.chunks_per_split = (chunks + c.splitk - 1) / c.splitk;
  kp.splitk = c.splitk;
  kp.out_fp16 = p.out_type == DType::kFP16;
  kp.pdl = c.pdl;
  const int R = c.row_tiles();
  if (R == 1 && c.stages == 1) return launch_mt<WT, AT, 1, 1>(l, kp);
  if (R == 1 && c.stages == 2) return launch_mt<WT, AT, 1, 2>(l, kp);
  if (R == 1 && c.stages == 4) return launch_mt<WT, AT, 1, 4>(l, kp);
  if (R == 2 && c.stages == 1) return launch_mt<WT, AT, 2, 1>(l, kp);
  if (R == 2 && c.stages == 2) return launch_mt<WT, AT, 2, 2>(l, kp);
  if (R == 4 && c.stages == 1) return launch_mt<WT, AT, 4, 1>(l, kp);
  FP8GEMM_FAIL(kInternal, "small_m: config ", c.to_string(), " has no instantiation");
}

}  // namespace fp8gemm::small_m
