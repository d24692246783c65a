// What a mid_m Config occupies and how it launches for one problem, computed in one place from
// (Problem, Config, DeviceLimits): the wgmma N for M, the ring's layout in shared memory, the ring
// depths that fit an SM, the registers the kernel is built for, and the launch geometry (grid,
// cluster). Host-only (the CPU tests cover it); the kernels' Params and template arguments take
// their numbers from here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/mid_m/mid_m_config.h"
#include "fp8gemm/device.h"

namespace fp8gemm::mid_m {

// The wgmma N (activation rows one MMA covers) the kernels are built for, ascending: every 8 up to
// 64 and every 16 above, so that M in 33..256 pads by at most 15 rows, and the suite's M values
// (48, 64, 96, 128, 192, 256) by none. tile_n(m) is the smallest that holds m.
constexpr int kTileNs[] = {40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256};
constexpr int kTileNCount = int(sizeof(kTileNs) / sizeof(kTileNs[0]));
constexpr int tile_n(int64_t m) {
  for (int n : kTileNs)
    if (m <= n) return n;
  return 0;  // m > 256: none
}

// Threads of a block: its consumer warpgroups, then one producer warp.
constexpr int kProducerThreads = 32;
constexpr int block_threads(int warpgroups) { return warpgroups * 128 + kProducerThreads; }

// FP32 accumulators per consumer thread: a 64 x N wgmma tile holds N / 2 per thread.
constexpr int accumulators(int n) { return n / 2; }
// The registers a thread may have when `blocks` blocks of `threads` share an SM, as ptxas counts
// them: each of the SM's four schedulers has 16K registers for the warps it holds, a block's warps
// are dealt round-robin to the schedulers, and a thread gets a multiple of 8, at most 255.
constexpr int register_cap(int blocks, int threads) {
  const int warps_per_scheduler = (blocks * ((threads + 31) / 32) + 3) / 4;
  const int cap = 16384 / (warps_per_scheduler * 32) / 8 * 8;
  return cap > 255 ? 255 : cap;
}
// The blocks per SM each kernel is built for (its __launch_bounds__ minimum): the most, up to 4,
// whose register cap leaves each consumer thread its accumulators and kRegisterOverhead more
// (addresses, ring state, the epilogue), so that nothing spills (docs/mid_m.md: ptxas's counts).
constexpr int kRegisterOverhead = 64;
constexpr int blocks_per_sm_by_registers(int warpgroups, int n) {
  int blocks = 1;
  for (int b = 2; b <= 4; ++b)
    if (register_cap(b, block_threads(warpgroups)) >= accumulators(n) + kRegisterOverhead) blocks = b;
  return blocks;
}

// Activation rows one block covers: ceil(m / msplit); its wgmma N is tile_n of it.
constexpr int64_t block_m(int64_t m, int msplit) { return (m + msplit - 1) / msplit; }

// The device's limits that the layout reads (never hard-coded: DeviceInfo is read from the GPU).
struct DeviceLimits {
  int sm_count = 0;
  int cc = 0;                 // compute capability, 90 for sm_90
  size_t smem_per_block = 0;  // the opt-in maximum per block (static + dynamic)
  size_t smem_per_sm = 0;     // one SM's, shared by its resident blocks
  static DeviceLimits of(const DeviceInfo& d);
};

// Shared memory beside a block's dynamic allocation: its full and empty barrier arrays (static),
// and per block the 1 KB the system reserves (sm_90: 228 KB per SM, 227 KB per block).
constexpr size_t kStaticSharedBytes = 2 * kMaxStages * 8;
constexpr size_t kReservedPerBlock = 1024;
// Slack to align the ring to 1024 bytes (128-byte swizzle atoms; the kernel aligns it itself).
constexpr size_t kAlignSlack = 1024;

// The ring in shared memory: a stage is `kstage` K blocks, each the block's weight tile (rows x 128
// bytes) then its activation tile (tile_n(block_m) x 128 bytes), both 128-byte swizzled, 1024-byte
// aligned. With split-K the ring, once every K loop of the cluster is over, receives the partial
// sums of the consumer threads t with t % splitk == rank that the block reduces:
// [splitk][accumulators][ceil(consumer threads / splitk)] floats.
struct Layout {
  int tile_n = 0;
  int w_bytes = 0;      // a K block's weight tile
  int a_bytes = 0;      // a K block's activation tile
  int stage_bytes = 0;  // kstage K blocks of both
  size_t ring_bytes = 0;
  size_t reduce_bytes = 0;
  size_t shared_bytes = 0;  // the block's dynamic shared memory: max(ring, reduce) + slack
};
Layout layout(const Problem& p, const Config& c);

// The largest dynamic allocation a block may ask for on this device.
size_t max_dynamic_shared(const DeviceLimits& d);

// The deepest ring, up to `max_stages`, with which `per_sm` blocks of `c` (its stages replaced) fit
// one SM's shared memory; 0 if fewer than 3 stages fit.
int deepest_ring(const Problem& p, const Config& c, int per_sm, const DeviceLimits& d, int max_stages = 16);

// Ring stages along all of K: ceil(ceil(k / 128) / kstage) (the last may run past K: its copies
// read zeros there). Split-K shares these out.
int64_t k_steps(const Problem& p, const Config& c);

// Row tiles of `c` per batch: ceil(n / rows), and rounded up to even where the multicast pair is
// two row tiles (mcast=2 without msplit; a tile past n is loaded clamped and never stored).
int64_t row_tiles(const Problem& p, const Config& c);
int64_t padded_row_tiles(const Problem& p, const Config& c);

// The launch of `c` on `p`. A unit is (M block, row tile, batch), units = msplit * padded tiles *
// batch, numbered batch-major and M block fastest (the blocks of one row tile are neighbours, and
// a multicast pair with msplit); grid x walks units (one each, or persist: a persistent grid whose
// blocks step by grid x), grid y = split ranks, grid z = 1; the cluster is (mcast, splitk, 1).
struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned cluster[3] = {1, 1, 1};
  int threads = 0;
  size_t shared_bytes = 0;
  int64_t tiles = 0;       // padded row tiles per batch
  int64_t real_tiles = 0;  // ceil(n / rows)
  int64_t units = 0;
};
LaunchShape launch_shape(const Problem& p, const Config& c, const DeviceLimits& d);

}  // namespace fp8gemm::mid_m
