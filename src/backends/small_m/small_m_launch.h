// Host entry of the kernels, shared by the backend and the per-dtype-pair .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include "backends/small_m/small_m_config.h"

namespace fp8gemm::small_m {

// Operand type tags of the kernel templates.
struct E4M3 {};
struct E5M2 {};

struct LaunchArgs {
  Problem problem;
  Config config;
  GemmArgs args;
  cudaStream_t stream = nullptr;
  int sm_count = 0;  // of the device the launch runs on (the persistent grid)
};

// One per (A type, B type) pair, named in that order, each in its own translation unit so that the
// instantiations compile in parallel. Throws Error(kCuda) when the launch fails.
void launch_e4m3_e4m3(const LaunchArgs& l);  // A (activations) e4m3 x B (weights) e4m3
void launch_e4m3_e5m2(const LaunchArgs& l);  // A e4m3 x B e5m2
void launch_e5m2_e4m3(const LaunchArgs& l);  // A e5m2 x B e4m3

// Launch attributes: split-K blocks form a cluster along grid y (they reduce through distributed
// shared memory), and PDL lets the kernel start before the previous one ends. `attrs` must
// outlive the launch of `cfg`.
inline constexpr int kMaxLaunchAttrs = 2;
inline void set_launch_attrs(cudaLaunchConfig_t& cfg, cudaLaunchAttribute (&attrs)[kMaxLaunchAttrs], int splitk,
                             bool pdl) {
  cfg.attrs = attrs;
  cfg.numAttrs = 0;
  if (splitk > 1) {
    attrs[cfg.numAttrs].id = cudaLaunchAttributeClusterDimension;
    attrs[cfg.numAttrs].val.clusterDim.x = 1;
    attrs[cfg.numAttrs].val.clusterDim.y = unsigned(splitk);
    attrs[cfg.numAttrs].val.clusterDim.z = 1;
    ++cfg.numAttrs;
  }
  if (pdl) {
    attrs[cfg.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
    ++cfg.numAttrs;
  }
}

}  // namespace fp8gemm::small_m
