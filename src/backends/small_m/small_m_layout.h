// What a small_m Config occupies and how it launches for one problem, computed in one place from
// (Problem, Config): the ring's layout in shared memory, the ring depths that fit an SM, and the
// launch geometry. Host-only (the CPU tests cover it); the launch code and the kernels' Params take
// their numbers from here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/small_m/small_m_config.h"

namespace fp8gemm::small_m {

// K blocks of a weight row: ceil(k / 128).
inline int64_t k_blocks(const Problem& p) { return (p.k + kKBlockBytes - 1) / kKBlockBytes; }
// Activation rows one K block's MMA reads (the wgmma's N): m rounded up to 8.
inline int mma_n(int64_t m) { return int((m + 7) / 8) * 8; }
// Consumer warpgroups of a block with `rows` weight rows (K pairs and fitted rows up to 64: one).
inline int warpgroups(int rows) { return rows > 64 ? 2 : 1; }
// Fitted rows: 33..127 but 64 (Block::kFitted).
inline bool is_fitted_rows(int rows) { return rows > 32 && rows < 128 && rows != 64; }

// A block's threads: its consumer warpgroups, then the producer (one warp; a warpgroup for
// cp.async weights).
constexpr int kCpProducerThreads = 128;
constexpr int block_threads(int consumer_warpgroups, bool cp_producers) {
  return consumer_warpgroups * 128 + (cp_producers ? kCpProducerThreads : 32);
}

// K pairs: the K blocks per split rank, even so that every rank but the last reads whole pairs
// (the last may end at the tensor's end on an odd block, whose pair reads zeros).
inline int kpair_kblocks_per_split(int kblocks, int splitk) {
  const int per = (kblocks + splitk - 1) / splitk;
  return (per + 1) / 2 * 2;
}

// The cp.async ring's compact weight tile: fitted rows up to 48 (one warpgroup) take a 48-row tile
// instead of 64, and 65..80 (two) an 80-row tile instead of 128: less shared memory per stage, so
// a deeper ring at the same occupancy, and fewer copies per stage. The rows past `rows` are
// zero-filled and the wgmma's rows past the tile read the unit's activation rows and then the
// stage's pad, never the next stage. 0 where the whole 64 W-row tile stays.
constexpr int kCpCompactTileRows1 = 48, kCpCompactTileRows2 = 80;
inline int cp_compact_tile_rows(int rows) {
  if (!is_fitted_rows(rows)) return 0;
  if (rows <= kCpCompactTileRows1) return kCpCompactTileRows1;
  return rows > 64 && rows <= kCpCompactTileRows2 ? kCpCompactTileRows2 : 0;
}

// kActivationOnce: ring stages of two K pairs of 32 weight rows (16 KB), then the activation row:
// K rounded up to whole pairs (256 bytes) and 256 bytes of zeros that the wgmma's rows past the
// first read, then the barriers.
constexpr int kAonceStageBytes = 2 * 64 * kKBlockBytes;
constexpr int64_t aonce_act_bytes(int64_t k) { return (k + 255) / 256 * 256 + 256; }

// The ring in shared memory, 1024-byte aligned (128-byte swizzle atoms). A stage is `kblocks`
// units `unit_bytes` apart and a pad; a unit is a weight tile (64 rows per warpgroup of 128 bytes
// of K; K pairs hold their 32 rows twice, for two K blocks; fitted rows with TMA weights: `rows`
// rounded up to 8; compact cp.async tiles: 48 or 80) and then the activation tile (the MMA's N
// rows). The wgmma reads 64 rows per warpgroup from a unit's start, so with fitted rows and TMA
// weights it reads on into the activation tile and the next stage (rows never stored): the tail
// after the last stage keeps that inside the allocation. With cp.async weights a fitted block
// keeps the whole 64 W-row tile (zero-filled past `rows`), so that the wgmma never reads a stage
// the producers' cp.async (another proxy) may be writing, except on the compact tiles, whose pad
// after each stage's units holds what the MMA's last rows read.
struct RingLayout {
  int unit_bytes = 0;       // one unit (K block or K pair): weight tile, then activation tile
  int w_bytes = 0;          // a unit's weight tile: where its activation tile starts
  int tx_bytes = 0;         // the bytes a unit's TMA copies bring (expect_tx)
  int stage_pad_bytes = 0;  // after each stage's units (compact cp.async tiles)
  int stage_bytes = 0;      // a ring stage: kblocks units and the pad
  int tail_bytes = 0;       // after the last stage (fitted rows with TMA weights)
  size_t reduce_bytes = 0;  // kPersistent with split-K: the receive buffer beside the ring
  size_t shared_bytes = 0;  // the block's dynamic shared memory
};
RingLayout ring_layout(const Problem& p, const Config& c);
inline size_t shared_bytes(const Problem& p, const Config& c) { return ring_layout(p, c).shared_bytes; }

// The deepest ring, up to kMaxStages, with which `per_sm` blocks of `c` (its stages replaced) fit
// one SM's shared memory, beside each block's ~1 KB the system reserves and its static barriers;
// 0 if fewer than 4 stages fit.
int deepest_ring(const Problem& p, const Config& c, int per_sm);

// The launch of `c` on `p`: grid x = row tiles (kPersistent: clusters of the persistent grid),
// y = split ranks (a cluster), z = batch (kPersistent: 1; its blocks walk the batches too).
struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  int threads = 0;
  size_t shared_bytes = 0;
  int kblocks_per_split = 0;  // K blocks each split rank reads
};
LaunchShape launch_shape(const Problem& p, const Config& c, int sm_count);

}  // namespace fp8gemm::small_m
