// small_m v3 stream-K (tactic field ",streamk=B", cp.async weights); included by
// small_m_wgmma.cuh after the cp.async kernel, whose producer and consumers it reuses.
//
// Why it was built: session 8's H200 numbers read as if one SM pulled at most ~1/132 of the HBM
// bandwidth (a grid that leaves SMs idle, e.g. 105 blocks of nano9b.down, streamed at 0.78 of
// 4.5 TB/s, one block on each of 128 SMs at 0.95), so that a grid of whole (tile, split) blocks
// would lose whatever its block count does not divide evenly over the SMs. Measured (session 9,
// docs/perf/small_m.md): it is slower than the other small_m tactics everywhere, so it is not
// offered; it runs when named. Here the units (row tile, batch, K block), tile-major, are
// cut into gridDim.x contiguous runs of equal length (+-1), one per block, B blocks per SM.
//
// A run crosses tiles: each tile it touches is a segment, accumulated from zero. A segment that
// covers its whole tile is stored. Otherwise the tile is shared by consecutive blocks b0 < ... < bj
// (b0 holds its K head as its last segment, bj its K tail as its first) and bj finishes it: the
// others write their partial sums to workspace slot 0 of their block and set their flag; bj keeps
// its own in its slot 1 and, after the rest of its run, waits for the flags of bj-1 .. b0, adds
// the partials in block order (deterministic), clears the flags and stores. Blocks only wait for
// lower-numbered ones, which the hardware dispatched first, and every block of the grid fits the
// SMs at once (can_implement), so the waits end.
//
// The flags live in the per-stream workspace flags (zero between launches; each launch clears
// what it set). A launch touches flags and slots only after griddepcontrol.wait, when the previous
// launch on the stream, which may be one of these, has ended.
#pragma once

