// Host entry of the mid_m kernels, shared by the backend and the per-dtype-pair .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include "backends/mid_m/mid_m_config.h"
#include "backends/mid_m/mid_m_layout.h"

namespace fp8gemm::mid_m {

struct LaunchArgs {
  Problem problem;
  Config config;
  GemmArgs args;
  cudaStream_t stream = nullptr;
  DeviceLimits device;  // of the device the launch runs on
};

// One per (A type, B type) pair, named in that order, each in its own translation unit so that the
// instantiations compile in parallel. Throws Error(kCuda) when the launch fails.
void launch_e4m3_e4m3(const LaunchArgs& l);  // A (activations) e4m3 x B (weights) e4m3
void launch_e4m3_e5m2(const LaunchArgs& l);  // A e4m3 x B e5m2
void launch_e5m2_e4m3(const LaunchArgs& l);  // A e5m2 x B e4m3
void launch(const LaunchArgs& l);            // the one of the three that p's types name

// What the kernel that `c` runs on `p` was compiled to (cudaFuncGetAttributes), for the GPU tests
// and the SASS notes: registers per thread, local memory (spills) per thread, and how many blocks
// of it an SM holds at the launch's shared memory.
struct KernelFacts {
  int registers = 0;
  size_t local_bytes = 0;
  int blocks_per_sm = 0;
};
KernelFacts facts_e4m3_e4m3(const Problem& p, const Config& c);
KernelFacts facts_e4m3_e5m2(const Problem& p, const Config& c);
KernelFacts facts_e5m2_e4m3(const Problem& p, const Config& c);
KernelFacts kernel_facts(const Problem& p, const Config& c);  // the one of the three that p's types name

}  // namespace fp8gemm::mid_m
