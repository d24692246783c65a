// A bucket's segments (docs/tuning.md "Segments"): each sampled M's choice covers the part of the
// bucket that ends at it, and reaches above it while it needs no more M tiles. What every step
// after the samples uses to move segment boundaries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/tune.h"

namespace fp8gemm::tuning {

// The name of floor_choice at M = m for `problem`'s shape; empty when no backend can run it.
std::string fixed_floor(const std::vector<Backend*>& backends, const Problem& problem, int64_t m);

// The largest M at which `tactic` still runs the M tiles it runs at q.m (q.m when unknown).
int64_t reach_of(const Problem& q, const std::string& tactic, const std::vector<Backend*>& backends);

// A sampled M's choice also holds a little above it, while it needs no more M tiles there
// (Backend::same_tiles_up_to): each segment but the last ends there, below the next segment's
// sampled M. Before merging: each segment still ends at its own sampled M.
std::vector<ChoiceSegment> extended_upwards(std::vector<ChoiceSegment> segments, const Problem& problem,
                                            const std::vector<Backend*>& backends);

// A segment that kept the floor's fixed answer at its sampled M (its default there, no
// challenger faster) and whose lowest M was not timed runs the adaptive floor instead: the same
// kernel at the sampled M, the heuristic's own answer at its other M (docs/tuning.md "A kept
// floor adapts").
void adapt_kept_floors(std::vector<ChoiceSegment>& segments, const Problem& problem,
                       const std::vector<Backend*>& backends);

// Adjacent segments with the same tactic become one (the upper one's times stay, with the lower
// one's low-end rows).
std::vector<ChoiceSegment> merged(std::vector<ChoiceSegment> in);

}  // namespace fp8gemm::tuning
