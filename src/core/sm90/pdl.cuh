// Programmatic dependent launch (sm_90): wait for the grids this one depends on (their writes are
// then visible), and let the dependent grid launch.
#pragma once

#include "core/sm90/arch.cuh"

namespace fp8gemm::sm90 {

#ifdef FP8GEMM_SM90A

__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ void pdl_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

#endif  // FP8GEMM_SM90A

}  // namespace fp8gemm::sm90
