// 16-byte cp.async helpers (sm_90a): a zero-filling copy with an L2 hint, and the mbarrier arrival
// that fires once a thread's copies have landed.
#pragma once

#include "core/sm90/arch.cuh"

namespace fp8gemm::sm90 {

#ifdef FP8GEMM_SM90A

// 16-byte global -> shared copy; src_size 0 writes 16 zero bytes and reads nothing (the source
// address must still be a valid one). L2 eviction-priority hint as the TMA kernel's.
__device__ __forceinline__ void cp_async_16_zfill(uint32_t dst, const void* src, uint32_t src_size, uint64_t policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(dst), "l"(src),
               "r"(src_size), "l"(policy)
               : "memory");
}
// Arrive on `bar` once every cp.async this thread issued so far has landed. noinc: the arrival
// is one of the barrier's expected count (init), not an extra pending one.
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

#endif  // FP8GEMM_SM90A

}  // namespace fp8gemm::sm90