namespace fp8gemm::small_m::v3 {

#ifdef FP8GEMM_SMALL_M_SM90A

__device__ __forceinline__ void consumer_barrier(int threads) {
  asm volatile("bar.sync 1, %0;\n" ::"r"(threads) : "memory");
}
__device__ __forceinline__ void flag_release(unsigned* flag, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned flag_acquire(const unsigned* flag) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
  return v;
}

// A position in the run's units, advanced one unit at a time without divisions (the producer's
// per-stage work is a few cp.async; 64-bit divisions there halved the stream on the H200).
struct UnitCursor {
  int kb, row_tile, batch;
  __device__ __forceinline__ void init(int64_t u, int kblocks, int tiles) {
    const int t = int(u / kblocks);
    kb = int(u % kblocks);
    row_tile = t % tiles;
    batch = t / tiles;
  }
  __device__ __forceinline__ void next(int kblocks, int tiles) {
    if (++kb < kblocks) return;
    kb = 0;
    if (++row_tile < tiles) return;
    row_tile = 0;
    ++batch;
  }
};

#endif  // FP8GEMM_SMALL_M_SM90A

template <class WT, class AT, int W, int NP>
__global__ void __launch_bounds__(kThreadsCp<W>, (W == 1 ? 4 : 2))
    small_m_wgmma_streamk_kernel(const __grid_constant__ CUtensorMap amap, const Params p) {
#ifdef FP8GEMM_SMALL_M_SM90A
  using St = RingStage<W, NP>;
  constexpr int kKB = St::kKB, kWBytes = St::kWBytes, kABytes = St::kABytes, kStage = St::kBytes;
  constexpr int kAcc = NP / 2;
  constexpr int kC = W * 128;  // consumer threads
  constexpr int kRowsPerThread = W * 64 * (kKB / 16) / kCpProducers;

  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[16];
  __shared__ __align__(8) uint64_t empty_bar[16];
  uint8_t* ring = ring_base(smem_raw);

  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const int stages = p.stages;
  const int kblocks = p.kblocks;
  const int64_t grid = gridDim.x, b = blockIdx.x;
  const int64_t u_begin = b * p.sk_units / grid, u_end = (b + 1) * p.sk_units / grid;
  const int nunits = int(u_end - u_begin);

  start_block(full_bar, empty_bar, stages, kCpProducers + 1, 4 * W);

  if (warp >= 4 * W) {
    // Producers: the cp.async kernel's, walking the run's units across tile boundaries.
    const CpProducerLane prod = cp_producer_lane<W>();
    const int pt = prod.pt, chunk = prod.chunk, r0 = prod.r0;
    const uint32_t swz = prod.swz;
    uint64_t pol_w, pol_a;
    stream_policies(pol_w, pol_a);
    UnitCursor wc, ac;  // the next unit whose weights / activations to load
    wc.init(u_begin, kblocks, p.tiles);
    ac = wc;
    const auto load_weights = [&](int s) {
      // The unit's tile can change from one stage to the next: its rows are worked out per stage.
      const CpRows rows = cp_rows(p, p.w + int64_t(wc.batch) * p.n * p.k, wc.row_tile * (64 * W), r0);
      cp_weight_kblock<kRowsPerThread>(p, rows, int64_t(wc.kb) * kKB + chunk * 16,
                                       smem_addr(ring + s * kStage) + uint32_t(r0 * 128) + swz, pol_w);
      cp_async_mbar_arrive_noinc(&full_bar[s]);
      wc.next(kblocks, p.tiles);
    };
    const auto load_activations = [&](int s) {
      mbar_arrive_expect_tx(&full_bar[s], kABytes);
      tma_load(ring + s * kStage + kWBytes, &amap, &full_bar[s], ac.kb * kKB, 0, ac.batch, pol_a);
      ac.next(kblocks, p.tiles);
    };
    const int pre = min(stages, nunits);
    for (int i = 0; i < pre; ++i) load_weights(i);
    if (pt == 0 && nunits > 0) {
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&amap)) : "memory");
      asm volatile("griddepcontrol.wait;\n" ::: "memory");
      for (int i = 0; i < pre; ++i) load_activations(i);
    }
    int s = pre == stages ? 0 : pre;
    uint32_t phase = 0;
    for (int i = pre; i < nunits; ++i) {
      mbar_wait(&empty_bar[s], phase);
      load_weights(s);
      if (pt == 0) load_activations(s);
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    }
  } else {
    const int wg = warp >> 2, tc = int(threadIdx.x);
    asm volatile("griddepcontrol.wait;\n" ::: "memory");  // scales, out, slots and flags: stream order
    const float scale = *p.a_scale * *p.b_scale;
    float* slots = p.sk_partials + b * (2 * kAcc * kC);  // [2][kAcc][kC]: 0 = given away, 1 = kept
    int s = 0, prev = -1;
    uint32_t phase = 0;
    int kept_tile = -1;  // the tile whose K tail opened the run, finished after the run
    for (int64_t u = u_begin; u < u_end;) {
      const int tile = int(u / kblocks), kb_lo = int(u % kblocks);
      const int nkb = int(min(int64_t(kblocks - kb_lo), u_end - u));
      float acc[kAcc];
#pragma unroll
      for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
      consume_k_blocks<WT, AT, NP, St, true>(acc, nkb, ring, full_bar, empty_bar, stages, wg, lane, s, phase, prev);
      // The segment's last stage is read: give it back now, so the producer streams through
      // this epilogue.
      if (prev >= 0) {
        __syncwarp();
        if (lane == 0) mbar_arrive(&empty_bar[prev]);
        prev = -1;
      }
      u += nkb;
      const bool head = kb_lo == 0, tail = kb_lo + nkb == kblocks;
      if (head && tail) {
        const int64_t out_base = int64_t(tile / p.tiles) * p.m * int64_t(p.n);
#pragma unroll
        for (int i = 0; i < kAcc; ++i)
          store_fragment(p, (tile % p.tiles) * (64 * W), out_base, scale, tc, i, acc[i]);
      } else if (tail) {  // first segment of the run: finished by this block after the run
        kept_tile = tile;
#pragma unroll
        for (int i = 0; i < kAcc; ++i) __stcg(slots + (kAcc + i) * kC + tc, acc[i]);
      } else {  // last segment of the run: a later block finishes the tile
#pragma unroll
        for (int i = 0; i < kAcc; ++i) __stcg(slots + i * kC + tc, acc[i]);
        __threadfence();
        consumer_barrier(kC);
        if (tc == 0) flag_release(p.sk_flags + b, 1u);
      }
    }
    if (kept_tile >= 0) {
      // The blocks before this one that touch the tile: their runs end past the tile's start.
      const int64_t tile_start = int64_t(kept_tile) * kblocks;
      int64_t first = b - 1;
      while (first > 0 && first * p.sk_units / grid > tile_start) --first;
      if (tc == 0)
        for (int64_t c = first; c < b; ++c) {
          while (flag_acquire(p.sk_flags + c) == 0) __nanosleep(64);
          p.sk_flags[c] = 0u;  // nothing else reads it in this launch; the next one waits for ours to end
        }
      consumer_barrier(kC);
      float acc[kAcc];
#pragma unroll
      for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
      for (int64_t c = first; c <= b; ++c) {
        const float* part = p.sk_partials + c * (2 * kAcc * kC) + (c == b ? kAcc * kC : 0);
#pragma unroll
        for (int i = 0; i < kAcc; ++i) acc[i] += __ldcg(part + i * kC + tc);
      }
      const int64_t out_base = int64_t(kept_tile / p.tiles) * p.m * int64_t(p.n);
#pragma unroll
      for (int i = 0; i < kAcc; ++i)
        store_fragment(p, (kept_tile % p.tiles) * (64 * W), out_base, scale, tc, i, acc[i]);
    }
  }
#else
  __trap();  // wgmma exists on sm_90a only (can_implement refuses other devices)
#endif
}

}  // namespace fp8gemm::small_m::v3
