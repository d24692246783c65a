#include "backends/mid_m/mid_m_layout.h"

#include <algorithm>

namespace fp8gemm::mid_m {

DeviceLimits DeviceLimits::of(const DeviceInfo& d) {
  DeviceLimits l;
  l.sm_count = d.sm_count;
  l.cc = d.compute_capability();
  l.smem_per_block = d.smem_per_block_optin;
  // DeviceInfo has the per-block opt-in maximum; an SM holds that plus the block's reservation.
  l.smem_per_sm = d.smem_per_block_optin + kReservedPerBlock;
  return l;
}

Layout layout(const Problem& p, const Config& c) {
  Layout l;
  l.tile_n = tile_n(block_m(p.m, c.msplit));
  l.w_bytes = c.rows * kKBlockBytes;
  l.a_bytes = l.tile_n * kKBlockBytes;
  l.stage_bytes = c.kstage * (l.w_bytes + l.a_bytes);
  l.ring_bytes = size_t(c.stages) * size_t(l.stage_bytes);
  if (c.splitk > 1) {
    const size_t consumers = size_t(c.warpgroups()) * 128;
    const size_t own = (consumers + size_t(c.splitk) - 1) / size_t(c.splitk);
    l.reduce_bytes = size_t(c.splitk) * size_t(accumulators(l.tile_n)) * own * sizeof(float);
  }
  l.shared_bytes = std::max(l.ring_bytes, l.reduce_bytes) + kAlignSlack;
  return l;
}

size_t max_dynamic_shared(const DeviceLimits& d) {
  return d.smem_per_block > kStaticSharedBytes ? d.smem_per_block - kStaticSharedBytes : 0;
}

int deepest_ring(const Problem& p, const Config& c, int per_sm, const DeviceLimits& d, int max_stages) {
  const size_t per_block = d.smem_per_sm / size_t(per_sm);
  if (per_block < kReservedPerBlock + kStaticSharedBytes) return 0;
  const size_t limit = std::min(per_block - kReservedPerBlock - kStaticSharedBytes, max_dynamic_shared(d));
  Config probe = c;
  for (probe.stages = std::min(max_stages, kMaxStages); probe.stages >= 3; --probe.stages)
    if (layout(p, probe).shared_bytes <= limit) return probe.stages;
  return 0;
}

int64_t k_steps(const Problem& p, const Config& c) {
  const int64_t kblocks = (p.k + kKBlockBytes - 1) / kKBlockBytes;
  return (kblocks + c.kstage - 1) / c.kstage;
}

int64_t row_tiles(const Problem& p, const Config& c) { return (p.n + c.rows - 1) / c.rows; }

int64_t padded_row_tiles(const Problem& p, const Config& c) {
  const int64_t t = row_tiles(p, c);
  const int pair = c.shares_weights() ? 1 : c.mcast;
  return (t + pair - 1) / pair * pair;
}

LaunchShape launch_shape(const Problem& p, const Config& c, const DeviceLimits& d) {
  LaunchShape s;
  s.real_tiles = row_tiles(p, c);
  s.tiles = padded_row_tiles(p, c);
  s.units = s.tiles * c.msplit * p.batch;
  int64_t gx = s.units;
  if (c.persist > 0) {
    // P blocks per SM, whole multicast pairs, at most one block per unit.
    const int64_t slots = std::max<int64_t>(c.mcast, int64_t(c.persist) * d.sm_count / c.mcast * c.mcast);
    gx = std::min(gx, slots);
  }
  s.grid[0] = unsigned(gx);
  s.grid[1] = unsigned(c.splitk);
  s.cluster[0] = unsigned(c.mcast);
  s.cluster[1] = unsigned(c.splitk);
  s.threads = block_threads(c.warpgroups());
  s.shared_bytes = layout(p, c).shared_bytes;
  return s;
}

}  // namespace fp8gemm::mid_m
