// wgmma helpers (sm_90a): shared-memory matrix descriptors, the fences that keep accumulators in
// place around asynchronous MMAs, and the FP8 MMAs themselves (wgmma_fp8.cuh, every N).
#pragma once

#include "core/sm90/arch.cuh"
#include "core/sm90/wgmma_fp8.cuh"

namespace fp8gemm::sm90 {

#ifdef FP8GEMM_SM90A

// Shared-memory matrix descriptor: K-major, 128-byte swizzle, 8-row groups 1024 bytes apart
// (stride byte offset), leading byte offset unused for swizzled K-major (1), base offset 0
// (every tile starts 1024-byte aligned). Adding 2 moves the start 32 bytes along K (one k32 step of
// FP8); adding 64 moves it 8 rows down (descriptors count 16-byte units).
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

// No-swizzle K-major descriptor with both offsets given: K-direction core matrices `lbo` bytes
// apart, 8-row groups `sbo` bytes apart.
__device__ __forceinline__ uint64_t smem_desc_plain2(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t((lbo >> 4) & 0x3FFF) << 16) |
         (uint64_t((sbo >> 4) & 0x3FFF) << 32);
}

// Keeps the compiler from moving accumulator reads or writes across an asynchronous MMA's issue
// or completion (the registers are the MMA's until wgmma.wait_group says it is done).
template <int NA>
__device__ __forceinline__ void fence_acc(float (&d)[NA]) {
#pragma unroll
  for (int i = 0; i < NA; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Before a warpgroup's first MMA that reads registers or shared memory written since its last one.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// Closes the MMAs issued since the last commit into one group.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most `N` committed groups of this warpgroup are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

#endif  // FP8GEMM_SM90A

}  // namespace fp8gemm::sm90
