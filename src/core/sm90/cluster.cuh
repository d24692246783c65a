// Thread-block cluster helpers (sm_90a): addresses in another block's shared memory, stores there,
// this block's place in its cluster, and the cluster-wide barrier.
#pragma once

#include "core/sm90/arch.cuh"

namespace fp8gemm::sm90 {

#ifdef FP8GEMM_SM90A

// Address of the same shared-memory variable in block `rank` of the cluster.
__device__ __forceinline__ uint32_t mapa_rank(uint32_t addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
__device__ __forceinline__ void st_cluster_f32(uint32_t addr, float v) {
  asm volatile("st.shared::cluster.f32 [%0], %1;\n" ::"r"(addr), "f"(v) : "memory");
}
__device__ __forceinline__ float ld_cluster_f32(uint32_t addr) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
  return v;
}

// This block's rank in its cluster (x fastest: x + dim.x * (y + dim.y * z)).
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Every thread of every block of the cluster arrives, then waits for all of them: what each did
// before is visible to all after (release / acquire), and no block leaves while another may still
// reach into its shared memory or barriers. Not .aligned: a warp may arrive diverged (a producer
// lane that ran the ring alone).
__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

// The cluster barrier in two halves: arrive releases this thread's earlier accesses (remote ones
// included); wait returns once every thread of the cluster has arrived or exited. Aligned: every
// thread of a warp that gets there executes the same one.
__device__ __forceinline__ void cluster_arrive_release() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait_acquire() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

#endif  // FP8GEMM_SM90A

}  // namespace fp8gemm::sm90
