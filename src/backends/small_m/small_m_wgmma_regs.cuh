// small_m v3 with its weights loaded by 16-byte ld.global straight into wgmma's register A
// fragment (tactic suffix ",wload=reg"); included by small_m_wgmma.cuh after its device helpers.
// See docs/perf/small_m.md, "Session 6 (2026-11-30): weights in registers". Not a candidate: on
// the H200 it was slower than the best other small_m tactic at every suite point (runs when named).
//
// Why: session 5 measured the TMA path streaming at ~4.3 TB/s at best on the H200 and 16-byte
// loads in this kernel's order at 4.7-4.8 TB/s; cp.async into the shared ring (",wload=cp") kept
// the ring's barriers and reached 0.95 of 4.5 TB/s on one shape only. Here the weights never
// touch shared memory: each consumer thread keeps two slots of kRegChunks 16-byte loads in flight,
// and each load's four registers are one wgmma's A operand as they are.
//
// Layout. wgmma's 8-bit A fragment gives lane (g = lane/4, t = lane%4) of warp w four registers
// {a0, a1, a2, a3} = {row g: K bytes [4t, 4t+4), row g+8: same, row g: [16+4t, 20+4t), row g+8:
// same}. A 16-byte load holds one weight row, so no load has that shape, and the register moves
// that reshape one (ptxas puts them right after the load) wait for it at once. Instead both MMA
// rows g and g+8 are the same weight row r = 8 warp + g, and the wgmma's N is doubled: columns
// [0, NP) hold the activations of load words 0 and 2 (a0 / a2) and columns [NP, 2 NP) those of
// words 1 and 3 (a1 / a3). Lane t's load is K bytes [16t, 16t+16) of a 64-byte chunk; its word
// q sits at (K half q/2, position t), column group q%2. Output (row r, activation row m) =
// D[g][m] + D[g+8][NP + m], both held by the same thread (the other two quadrants are cross
// terms, discarded). A warpgroup covers 32 weight rows and 64 bytes of K per wgmma.
//
// The activations are gathered into that order by one producer warp with 4-byte cp.async (word
// 4t+q of chunk j of activation row m goes to [j][q/2][q%2][m][t]: per chunk and K half a
// K-major, unswizzled B operand of 2 NP rows, its two K halves 2 NP * 16 bytes apart, 8-row
// groups 128 bytes apart), into a ring of `stages` slots of kRegSlotK bytes of K each, after
// griddepcontrol.wait. The weights of the first two slots are requested before it (they do not
// depend on the previous kernel). Split-K and the epilogue are the one-shot kernels'
// (finish_block: cluster reduction in rank order, deterministic), reusing the slots.
#pragma once

namespace fp8gemm::small_m::v3 {

#ifdef FP8GEMM_SMALL_M_SM90A

// 16 bytes of a weight row, streamed (read once: evict first). Always loaded, from a valid
// address: a predicated or conditional load made ptxas load into temporaries and copy them into
// the ring with predicated moves, which wait for the load as soon as it is issued.
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

// D(64 x N, f32) += A(64 x 32 weights, the four registers of `a`) * B(32 x N activations, shared
// memory); N = 2 NP.
template <class WT, class AT, int N>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], uint4 a, uint64_t db);

#define FP8GEMM_DEFINE_WGMMA_RS(WT, AT, TA, TB) \
  template <> \
  __device__ __forceinline__ void wgmma_rs<WT, AT, 16>(float(&d)[8], uint4 a, uint64_t db) { \
    asm volatile("wgmma.mma_async.sync.aligned.m64n16k32.f32." TA "." TB \
                 " {%0,%1,%2,%3,%4,%5,%6,%7}," \
                 " {%8,%9,%10,%11}, %12, 1, 1, 1;\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]) \
                 : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(db)); \
  } \
  template <> \
  __device__ __forceinline__ void wgmma_rs<WT, AT, 32>(float(&d)[16], uint4 a, uint64_t db) { \
    asm volatile("wgmma.mma_async.sync.aligned.m64n32k32.f32." TA "." TB \
                 " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}," \
                 " {%16,%17,%18,%19}, %20, 1, 1, 1;\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]) \
                 : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(db)); \
  } \
  template <> \
  __device__ __forceinline__ void wgmma_rs<WT, AT, 48>(float(&d)[24], uint4 a, uint64_t db) { \
    asm volatile("wgmma.mma_async.sync.aligned.m64n48k32.f32." TA "." TB \
                 " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23}," \
                 " {%24,%25,%26,%27}, %28, 1, 1, 1;\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]) \
                 : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(db)); \
  } \
  template <> \
  __device__ __forceinline__ void wgmma_rs<WT, AT, 64>(float(&d)[32], uint4 a, uint64_t db) { \
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k32.f32." TA "." TB \
                 " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}," \
                 " {%32,%33,%34,%35}, %36, 1, 1, 1;\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
                 : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(db)); \
  }

