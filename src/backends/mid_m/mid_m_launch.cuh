// The launch of one mid_m config: the kernel instantiation for (dtype pair, tile_n, warpgroups),
// its tensor maps, Params, grid, cluster and PDL attributes (from launch_shape, mid_m_layout.h).
// Included by the per-dtype-pair .cu files, which instantiate launch_pair once each.
#pragma once

#include <atomic>
#include <utility>

#include "backends/mid_m/mid_m_kernel.cuh"
#include "backends/mid_m/mid_m_launch.h"
#include "fp8gemm/check.h"
#include "core/sm90/tensor_map.h"

namespace fp8gemm::mid_m::kernel {

// Raises a kernel's dynamic shared-memory limit to the device's maximum, once per device.
template <class Kernel>
void raise_smem_limit_once(Kernel kernel, std::atomic<uint64_t>& raised, const DeviceLimits& d) {
  int dev = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&dev));
  const uint64_t bit = uint64_t(1) << (dev & 63);
  if (raised.load(std::memory_order_acquire) & bit) return;
  FP8GEMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          int(max_dynamic_shared(d))));
  raised.fetch_or(bit, std::memory_order_acq_rel);
}

inline Params params_of(const LaunchArgs& l, const LaunchShape& shape) {
  const Problem& pr = l.problem;
  const Config& c = l.config;
  Params kp{};
  kp.a_scale = l.args.a_scale;
  kp.b_scale = l.args.b_scale;
  kp.out = l.args.out;
  kp.m = int(pr.m);
  kp.n = int(pr.n);
  kp.ksteps = int(k_steps(pr, c));
  kp.splitk = c.splitk;
  kp.stages = c.stages;
  kp.mcast = c.mcast;
  kp.msplit = c.msplit;
  kp.block_m = int(block_m(pr.m, c.msplit));
  kp.shares_weights = c.shares_weights();
  kp.tiles = int(shape.tiles);
  kp.real_tiles = int(shape.real_tiles);
  kp.units = int(shape.units);
  kp.out_fp16 = pr.out_type == DType::kFP16;
  kp.late_trigger = c.pdl == Pdl::kAfterKLoop;
  return kp;
}

template <class WT, class AT, int NP, int kWG, int kKS>
void launch_kernel(const LaunchArgs& l) {
  const Problem& pr = l.problem;
  const Config& c = l.config;
  const LaunchShape shape = launch_shape(pr, c, l.device);
  FP8GEMM_REQUIRE(shape.threads == kThreads<kWG>, kInternal, "mid_m: config ", c.to_string(), " launches ",
                  shape.threads, " threads a block; its kernel is built for ", kThreads<kWG>);
  static std::atomic<uint64_t> raised{0};
  auto kernel = mid_m_kernel<WT, AT, NP, kWG, kKS>;
  raise_smem_limit_once(kernel, raised, l.device);
  CUtensorMap wmap, amap;
  // A pair sharing the weight tile loads half of it each.
  sm90::encode_kmajor_map(&wmap, l.args.b, pr.k, pr.n, pr.batch, c.shares_weights() ? c.rows / 2 : c.rows);
  sm90::encode_kmajor_map(&amap, l.args.a, pr.k, pr.m, pr.batch, NP);
  const Params kp = params_of(l, shape);

  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attrs[2];
  cfg.gridDim = dim3(shape.grid[0], shape.grid[1], shape.grid[2]);
  cfg.blockDim = dim3(unsigned(shape.threads));
  cfg.dynamicSmemBytes = shape.shared_bytes;
  cfg.stream = l.stream;
  cfg.attrs = attrs;
  cfg.numAttrs = 0;
  if (c.cluster_blocks() > 1) {
    attrs[cfg.numAttrs].id = cudaLaunchAttributeClusterDimension;
    attrs[cfg.numAttrs].val.clusterDim.x = shape.cluster[0];
    attrs[cfg.numAttrs].val.clusterDim.y = shape.cluster[1];
    attrs[cfg.numAttrs].val.clusterDim.z = shape.cluster[2];
    ++cfg.numAttrs;
  }
  if (c.pdl != Pdl::kOff) {
    attrs[cfg.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
    ++cfg.numAttrs;
  }
  FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, wmap, amap, kp));
}

template <class WT, class AT, int NP, int kWG, int kKS>
KernelFacts facts_of(const Problem& p, const Config& c) {
  auto kernel = mid_m_kernel<WT, AT, NP, kWG, kKS>;
  cudaFuncAttributes a{};
  FP8GEMM_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  KernelFacts f;
  f.registers = a.numRegs;
  f.local_bytes = a.localSizeBytes;
  int dev = 0, optin = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&dev));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  FP8GEMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          optin - int(kStaticSharedBytes)));
  FP8GEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&f.blocks_per_sm, kernel, kThreads<kWG>,
                                                                   layout(p, c).shared_bytes));
  return f;
}

template <class WT, class AT, int NP>
struct Instantiation {
  static void launch(const LaunchArgs& l) {
    const Config& c = l.config;
    if (c.warpgroups() == 1) c.kstage == 1 ? launch_kernel<WT, AT, NP, 1, 1>(l) : launch_kernel<WT, AT, NP, 1, 2>(l);
    else c.kstage == 1 ? launch_kernel<WT, AT, NP, 2, 1>(l) : launch_kernel<WT, AT, NP, 2, 2>(l);
  }
  static KernelFacts facts(const Problem& p, const Config& c) {
    if (c.warpgroups() == 1) return c.kstage == 1 ? facts_of<WT, AT, NP, 1, 1>(p, c) : facts_of<WT, AT, NP, 1, 2>(p, c);
    return c.kstage == 1 ? facts_of<WT, AT, NP, 2, 1>(p, c) : facts_of<WT, AT, NP, 2, 2>(p, c);
  }
};

// The instantiation whose NP is the layout's tile_n: one of kTileNs.
template <class WT, class AT, size_t... I>
void launch_tile_n(const LaunchArgs& l, int np, std::index_sequence<I...>) {
  const bool found = ((np == kTileNs[I] ? (Instantiation<WT, AT, kTileNs[I]>::launch(l), true) : false) || ...);
  FP8GEMM_REQUIRE(found, kInternal, "mid_m: no kernel for a wgmma N of ", np, " (m=", l.problem.m, ")");
}
template <class WT, class AT, size_t... I>
KernelFacts facts_tile_n(const Problem& p, const Config& c, int np, std::index_sequence<I...>) {
  KernelFacts f;
  const bool found = ((np == kTileNs[I] ? (f = Instantiation<WT, AT, kTileNs[I]>::facts(p, c), true) : false) || ...);
  FP8GEMM_REQUIRE(found, kInternal, "mid_m: no kernel for a wgmma N of ", np, " (m=", p.m, ")");
  return f;
}

template <class WT, class AT>
void launch_pair(const LaunchArgs& l) {
  launch_tile_n<WT, AT>(l, layout(l.problem, l.config).tile_n, std::make_index_sequence<kTileNCount>{});
}

template <class WT, class AT>
KernelFacts facts_pair(const Problem& p, const Config& c) {
  return facts_tile_n<WT, AT>(p, c, layout(p, c).tile_n, std::make_index_sequence<kTileNCount>{});
}

}  // namespace fp8gemm::mid_m::kernel
