// The launch of each kernel family for one config; included at the end of small_m_wgmma.cuh (the
// .cu files instantiate launch_pair once per dtype pair). The grid, threads and shared memory come
// from launch_shape, the ring's layout from ring_layout (small_m_layout.h).
#pragma once

#include "backends/small_m/small_m_wgmma.cuh"
#include "core/sm90/tensor_map.h"  // encode_kmajor_map

namespace fp8gemm::small_m {
namespace sm90 {

// Raises a kernel's dynamic shared-memory limit once per device (to the most any config may ask).
template <class Kernel>
void raise_smem_limit_once(Kernel kernel, std::atomic<uint64_t>& raised) {
  int dev = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&dev));
  const uint64_t bit = uint64_t(1) << (dev & 63);
  if (raised.load(std::memory_order_acquire) & bit) return;
  FP8GEMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxSharedBytes)));
  raised.fetch_or(bit, std::memory_order_acq_rel);
}

// The launch configuration of `shape` (`attrs` must outlive the launch); `kernel_threads` is the
// block size the kernel was built for, which launch_shape must agree with.
inline void configure(cudaLaunchConfig_t& cfg, cudaLaunchAttribute (&attrs)[kMaxLaunchAttrs], const LaunchArgs& l,
                      const LaunchShape& shape, int kernel_threads) {
  FP8GEMM_REQUIRE(shape.threads == kernel_threads, kInternal, "small_m: config ", l.config.to_string(), " launches ",
                  shape.threads, " threads a block; its kernel is built for ", kernel_threads);
  cfg = cudaLaunchConfig_t{};
  cfg.gridDim = dim3(shape.grid[0], shape.grid[1], shape.grid[2]);
  cfg.blockDim = dim3(unsigned(shape.threads));
  cfg.dynamicSmemBytes = shape.shared_bytes;
  cfg.stream = l.stream;
  set_launch_attrs(cfg, attrs, l.config.splitk, l.config.pdl != Pdl::kOff);
}

// The one-shot rings and the persistent kernel at W consumer warpgroups and NP MMA columns.
// kKPair: rows=32 (W = 1, NP = the MMA's N = 2 x the activation rows of one K block), the rings
// only, with one or two pairs a stage (config_exists).
template <class WT, class AT, int W, int NP, bool kKPair = false, class P = Params>
void launch_ring(const LaunchArgs& l, const LaunchShape& shape, const P& kp) {
  const Problem& pr = l.problem;
  const Config& c = l.config;
  constexpr int kNA = kKPair ? NP / 2 : NP;  // activation rows per K block (the activation map's box)
  cudaLaunchConfig_t cfg;
  cudaLaunchAttribute attrs[kMaxLaunchAttrs];
  CUtensorMap wmap, amap;
  encode_kmajor_map(&amap, l.args.a, pr.k, pr.m, pr.batch, kNA);
  if (c.family == Family::kCpAsyncRing) {
    // No weight tensor map. One kernel per units per stage (1, 2, 4; K pairs: 1 or 2, so none in
    // the third slot), and for fitted rows up to 48 or 65..80 one per units per stage on the
    // compact 48- or 80-row tile (cp_compact_tile_rows).
    static std::atomic<uint64_t> raised_cp[6]{};
    const int kb = c.kblocks == 4 ? 2 : c.kblocks == 2 ? 1 : 0;
    constexpr int kFull = 64 * W;  // the weight tile's rows when not compact
    using K = decltype(&small_m_wgmma_cp_kernel<WT, AT, W, NP, kKPair, 1, kFull, P>);
    constexpr K kernels[3] = {small_m_wgmma_cp_kernel<WT, AT, W, NP, kKPair, 1, kFull, P>,
                              small_m_wgmma_cp_kernel<WT, AT, W, NP, kKPair, 2, kFull, P>,
                              kKPair ? nullptr : small_m_wgmma_cp_kernel<WT, AT, W, NP, kKPair, kKPair ? 1 : 4, kFull, P>};
    constexpr bool kCompactBuilt = !kKPair;
    constexpr int kCompactRows = W == 1 ? kCpCompactTileRows1 : kCpCompactTileRows2;
    K compact[3] = {nullptr, nullptr, nullptr};
    if constexpr (kCompactBuilt) {
      compact[0] = small_m_wgmma_cp_kernel<WT, AT, W, NP, false, 1, kCompactRows, P>;
      compact[1] = small_m_wgmma_cp_kernel<WT, AT, W, NP, false, 2, kCompactRows, P>;
      compact[2] = small_m_wgmma_cp_kernel<WT, AT, W, NP, false, 4, kCompactRows, P>;
    }
    const bool use_compact = cp_compact_tile_rows(c.rows) > 0;
    FP8GEMM_REQUIRE(!use_compact || (kCompactBuilt && cp_compact_tile_rows(c.rows) == kCompactRows), kInternal,
                    "small_m: config ", c.to_string(), " needs a compact cp.async tile this kernel was not built with");
    const K kernel = use_compact ? compact[kb] : kernels[kb];
    FP8GEMM_REQUIRE(kernel, kInternal, "small_m: config ", c.to_string(), " has no cp.async kernel");
    raise_smem_limit_once(kernel, raised_cp[kb + (use_compact ? 3 : 0)]);
    configure(cfg, attrs, l, shape, kThreadsCp<W>);
    FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, amap, kp));
    return;
  }
  static std::atomic<uint64_t> raised{0}, raised_persist{0};
  const bool persist = !kKPair && c.family == Family::kPersistent;
  auto kernel = persist ? small_m_wgmma_persistent_kernel<WT, AT, W, NP, P> : small_m_wgmma_kernel<WT, AT, W, NP, kKPair, P>;
  raise_smem_limit_once(kernel, persist ? raised_persist : raised);
  encode_kmajor_map(&wmap, l.args.b, pr.k, pr.n, pr.batch, c.rows);
  FP8GEMM_REQUIRE(!persist || l.sm_count > 0, kInternal, "small_m: the persistent grid needs the device's SM count");
  configure(cfg, attrs, l, shape, kThreads<W>);
  FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, wmap, amap, kp));
}