FP8GEMM_DEFINE_WGMMA_RS(E4M3, E4M3, "e4m3", "e4m3")
FP8GEMM_DEFINE_WGMMA_RS(E5M2, E4M3, "e5m2", "e4m3")
FP8GEMM_DEFINE_WGMMA_RS(E4M3, E5M2, "e4m3", "e5m2")
#undef FP8GEMM_DEFINE_WGMMA_RS

#endif  // FP8GEMM_SMALL_M_SM90A

// Output element of value i of consumer thread tc: weight row row0 + 8 (tc/32) + (tc%32)/4,
// activation row 8 (i/2) + 2 (tc%4) + i%2 (see the layout above).
struct RegWeightsFragment {
  template <class P>
  __device__ __forceinline__ static void store(const P& p, int row0, int64_t out_base, float scale, int tc, int i,
                                               float v) {
    const int n = row0 + (tc >> 5) * 8 + ((tc & 31) >> 2);
    const int m = (i >> 1) * 8 + (tc & 3) * 2 + (i & 1);
    store_output(p, out_base, m, n, v * scale);
  }
};

// Block: W consumer warpgroups of 32 weight rows (warps 0 .. 4W-1), then one producer warp:
// kThreads<W>. W = rows / 32 = 2 (rows=64 only: with 4 warpgroups the registers spill). No
// occupancy hint: the ring of 16 loads per thread needs 64 registers, and a cap of 113 (two
// blocks per SM) spilled; two blocks still fit where a kernel needs <= 112 (NP = 8).
template <class WT, class AT, int W, int NP>
__global__ void __launch_bounds__(kThreads<W>, 1) small_m_wgmma_reg_kernel(const Params p) {
#ifdef FP8GEMM_SMALL_M_SM90A
  constexpr int D = kRegChunks;            // 64-byte chunks per slot (one 16-byte load per thread each)
  constexpr int kSlotK = kRegSlotK;        // bytes of K per activation slot
  constexpr int kChunkBytes = 64 * NP;     // activations of one 64-byte K chunk: [2][2][NP][16]
  constexpr int kSlotBytes = D * kChunkBytes;
  constexpr int kLbo = 2 * NP * 16;        // K half 1 of a chunk
  constexpr int kAcc = NP;                 // m64n(2NP) accumulators per thread
  constexpr int kOut = NP / 4;             // outputs per thread: rows g and g+8 summed
  static_assert(kSlotK == 64 * D, "one activation slot per register ring turn");

  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[16];
  __shared__ __align__(8) uint64_t empty_bar[16];
  uint8_t* ring = ring_base(smem_raw);

  // The warp index through a shuffle: ptxas then knows it is warp-uniform, and the consumer branch
  // is not a divergent path (there the wgmma on register operands were serialized).
  const int warp = __shfl_sync(0xffffffffu, int(threadIdx.x >> 5), 0), lane = int(threadIdx.x & 31);
  const int stages = p.stages;
  const int row0 = int(blockIdx.x) * (32 * W);
  const int batch = int(blockIdx.z);
  // This block's K range: [k0, kend), whole slots except at the end of K.
  const int64_t k0 = int64_t(blockIdx.y) * p.kblocks_per_split * int64_t(kSlotK);
  const int64_t kend_split = k0 + int64_t(p.kblocks_per_split) * kSlotK;
  const int64_t kend = kend_split < p.k ? kend_split : p.k;
  const int nchunks = kend > k0 ? int((kend - k0 + 63) / 64) : 0;
  const int nslots = (nchunks + D - 1) / D;

  start_block(full_bar, empty_bar, stages, 32, 4 * W);  // full: one cp.async arrival per producer lane

  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;

  if (warp == 4 * W) {
    // Producer: slot i holds K [k0 + i kSlotK, + kSlotK) of the NP activation rows; lanes read
    // consecutive words w = 16 j + 4 t + q of a row (zeros past m and past the block's K).
    const uint8_t* a = p.a + int64_t(batch) * p.m * p.k;
    asm volatile("griddepcontrol.wait;\n" ::: "memory");  // the activations come from the previous kernel
    for (int i = 0; i < nslots; ++i) {
      const int s = i % stages;
      if (i >= stages) mbar_wait(&empty_bar[s], uint32_t((i / stages - 1) & 1));
      const uint32_t slot = smem_addr(ring + s * kSlotBytes);
      const int64_t kb = k0 + int64_t(i) * kSlotK;
      for (int e = lane; e < NP * (kSlotK / 4); e += 32) {
        const int m = e / (kSlotK / 4), w = e % (kSlotK / 4);
        const int j = w >> 4, t = (w >> 2) & 3, q = w & 3;
        const int64_t k = kb + 4 * w;
        const bool in = m < p.m && k < kend;
        const uint8_t* src = in ? a + int64_t(m) * p.k + k : p.a;
        const int dst = j * kChunkBytes + (q >> 1) * kLbo + ((q & 1) * NP + m) * 16 + 4 * t;
        cp_async_4_zfill(slot + uint32_t(dst), src, in ? 4u : 0u);
      }
      cp_async_mbar_arrive_noinc(&full_bar[s]);
    }
  } else {
    // Consumers: lane (g, t) of warp `warp` streams weight row r = row0 + 8 warp + g, bytes
    // [16t, 16t+16) of every 64-byte chunk. Rows past n read row n - 1 (not stored). Loads are
    // never predicated or branched around: chunks past the block's K read other bytes (below),
    // and the one slot that holds such chunks (the last, when K or the split ends inside it) runs
    // a copy of the loop that zeroes them before the wgmma (the activations there are zeros too,
    // but a weight may be NaN); in the main loop the masks would be scheduled early, waiting for
    // the loads.
    const int g = lane >> 2, t = lane & 3;
    const int r = min(row0 + 8 * warp + g, p.n - 1);
    const uint8_t* wrow = p.w + (int64_t(batch) * p.n + r) * p.k;
    // Two slots of chunks in registers: slot i lives in half i % 2 and is refilled with slot i + 2
    // once its wgmma are done, so the next slot's loads have been in flight for a whole slot.
    // (ptxas places the refills at the end of a slot whatever the source order; with one half
    // the next slot's first chunk waited for loads issued just before it.)
    uint4 wr[2 * D];
    const auto k_of = [&](int c) { return k0 + 64 * int64_t(c) + 16 * t; };
    // Chunks past the block's K (the tail slot's, and the two slots the ring reads ahead of the
    // end) load the first activation bytes instead: L1/L2-resident, never used unmasked.
    const auto load = [&](int c, int d) { wr[d] = ld_weights_16(k_of(c) < kend ? wrow + k_of(c) : p.a); };
#pragma unroll
    for (int d = 0; d < 2 * D; ++d) load(d, d);
    const auto consume_slot = [&](int i, auto half, auto masked) {
      constexpr int h = decltype(half)::value;
      const int s = i % stages;
      mbar_wait(&full_bar[s], uint32_t((i / stages) & 1));
      // cp.async writes are generic-proxy; wgmma reads through the async proxy.
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      const uint32_t slot = smem_addr(ring + s * kSlotBytes);
      fence_acc(acc);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int d = 0; d < D; ++d) {
        uint4 a = wr[h * D + d];
        if constexpr (decltype(masked)::value) {
          const uint32_t keep = k_of(i * D + d) < kend ? ~0u : 0u;
          a = make_uint4(a.x & keep, a.y & keep, a.z & keep, a.w & keep);
          // The masked copies are new registers: fence them for the wgmma (else ptxas injects it).
          asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        }
        wgmma_rs<WT, AT, 2 * NP>(acc, a, smem_desc_plain(slot + uint32_t(d * kChunkBytes), kLbo));
      }
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      fence_acc(acc);
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty_bar[s]);
#pragma unroll
      for (int d = 0; d < D; ++d) load((i + 2) * D + d, h * D + d);
    };
    using H0 = std::integral_constant<int, 0>;
    using H1 = std::integral_constant<int, 1>;
    const int nfull = kend > k0 ? int((kend - k0) / kSlotK) : 0;  // slots with every chunk inside K
    int i = 0;
    for (; i + 1 < nfull; i += 2) {
      consume_slot(i, H0{}, std::false_type{});
      consume_slot(i + 1, H1{}, std::false_type{});
    }
    if (i < nfull) {  // an odd number of full slots; then maybe the partial one in half 1
      consume_slot(i++, H0{}, std::false_type{});
      if (i < nslots) consume_slot(i, H1{}, std::true_type{});
    } else if (i < nslots) {
      consume_slot(i, H0{}, std::true_type{});
    }
  }

  // Output (r, m) = D[g][m] + D[g+8][NP + m]: accumulators 4 jj + q and 4 (jj + NP/8) + 2 + q.
  float out[kOut];
#pragma unroll
  for (int i = 0; i < kOut; ++i) out[i] = acc[4 * (i >> 1) + (i & 1)] + acc[4 * ((i >> 1) + NP / 8) + 2 + (i & 1)];
  finish_block<W, NP, kThreads<W>, kOut, RegWeightsFragment>(p, out, ring, row0, batch, warp < 4 * W);
#else
  __trap();  // wgmma exists on sm_90a only (can_implement refuses other devices)
#endif
}

}  // namespace fp8gemm::small_m::v3
