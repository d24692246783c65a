// The sm_90a device helpers' common ground: the guard under which they exist, shared-memory
// addresses and the 1024-byte alignment of swizzled tiles. Every header of src/core/sm90 is shared by
// the hand-written Hopper backends (small_m, mid_m); each helper is one PTX instruction or a short,
// fixed sequence, so that a kernel's machine code is what its own source says.
#pragma once

#include <cstdint>

// wgmma, TMA, mbarrier transactions and clusters: compiled for sm_90a only (arch-specific features).
// Elsewhere (the host pass, sm_100a) the helpers do not exist and the kernels compile to a trap.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FP8GEMM_SM90A 1
#endif

namespace fp8gemm::sm90 {

#ifdef FP8GEMM_SM90A

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

// The ring (or slots) in dynamic shared memory, 1024-byte aligned (128-byte swizzle atoms; the
// split-K reductions reuse it as floats).
__device__ __forceinline__ uint8_t* ring_base(uint8_t* smem_raw) {
  return smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
}

#endif  // FP8GEMM_SM90A

}  // namespace fp8gemm::sm90
