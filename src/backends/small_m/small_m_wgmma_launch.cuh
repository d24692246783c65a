// small_m v3, host side: tensor maps, shared-memory limits and the launch of every v3 kernel
// for one config; included at the end of small_m_wgmma.cuh (the .cu files instantiate
// launch_wgmma_pair once per dtype pair).
#pragma once

#include "backends/small_m/small_m_wgmma.cuh"

namespace fp8gemm::small_m {
namespace v3 {

// Host side (small_m_tma.cpp): 3-D tensor map {k, rows, batch} of a K-major FP8 tensor with a
// {128, box_rows, 1} box and the 128-byte swizzle. Throws Error(kCuda) when encoding fails.
void encode_kmajor_map(CUtensorMap* map, const void* base, int64_t k, int64_t rows, int64_t batch, int box_rows);

// Raises a kernel's dynamic shared-memory limit once per device (to the most any config may ask).
template <class Kernel>
void raise_smem_limit_once(Kernel kernel, std::atomic<uint64_t>& raised) {
  int dev = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&dev));
  const uint64_t bit = uint64_t(1) << (dev & 63);
  if (raised.load(std::memory_order_acquire) & bit) return;
  FP8GEMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kWgmmaMaxSharedBytes)));
  raised.fetch_or(bit, std::memory_order_acq_rel);
}

// Stream-K waits between blocks: refuses to launch a config whose blocks would not all fit the
// SMs at once (the occupancy the candidates assume; checked once per kernel and size).
void require_resident(const void* kernel, int threads, size_t smem, const Config& c);

