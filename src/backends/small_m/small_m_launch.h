// Host entry of the kernel family, shared by the backend and the per-dtype-pair .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

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
};

// One per (weight type, activation type) pair, each in its own translation unit so that the
// instantiations compile in parallel. Throws Error(kCuda) when the launch fails.
void launch_e4m3_e4m3(const LaunchArgs& l);  // weights e4m3, activations e4m3
void launch_e5m2_e4m3(const LaunchArgs& l);  // weights (B) e5m2, activations (A) e4m3
void launch_e4m3_e5m2(const LaunchArgs& l);  // weights (B) e4m3, activations (A) e5m2

// v3 (wgmma + TMA, sm_90a): same pairs, one translation unit each.
void launch_wgmma_e4m3_e4m3(const LaunchArgs& l);
void launch_wgmma_e5m2_e4m3(const LaunchArgs& l);
void launch_wgmma_e4m3_e5m2(const LaunchArgs& l);

// Whether the kernels have machine code for the current device ("" if yes, else the reason).
const char* kernel_image_problem();

}  // namespace fp8gemm::small_m
