// small_m v3 with its weights loaded by 16-byte ld.global straight into wgmma's register A
// fragment (tactic suffix ",wload=reg"); included by small_m_wgmma.cuh after its device helpers.
// See docs/perf/small_m.md, "Session 6: weights in registers".
//
// Why: session 5 measured the TMA path streaming at ~4.3 TB/s at best on the H200 and 16-byte
// loads in this kernel's order at 4.7-4.8 TB/s; cp.async into the shared ring (",wload=cp") kept
// the ring's barriers and reached 0.95 of 4.5 TB/s on one shape only. Here the weights never
// touch shared memory: each consumer thread keeps kRegChunks 64-byte K chunks of its two weight
// rows in flight in registers and feeds them to wgmma as operand A.
//
// The K order inside a 64-byte chunk is permuted (legal for a dot product if both operands
// follow it). wgmma's 8-bit A fragment gives lane (g = lane/4, t = lane%4) of warp w the bytes
// [4t, 4t+4) (register a0 / a1 for rows g / g+8) and [16+4t, 20+4t) (a2 / a3) of each k32 step.
// Lane t loads the 16 contiguous bytes [16t, 16t+16) of the chunk for each of its rows; their
// 4-byte words q = 0..3 become step q/2's a0 (q even) or a2 (q odd). The activations in shared
// memory follow: word 4t+q of a chunk goes to core matrix (step q/2, K half q%2), row n,
// position t. Slot layout, per 64-byte chunk j: [q][NP rows][16 bytes], so step s of chunk j is
// a K-major, unswizzled B operand with its two K-halves NP*16 bytes apart (leading byte offset)
// and 8-row groups 128 bytes apart (stride byte offset).
//
// Block: W consumer warpgroups (64 weight rows each) and one producer warp that copies the
// activations with 4-byte cp.async (the permutation is a gather of 4-byte words) into a ring of
// `stages` slots of kRegSlotK bytes of K each, after griddepcontrol.wait. The weights of the
// first kRegChunks chunks are requested before it (they do not depend on the previous kernel).
// Split-K and the epilogue are the one-shot kernels' (finish_block: cluster reduction in rank
// order, deterministic), reusing the slots' shared memory.
#pragma once

namespace fp8gemm::small_m::v3 {

#ifdef FP8GEMM_SMALL_M_SM90A

// 16 bytes of a weight row, streamed (read once: evict first from L1 and L2).
__device__ __forceinline__ uint4 ld_weights_16(const uint8_t* src) {
  uint4 v;
  asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(src));
  return v;
}

// 4-byte global -> shared copy; src_size 0 writes zeros and reads nothing (valid address still).
__device__ __forceinline__ void cp_async_4_zfill(uint32_t dst, const void* src, uint32_t src_size) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_size) : "memory");
}

// Unswizzled K-major descriptor: 8-row core matrices of 16 bytes per row (128 contiguous bytes),
// the two K halves of a k32 step `lbo` bytes apart, 8-row groups 128 bytes apart.
__device__ __forceinline__ uint64_t smem_desc_plain(uint32_t addr, uint32_t lbo) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t((lbo >> 4) & 0x3FFF) << 16) | (uint64_t(128 >> 4) << 32);
}

// D(64 x NP) += A(64 x 32 weights, registers) * B(32 x NP activations, shared memory).
template <class WT, class AT, int NP>
__device__ __forceinline__ void wgmma_rs(float (&d)[NP / 2], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint64_t db);