// kKPair: rows=32 (W = 1, NP = the MMA's N = 2 x the activation rows of one K block), the one-shot
// TMA and cp.async kernels only, with one or two pairs a stage (config_exists).
template <class WT, class AT, int W, int NP, bool kKPair = false>
void launch_wgmma_one(const LaunchArgs& l, const Params& kp) {
  const Problem& pr = l.problem;
  const Config& c = l.config;
  constexpr int kNA = kKPair ? NP / 2 : NP;  // activation rows per K block (the activation map's box)
  cudaLaunchConfig_t cfg{};
  // c.rows weight rows per block (the weight map's box): 32, 64 W, or fitted (fewer than 64 W).
  cfg.gridDim = dim3(unsigned((pr.n + c.rows - 1) / c.rows), unsigned(c.splitk), unsigned(pr.batch));
  cfg.blockDim = dim3(unsigned(kThreads<W>));
  cfg.dynamicSmemBytes = shared_bytes(pr, c);
  cfg.stream = l.stream;
  cudaLaunchAttribute attrs[kMaxLaunchAttrs];
  set_launch_attrs(cfg, attrs, c.splitk, c.pdl);

  if constexpr (W == 1 && !kKPair) if (c.reg_weights) {  // rows=64 only (config_exists)
    // Weights in registers: no tensor maps; warpgroups of 32 rows (twice the TMA kernel's for the
    // same rows per block); the split is in whole activation slots.
    static std::atomic<uint64_t> raised_reg{0};
    auto kernel = small_m_wgmma_reg_kernel<WT, AT, 2 * W, NP>;
    raise_smem_limit_once(kernel, raised_reg);
    cfg.blockDim = dim3(unsigned(kThreads<2 * W>));
    Params rp = kp;
    const int slots = int((pr.k + kRegSlotK - 1) / kRegSlotK);
    rp.kblocks_per_split = (slots + c.splitk - 1) / c.splitk;  // slots per split
    FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, rp));
    return;
  }
  CUtensorMap wmap, amap;
  encode_kmajor_map(&amap, l.args.a, pr.k, pr.m, pr.batch, kNA);
  if constexpr (!kKPair) if (c.streamk > 0) {
    // Stream-K: B blocks per SM over the units; every block must be resident at once.
    static std::atomic<uint64_t> raised_sk{0};
    auto kernel = small_m_wgmma_streamk_kernel<WT, AT, W, NP>;
    raise_smem_limit_once(kernel, raised_sk);
    cfg.blockDim = dim3(unsigned(kThreadsCp<W>));
    const int64_t grid = streamk_grid(pr, c, l.sm_count);
    FP8GEMM_REQUIRE(grid > 0, kInternal, "small_m: the stream-K grid needs the device's SM count");
    require_resident(reinterpret_cast<const void*>(kernel), int(kThreadsCp<W>), cfg.dynamicSmemBytes, c);
    const size_t need = streamk_workspace_bytes(pr, c, l.sm_count);
    FP8GEMM_REQUIRE(l.ws.ptr && l.ws.bytes >= need, kInvalidArgument, "small_m ", c.to_string(), ": workspace needs ",
                    need, " bytes for the stream-K partial sums; got ", l.ws.bytes);
    FP8GEMM_REQUIRE(l.ws.flags && l.ws.flag_count >= size_t(grid), kInvalidArgument, "small_m ", c.to_string(),
                    ": workspace needs ", grid, " flags (one per block); got ", l.ws.flag_count);
    cfg.gridDim = dim3(unsigned(grid), 1, 1);
    Params sp = kp;
    sp.sk_partials = static_cast<float*>(l.ws.ptr);
    sp.sk_flags = l.ws.flags;
    sp.sk_units = int64_t(kp.units) * kp.kblocks;
    FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, amap, sp));
    return;
  }
  if (c.cp_weights) {
    // Weights by cp.async (no weight tensor map); one producer warpgroup instead of one warp.
    // One kernel per K blocks per stage (1, 2, 4; K pairs: pairs per stage, 1 or 2, so none in
    // the third slot).
    // Fitted rows up to 48 or 65..80: the compact 48- or 80-row tile (cp_compact_tile_rows), one
    // kernel per K blocks per stage too.
    static std::atomic<uint64_t> raised_cp[6]{};
    const int kb = c.kblocks == 4 ? 2 : c.kblocks == 2 ? 1 : 0;
    using K = decltype(&small_m_wgmma_cp_kernel<WT, AT, W, NP, kKPair, 1>);
    constexpr K kernels[3] = {small_m_wgmma_cp_kernel<WT, AT, W, NP, kKPair, 1>,
                              small_m_wgmma_cp_kernel<WT, AT, W, NP, kKPair, 2>,
                              kKPair ? nullptr : small_m_wgmma_cp_kernel<WT, AT, W, NP, kKPair, kKPair ? 1 : 4>};
    constexpr bool kCompactBuilt = !kKPair;
    constexpr int kCompactRows = W == 1 ? kCpCompactTileRows1 : kCpCompactTileRows2;
    K compact[3] = {nullptr, nullptr, nullptr};
    if constexpr (kCompactBuilt) {
      compact[0] = small_m_wgmma_cp_kernel<WT, AT, W, NP, false, 1, kCompactRows>;
      compact[1] = small_m_wgmma_cp_kernel<WT, AT, W, NP, false, 2, kCompactRows>;
      compact[2] = small_m_wgmma_cp_kernel<WT, AT, W, NP, false, 4, kCompactRows>;
    }
    const bool use_compact = cp_compact_tile(c.rows);
    FP8GEMM_REQUIRE(!use_compact || (kCompactBuilt && cp_compact_tile_rows(c.rows) == kCompactRows), kInternal,
                    "small_m: config ", c.to_string(), " needs a compact cp.async tile this kernel was not built with");
    const K kernel = use_compact ? compact[kb] : kernels[kb];
    FP8GEMM_REQUIRE(kernel, kInternal, "small_m: config ", c.to_string(), " has no cp.async kernel");
    raise_smem_limit_once(kernel, raised_cp[kb + (use_compact ? 3 : 0)]);
    cfg.blockDim = dim3(unsigned(kThreadsCp<W>));
    FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, amap, kp));
    return;
  }
  static std::atomic<uint64_t> raised{0}, raised_persist{0};
  const bool persist = !kKPair && c.persist > 0;
  auto kernel = persist ? small_m_wgmma_persistent_kernel<WT, AT, W, NP> : small_m_wgmma_kernel<WT, AT, W, NP, kKPair>;
  raise_smem_limit_once(kernel, persist ? raised_persist : raised);
  encode_kmajor_map(&wmap, l.args.b, pr.k, pr.n, pr.batch, c.rows);
  if (persist) {
    // persist blocks per SM: that many clusters of splitk blocks, at most one per unit.
    FP8GEMM_REQUIRE(l.sm_count > 0, kInternal, "small_m: the persistent grid needs the device's SM count");
    const int64_t clusters = std::max<int64_t>(1, int64_t(c.persist) * l.sm_count / c.splitk);
    cfg.gridDim = dim3(unsigned(std::min<int64_t>(kp.units, clusters)), unsigned(c.splitk), 1);
  }
  FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, wmap, amap, kp));
}

