// Tensor memory accelerator helpers (sm_90a): tiled 3-D loads into this block's shared memory or,
// multicast, into the same offset of several blocks of the cluster; L2 eviction policies; L2
// prefetch of a tile; the tensor map's prefetch.
#pragma once

#include <cuda.h>  // CUtensorMap (types only: the library does not link libcuda)

#include "core/sm90/arch.cuh"

namespace fp8gemm::sm90 {

#ifdef FP8GEMM_SM90A

// 3-D tiled bulk tensor copy global -> shared, completing on `bar` (bytes counted), with an L2
// eviction-priority hint.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2,
                                         uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar)), "l"(policy)
      : "memory");
}

// The same copy delivered to every block of the cluster whose bit is set in `cta_mask`, at the same
// shared-memory offsets of `dst` and `bar` in each (each block's barrier counts the bytes it gets).
__device__ __forceinline__ void tma_load_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                                   int c2, uint16_t cta_mask, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint"
      " [%0], [%1, {%2, %3, %4}], [%5], %6, %7;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar)), "h"(cta_mask),
      "l"(policy)
      : "memory");
}

// The L2 eviction policies of the weight and activation copies: weights stream once (evict
// first); activations are re-read by every row block (evict last).
__device__ __forceinline__ void stream_policies(uint64_t& weights, uint64_t& activations) {
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(weights));
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(activations));
}

// Fire-and-forget prefetch of one tensor tile into L2.
__device__ __forceinline__ void tma_prefetch_l2(const CUtensorMap* map, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

// Brings a kernel-parameter tensor map into the TMA unit's cache before its first copy.
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

#endif  // FP8GEMM_SM90A

}  // namespace fp8gemm::sm90
