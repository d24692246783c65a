#include "backends/small_m/small_m_layout.h"

#include <algorithm>

namespace fp8gemm::small_m {

namespace {

// Static shared memory of the ring kernels beside the dynamic allocation: their full and empty
// barrier arrays (kMaxRingStages each in the one-shot kernels). kActivationOnce keeps its barriers
// in the dynamic allocation.
constexpr int64_t kRingStaticBytes = 2 * kMaxRingStages * 8;
// Per block, reserved by the system beside its dynamic allocation.
constexpr int64_t kSystemReservedBytes = 1024;
// Slack to align the ring to 1024 bytes (the kernels align it themselves; kActivationOnce asks
// for an aligned allocation instead).
constexpr size_t kAlignSlack = 1024;

// One ring unit of the TMA and cp.async kernels (and the persistent one's, rows 64 or 128).
RingLayout unit_layout(int64_t m, int rows, bool cp) {
  RingLayout l;
  const bool pairs = rows == 32;
  const int n = pairs ? 2 * mma_n(m) : mma_n(m);  // K pairs: two K blocks' activations
  const int compact_rows = cp ? cp_compact_tile_rows(rows) : 0;
  const int tile_rows = pairs              ? 64
                        : compact_rows > 0 ? compact_rows
                        : cp               ? 64 * warpgroups(rows)
                                           : (rows + 7) / 8 * 8;  // 128-byte swizzle atoms of 8 rows
  l.w_bytes = tile_rows * kKBlockBytes;
  l.unit_bytes = l.w_bytes + n * kKBlockBytes;
  l.tx_bytes = (pairs ? 64 : rows) * kKBlockBytes + n * kKBlockBytes;
  // The MMA's 64 W rows end past the tile: into the activation tile, then (TMA) the next stage and
  // after the last one the tail, or (compact cp.async) the next unit and after the stage's last
  // one its pad.
  const int overrun = std::max(0, 64 * warpgroups(rows) - tile_rows - n) * kKBlockBytes;
  (compact_rows > 0 ? l.stage_pad_bytes : l.tail_bytes) = overrun;
  return l;
}

// kPersistent with split-K: each rank receives the partial sums of the consumer threads it reduces
// (thread t goes to rank t % splitk) from every rank: [splitk][N/2][ceil(rows*2/splitk)] floats
// (rows * 2 = consumer threads).
size_t persistent_reduce_bytes(int64_t m, const Config& c) {
  if (c.splitk <= 1) return 0;
  const size_t consumers = size_t(c.rows) * 2;
  const size_t own = (consumers + size_t(c.splitk) - 1) / size_t(c.splitk);
  return size_t(c.splitk) * size_t(mma_n(m) / 2) * own * sizeof(float);
}

}  // namespace

RingLayout ring_layout(const Problem& p, const Config& c) {
  if (c.family == Family::kActivationOnce) {
    // The weight ring, the activation row, the ring's barriers and the activation's.
    RingLayout l;
    l.unit_bytes = l.w_bytes = kAonceStageBytes / 2;
    l.tx_bytes = 2 * 32 * kKBlockBytes;
    l.stage_bytes = kAonceStageBytes;
    l.shared_bytes = size_t(c.stages) * kAonceStageBytes + size_t(aonce_act_bytes(p.k)) + size_t(c.stages) * 16 + 8;
    return l;
  }
  RingLayout l = unit_layout(p.m, c.rows, c.family == Family::kCpAsyncRing);
  l.stage_bytes = c.kblocks * l.unit_bytes + l.stage_pad_bytes;
  if (c.family == Family::kPersistent) l.reduce_bytes = persistent_reduce_bytes(p.m, c);
  l.shared_bytes = size_t(c.stages) * size_t(l.stage_bytes) + size_t(l.tail_bytes) + kAlignSlack + l.reduce_bytes;
  return l;
}

int deepest_ring(const Problem& p, const Config& c, int per_sm) {
  const int64_t static_bytes = c.family == Family::kActivationOnce ? 0 : kRingStaticBytes;
  const int64_t limit = std::min<int64_t>(kSmSharedBytes / per_sm - kSystemReservedBytes - static_bytes,
                                          int64_t(kMaxSharedBytes));
  Config probe = c;
  for (probe.stages = kMaxStages; probe.stages >= 4; --probe.stages)
    if (int64_t(shared_bytes(p, probe)) <= limit) return probe.stages;
  return 0;
}

LaunchShape launch_shape(const Problem& p, const Config& c, int sm_count) {
  LaunchShape s;
  const int64_t tiles = (p.n + c.rows - 1) / c.rows;
  const int kblocks = int(k_blocks(p));
  s.grid[0] = unsigned(tiles);
  s.grid[1] = unsigned(c.splitk);
  s.grid[2] = unsigned(p.batch);
  s.threads = block_threads(warpgroups(c.rows), c.family == Family::kCpAsyncRing);
  s.shared_bytes = shared_bytes(p, c);
  s.kblocks_per_split = c.block() == Block::kKPairs && c.family != Family::kActivationOnce
                            ? kpair_kblocks_per_split(kblocks, c.splitk)
                            : (kblocks + c.splitk - 1) / c.splitk;
  if (c.family == Family::kPersistent) {
    // persist blocks per SM: that many clusters of splitk blocks, at most one per unit (row tile,
    // batch).
    const int64_t clusters = std::max<int64_t>(1, int64_t(c.persist) * sm_count / c.splitk);
    s.grid[0] = unsigned(std::min<int64_t>(tiles * p.batch, clusters));
    s.grid[2] = 1;
  }
  return s;
}

}  // namespace fp8gemm::small_m
