// Which problems a mid_m config runs (can_implement, mid_m_limits.cpp), the config used on a cache
// miss and the configs worth timing (mid_m_candidates.cpp). Host-only, so the CPU tests cover them.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/mid_m/mid_m_config.h"
#include "backends/mid_m/mid_m_layout.h"

namespace fp8gemm::mid_m {

// Whether `c` runs `p` on device `d`, with the reason when it does not.
Verdict can_implement(const Problem& p, const Config& c, const DeviceLimits& d);

// The rule used on a cache miss (backend="mid_m"): 128-row blocks, one per SM with the deepest ring
// that allows, and the split-K of least estimated cost (waves of blocks, each streaming its share
// of the weights and paying a fixed cost for its ring's fill and epilogue). Throws Error(kUnsupported) with the reason when no
// mid_m kernel runs `p`.
Config default_config(const Problem& p, const DeviceLimits& d);

// Every config worth timing for `p` (each passes can_implement), the default first.
std::vector<Config> candidate_configs(const Problem& p, const DeviceLimits& d);

// The largest M >= p.m at which `c` runs the same kernel (the same wgmma N, so the same tiles,
// MMAs and shared memory): msplit * tile_n(ceil(m / msplit)), at most 256.
int64_t same_tiles_up_to(const Problem& p, const Config& c);

}  // namespace fp8gemm::mid_m