template <class WT, class AT, int W>
void launch_wgmma_np(const LaunchArgs& l, const Params& kp) {
  switch (wgmma_n(l.problem.m)) {
    case 8: return launch_wgmma_one<WT, AT, W, 8>(l, kp);
    case 16: return launch_wgmma_one<WT, AT, W, 16>(l, kp);
    case 24: return launch_wgmma_one<WT, AT, W, 24>(l, kp);
    case 32: return launch_wgmma_one<WT, AT, W, 32>(l, kp);
  }
  FP8GEMM_FAIL(kInternal, "small_m: m=", l.problem.m, " passed can_implement but has no wgmma kernel");
}

template <class WT, class AT>
void launch_wgmma_pair(const LaunchArgs& l) {
  const Problem& pr = l.problem;
  const Config& c = l.config;
  Params kp{};
  kp.a_scale = l.args.a_scale;
  kp.b_scale = l.args.b_scale;
  kp.out = l.args.out;
  kp.m = int(pr.m);
  kp.n = int(pr.n);
  kp.kblocks = int(wgmma_kblocks(pr));
  kp.kblocks_per_split = (kp.kblocks + c.splitk - 1) / c.splitk;
  kp.splitk = c.splitk;
  kp.stages = c.stages;
  kp.out_fp16 = pr.out_type == DType::kFP16;
  kp.l2pf = c.l2pf;
  kp.tiles = int((pr.n + c.rows - 1) / c.rows);
  kp.units = int(int64_t(kp.tiles) * pr.batch);
  kp.w = static_cast<const uint8_t*>(l.args.b);
  kp.k = pr.k;
  kp.a = static_cast<const uint8_t*>(l.args.a);
  kp.late_trigger = c.late_trigger;
  kp.early = c.early;
  kp.rows = c.rows;
  const WgmmaStageLayout layout = wgmma_stage_layout(pr.m, c.rows, c.cp_weights);
  kp.stage_bytes = layout.stage_bytes * c.kblocks + layout.stage_pad_bytes;
  kp.w_bytes = layout.w_bytes;
  kp.stage_tx = layout.tx_bytes;
  kp.stage_kblocks = c.kblocks;
  kp.kb_bytes = layout.stage_bytes;
  if (c.aonce) {
    // K pairs with the activation row once, whole (m = 1, splitk 1): one kernel per dtype pair.
    static std::atomic<uint64_t> raised_aonce{0};
    auto kernel = small_m_wgmma_aonce_kernel<WT, AT>;
    raise_smem_limit_once(kernel, raised_aonce);
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(unsigned((pr.n + c.rows - 1) / c.rows), 1, unsigned(pr.batch));
    cfg.blockDim = dim3(unsigned(kThreads<1>));
    cfg.dynamicSmemBytes = shared_bytes(pr, c);
    cfg.stream = l.stream;
    cudaLaunchAttribute attrs[kMaxLaunchAttrs];
    set_launch_attrs(cfg, attrs, 1, c.pdl);
    CUtensorMap wmap;
    encode_kmajor_map(&wmap, l.args.b, pr.k, pr.n, pr.batch, c.rows);
    FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, wmap, kp));
    return;
  }
  // 64 rows and fitted rows up to 64: one consumer warpgroup; 128 and fitted rows above 64: two.
  if (c.rows != 32)
    return wgmma_warpgroups(c.rows) == 1 ? launch_wgmma_np<WT, AT, 1>(l, kp) : launch_wgmma_np<WT, AT, 2>(l, kp);
  // rows=32 (K pairs): a rank's K range is whole pairs (the last one may end at the tensor's end, odd).
  kp.kblocks_per_split = kpair_kblocks_per_split(kp.kblocks, c.splitk);
  if (wgmma_n(pr.m) == 8) return launch_wgmma_one<WT, AT, 1, 16, true>(l, kp);
  if (wgmma_n(pr.m) == 16) return launch_wgmma_one<WT, AT, 1, 32, true>(l, kp);
  FP8GEMM_FAIL(kInternal, "small_m: config ", c.to_string(), " has no wgmma instantiation");
}

}  // namespace v3
}  // namespace fp8gemm::small_m