template <class WT, class AT, int W, class P>
void launch_ring_np(const LaunchArgs& l, const LaunchShape& shape, const P& kp) {
  switch (mma_n(l.problem.m)) {
    case 8: return launch_ring<WT, AT, W, 8, false, P>(l, shape, kp);
    case 16: return launch_ring<WT, AT, W, 16, false, P>(l, shape, kp);
    case 24: return launch_ring<WT, AT, W, 24, false, P>(l, shape, kp);
    case 32: return launch_ring<WT, AT, W, 32, false, P>(l, shape, kp);
  }
  FP8GEMM_FAIL(kInternal, "small_m: m=", l.problem.m, " passed can_implement but has no wgmma kernel");
}

// The kernels' Params for one launch.
inline Params params_of(const LaunchArgs& l, const LaunchShape& shape) {
  const Problem& pr = l.problem;
  const Config& c = l.config;
  const RingLayout layout = ring_layout(pr, c);
  Params kp{};
  kp.a_scale = l.args.a_scale;
  kp.b_scale = l.args.b_scale;
  kp.out = l.args.out;
  kp.m = int(pr.m);
  kp.n = int(pr.n);
  kp.kblocks = int(k_blocks(pr));
  kp.kblocks_per_split = shape.kblocks_per_split;
  kp.splitk = c.splitk;
  kp.stages = c.stages;
  kp.out_fp16 = pr.out_type == DType::kFP16;
  kp.l2pf = 0;
  kp.tiles = int((pr.n + c.rows - 1) / c.rows);
  kp.units = int(int64_t(kp.tiles) * pr.batch);
  kp.w = static_cast<const uint8_t*>(l.args.b);
  kp.k = pr.k;
  kp.a = static_cast<const uint8_t*>(l.args.a);
  kp.late_trigger = c.pdl == Pdl::kAfterKLoop;
  kp.early = c.early;
  kp.rows = c.rows;
  kp.stage_bytes = layout.stage_bytes;
  kp.w_bytes = layout.w_bytes;
  kp.stage_tx = layout.tx_bytes;
  kp.stage_kblocks = c.kblocks;
  kp.kb_bytes = layout.unit_bytes;
  kp.bias = pr.bias ? l.args.bias : nullptr;  // read by the BiasParams kernels only
  return kp;
}

// P: Params, or BiasParams where the problem has a bias (the kernels that add it).
template <class WT, class AT, class P = Params>
void launch_pair(const LaunchArgs& l) {
  const Problem& pr = l.problem;
  const Config& c = l.config;
  const LaunchShape shape = launch_shape(pr, c, l.sm_count);
  P kp{};
  static_cast<Params&>(kp) = params_of(l, shape);
  if (c.family == Family::kActivationOnce) {
    // One kernel per dtype pair (m = 1, no split).
    static std::atomic<uint64_t> raised_aonce{0};
    auto kernel = small_m_wgmma_aonce_kernel<WT, AT, P>;
    raise_smem_limit_once(kernel, raised_aonce);
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attrs[kMaxLaunchAttrs];
    configure(cfg, attrs, l, shape, kThreads<1>);
    CUtensorMap wmap;
    encode_kmajor_map(&wmap, l.args.b, pr.k, pr.n, pr.batch, c.rows);
    FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, wmap, kp));
    return;
  }
  // 64 rows and fitted rows up to 64: one consumer warpgroup; 128 and fitted rows above 64: two.
  if (c.block() != Block::kKPairs)
    return warpgroups(c.rows) == 1 ? launch_ring_np<WT, AT, 1>(l, shape, kp) : launch_ring_np<WT, AT, 2>(l, shape, kp);
  // K pairs: the MMA's N holds two K blocks' activation rows.
  if (mma_n(pr.m) == 8) return launch_ring<WT, AT, 1, 16, true, P>(l, shape, kp);
  if (mma_n(pr.m) == 16) return launch_ring<WT, AT, 1, 32, true, P>(l, shape, kp);
  FP8GEMM_FAIL(kInternal, "small_m: config ", c.to_string(), " has no wgmma instantiation");
}

}  // namespace sm90
}  // namespace fp8gemm::small_m