#define FP8GEMM_DEFINE_WGMMA_RS(WT, AT, TA, TB)                                                                   \
  template <>                                                                                                    \
  __device__ __forceinline__ void wgmma_rs<WT, AT, 8>(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,      \
                                                      uint32_t a3, uint64_t db) {                                \
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k32.f32." TA "." TB                                          \
                 " {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, 1, 1, 1;\n"                                                 \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                                \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db));                                                 \
  }                                                                                                              \
  template <>                                                                                                    \
  __device__ __forceinline__ void wgmma_rs<WT, AT, 16>(float (&d)[8], uint32_t a0, uint32_t a1, uint32_t a2,     \
                                                       uint32_t a3, uint64_t db) {                               \
    asm volatile("wgmma.mma_async.sync.aligned.m64n16k32.f32." TA "." TB                                         \
                 " {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, 1, 1, 1;\n"                                  \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),           \
                   "+f"(d[7])                                                                                    \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db));                                                 \
  }                                                                                                              \
  template <>                                                                                                    \
  __device__ __forceinline__ void wgmma_rs<WT, AT, 24>(float (&d)[12], uint32_t a0, uint32_t a1, uint32_t a2,    \
                                                       uint32_t a3, uint64_t db) {                               \
    asm volatile("wgmma.mma_async.sync.aligned.m64n24k32.f32." TA "." TB                                         \
                 " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, %16, 1, 1, 1;\n"                  \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),           \
                   "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])                                  \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db));                                                 \
  }                                                                                                              \
  template <>                                                                                                    \
  __device__ __forceinline__ void wgmma_rs<WT, AT, 32>(float (&d)[16], uint32_t a0, uint32_t a1, uint32_t a2,    \
                                                       uint32_t a3, uint64_t db) {                               \
    asm volatile("wgmma.mma_async.sync.aligned.m64n32k32.f32." TA "." TB                                         \
                 " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, {%16,%17,%18,%19}, %20, 1, 1, 1;\n"  \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),           \
                   "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),       \
                   "+f"(d[14]), "+f"(d[15])                                                                      \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db));                                                 \
  }

FP8GEMM_DEFINE_WGMMA_RS(E4M3, E4M3, "e4m3", "e4m3")
FP8GEMM_DEFINE_WGMMA_RS(E5M2, E4M3, "e5m2", "e4m3")
FP8GEMM_DEFINE_WGMMA_RS(E4M3, E5M2, "e4m3", "e5m2")
#undef FP8GEMM_DEFINE_WGMMA_RS

#endif  // FP8GEMM_SMALL_M_SM90A

// Block: W consumer warpgroups (warps 0 .. 4W-1), then one producer warp: kThreads<W>, as the
// TMA kernel. Occupancy hint 3 blocks per SM at W = 1 (register cap 136); none at W = 2, whose
// 8 chunks x 2 rows of 16 bytes in flight per thread do not fit the 113 registers of 2 blocks.
template <class WT, class AT, int W, int NP>
__global__ void __launch_bounds__(kThreads<W>, W == 1 ? 3 : 1) small_m_wgmma_reg_kernel(const Params p) {
#ifdef FP8GEMM_SMALL_M_SM90A
  constexpr int D = kRegChunks;            // 64-byte K chunks per weight row in flight per thread
  constexpr int kSlotK = kRegSlotK;        // bytes of K per activation slot (= D chunks)
  constexpr int kSlotBytes = NP * kSlotK;  // one slot: [chunk][q][NP rows][16 bytes]
  constexpr int kAcc = NP / 2;
  static_assert(kSlotK == 64 * D, "one activation slot per register ring turn");

  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[16];
  __shared__ __align__(8) uint64_t empty_bar[16];
  // 1024-byte aligned like the other kernels (finish_block reads the same pointer as floats).
  uint8_t* ring = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);

  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const int stages = p.stages;
  const int row0 = int(blockIdx.x) * (64 * W);
  const int batch = int(blockIdx.z);
  // This block's K range: [k0, kend), whole slots except at the end of K.
  const int64_t k0 = int64_t(blockIdx.y) * p.kblocks_per_split * int64_t(kSlotK);
  const int64_t kend_split = k0 + int64_t(p.kblocks_per_split) * kSlotK;
  const int64_t kend = kend_split < p.k ? kend_split : p.k;
  const int nchunks = kend > k0 ? int((kend - k0 + 63) / 64) : 0;
  const int nslots = (nchunks + D - 1) / D;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full_bar[s], 32);     // one cp.async arrival per producer lane
      mbar_init(&empty_bar[s], 4 * W);  // one arrival per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  // Dependents may start their prologue (and their weight prefetch) once every block got here.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");

  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;

  if (warp == 4 * W) {
    // Producer: slot i holds K [k0 + i*kSlotK, +kSlotK) of the NP activation rows; word e of a
    // slot row is chunk e/16, t = (e/4)%4, q = e%4 (lanes read consecutive words of a row).
    const uint8_t* a = p.a + int64_t(batch) * p.m * p.k;
    asm volatile("griddepcontrol.wait;\n" ::: "memory");  // the activations come from the previous kernel
    for (int i = 0; i < nslots; ++i) {
      const int s = i % stages;
      if (i >= stages) mbar_wait(&empty_bar[s], uint32_t((i / stages - 1) & 1));
      const uint32_t slot = smem_addr(ring + s * kSlotBytes);
      const int64_t kb = k0 + int64_t(i) * kSlotK;
      for (int e = lane; e < NP * (kSlotK / 4); e += 32) {
        const int n = e / (kSlotK / 4), w = e % (kSlotK / 4);
        const int j = w >> 4, t = (w >> 2) & 3, q = w & 3;
        const int64_t k = kb + 4 * w;
        const bool in = n < p.m && k < kend;
        const uint8_t* src = in ? a + int64_t(n) * p.k + k : p.a;
        cp_async_4_zfill(slot + uint32_t(((j * 4 + q) * NP + n) * 16 + 4 * t), src, in ? 4u : 0u);
      }
      cp_async_mbar_arrive_noinc(&full_bar[s]);
    }
  } else {
    // Consumers: warp w of warpgroup wg owns weight rows r = row0 + 16 (4 wg + w) + g and r + 8.
    const int g = lane >> 2, t = lane & 3;
    const int r = row0 + 16 * warp + g;
    const uint8_t* wrow = p.w + (int64_t(batch) * p.n + r) * p.k + k0 + 16 * t;
    const bool ra = r < p.n, rb = r + 8 < p.n;
    uint4 wa[D], wb[D];
    const auto load = [&](int c, int d) {
      const bool kin = k0 + 64 * c + 16 * t < kend;
      const uint8_t* src = wrow + 64 * int64_t(c);
      wa[d] = make_uint4(0, 0, 0, 0);
      wb[d] = make_uint4(0, 0, 0, 0);
      if (kin && ra) wa[d] = ld_weights_16(src);
      if (kin && rb) wb[d] = ld_weights_16(src + 8 * p.k);
    };
#pragma unroll
    for (int d = 0; d < D; ++d)
      if (d < nchunks) load(d, d);
    for (int i = 0; i < nslots; ++i) {
      const int s = i % stages;
      mbar_wait(&full_bar[s], uint32_t((i / stages) & 1));
      // cp.async writes are generic-proxy; wgmma reads through the async proxy.
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      const uint32_t slot = smem_addr(ring + s * kSlotBytes);
#pragma unroll
      for (int d = 0; d < D; ++d) {
        const int c = i * D + d;
        if (c < nchunks) {
          fence_acc(acc);
          asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
          const uint32_t chunk = slot + uint32_t(d * 4 * NP * 16);
          wgmma_rs<WT, AT, NP>(acc, wa[d].x, wb[d].x, wa[d].y, wb[d].y, smem_desc_plain(chunk, NP * 16));
          wgmma_rs<WT, AT, NP>(acc, wa[d].z, wb[d].z, wa[d].w, wb[d].w, smem_desc_plain(chunk + 2 * NP * 16, NP * 16));
          asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
          // The registers of chunk c are refilled next: its wgmma must have read them.
          asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
          fence_acc(acc);
          if (c + D < nchunks) load(c + D, d);
        }
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty_bar[s]);
    }
  }

  finish_block<W, NP, kThreads<W>>(p, acc, ring, row0, batch, warp < 4 * W);
#else
  __trap();  // wgmma exists on sm_90a only (can_implement refuses other devices)
#endif
}

}  // namespace fp8gemm::small_m::v3
