// The small_m kernel: out[b, m, n] = sa * sb * sum_k A[b, m, k] * W[b, n, k] for m <= 32.
//
// Swapped orientation: the weight rows (n) are the M side of mma.sync.m16n8k32 and the few
// activation rows (m) its N side, so a 16x8 MMA tile wastes nothing on N even at m = 1..8.
// Each lane loads 16 contiguous bytes of K per weight row (LDG.128); the reduction over K is
// order-free, so lane t's bytes [16t, 16t+16) of a 64-byte chunk are fed to two MMAs as the
// k slots that lane owns in both operands (bytes 0-7 to the first, 8-15 to the second). The
// activations are loaded with the same byte permutation, so A and B agree on every k.
//
// Work split: a block owns `R` tiles of 16 weight rows; its warps split the block's K range
// (interleaved batches of `U` 64-byte chunks) and reduce through shared memory in warp order;
// with split-K the blocks of a cluster split K and reduce through distributed shared memory in
// rank order. Both orders are fixed, so results are bitwise reproducible.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backends/small_m/small_m_launch.h"
#include "core/cuda_check.h"

namespace fp8gemm::small_m {

struct E4M3 {};
struct E5M2 {};

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

// D = A(16x32 weights) * B(32x8 activations) + D, fp32 accumulate.
template <class WT, class AT>
__device__ __forceinline__ void mma_fp8(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                        uint32_t b0, uint32_t b1) {
#define FP8GEMM_SMALL_M_MMA(TYPES)                                                               \
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." TYPES ".f32 "                           \
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                        \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                 \
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))
  if constexpr (std::is_same_v<WT, E4M3> && std::is_same_v<AT, E4M3>) FP8GEMM_SMALL_M_MMA("e4m3.e4m3");
  else if constexpr (std::is_same_v<WT, E4M3>) FP8GEMM_SMALL_M_MMA("e4m3.e5m2");
  else if constexpr (std::is_same_v<AT, E4M3>) FP8GEMM_SMALL_M_MMA("e5m2.e4m3");
  else FP8GEMM_SMALL_M_MMA("e5m2.e5m2");
#undef FP8GEMM_SMALL_M_MMA
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

template <class WT, class AT, int R, int MT, int U>
__global__ void __launch_bounds__(256) small_m_kernel(const KernelParams p) {
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
  const int first = c_begin + warp * U;

  // Weights do not depend on the previous kernel: start pulling them into L2 before waiting.
  if (p.pdl) {
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (first + u < full_end)
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            asm volatile("prefetch.global.L2::evict_normal [%0];" ::"l"(wrow[r][h] + (first + u) * 64));
  }
  // A no-op unless launched with programmatic stream serialization.
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");

  float acc[R][MT][4];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[r][mt][i] = 0.f;

  // One batch: U chunks of loads issued back to back (the bytes in flight), then the MMAs.
  auto batch_step = [&](int c, auto predicated) {
    constexpr bool kPred = decltype(predicated)::value;
    uint4 wv[U][R][2];
    uint4 av[U][MT];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int off = (c + u) * 64;
      const bool ok = !kPred || (c + u < c_end && off + t * 16 < p.k);
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int h = 0; h < 2; ++h) wv[u][r][h] = ok ? load_weights(wrow[r][h] + off) : make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) av[u][mt] = ok ? load_activations(arow[mt] + off) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma_fp8<WT, AT>(acc[r][mt], wv[u][r][0].x, wv[u][r][1].x, wv[u][r][0].y, wv[u][r][1].y,
                          av[u][mt].x, av[u][mt].y);
          mma_fp8<WT, AT>(acc[r][mt], wv[u][r][0].z, wv[u][r][1].z, wv[u][r][0].w, wv[u][r][1].w,
                          av[u][mt].z, av[u][mt].w);
        }
  };
  for (int c = first; c < c_end; c += warps * U) {
    if (c + U <= full_end) batch_step(c, std::false_type{});
    else batch_step(c, std::true_type{});
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
  const float scale = *p.a_scale * *p.b_scale;
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
  cudaLaunchAttribute attrs[2];
  cfg.attrs = attrs;
  cfg.numAttrs = 0;
  if (c.splitk > 1) {
    attrs[cfg.numAttrs].id = cudaLaunchAttributeClusterDimension;
    attrs[cfg.numAttrs].val.clusterDim.x = 1;
    attrs[cfg.numAttrs].val.clusterDim.y = unsigned(c.splitk);
    attrs[cfg.numAttrs].val.clusterDim.z = 1;
    ++cfg.numAttrs;
  }
  if (c.pdl) {
    attrs[cfg.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
    ++cfg.numAttrs;
  }
  FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, kp));
}

template <class WT, class AT, int R, int U>
void launch_mt(const LaunchArgs& l, const KernelParams& kp) {
  // can_implement admits R * MT <= 8 only (register budget): instantiate nothing beyond.
  const int mt = m_tiles(l.problem.m);
  if (mt == 1) return launch_one<WT, AT, R, 1, U>(l, kp);
  if (mt == 2) return launch_one<WT, AT, R, 2, U>(l, kp);
  if constexpr (R * 3 <= 8) {
    if (mt == 3) return launch_one<WT, AT, R, 3, U>(l, kp);
  }
  if constexpr (R * 4 <= 8) {
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
  if (R == 1 && c.stages == 2) return launch_mt<WT, AT, 1, 2>(l, kp);
  if (R == 1 && c.stages == 4) return launch_mt<WT, AT, 1, 4>(l, kp);
  if (R == 2 && c.stages == 2) return launch_mt<WT, AT, 2, 2>(l, kp);
  if (R == 2 && c.stages == 4) return launch_mt<WT, AT, 2, 4>(l, kp);
  if (R == 4 && c.stages == 2) return launch_mt<WT, AT, 4, 2>(l, kp);
  FP8GEMM_FAIL(kInternal, "small_m: config ", c.to_string(), " has no instantiation");
}

}  // namespace fp8gemm::small_m
