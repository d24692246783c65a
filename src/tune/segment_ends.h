// The ends of a bucket's segments (docs/tuning.md "Checking a segment's lowest M", "The
// adaptive floor", "Splitting a segment"): after the tuner has chosen per sampled M, each
// segment's lowest M is timed and the segment goes to the contender that fits it best. Internal
// to the policy (src/tune/policy.cpp); tested through decide().
#pragma once

#include <string>
#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/tune.h"
#include "measure/timer.h"
#include "tune/policy.h"

namespace fp8gemm::tuning {

// The name of floor_choice at M = m for `problem`'s shape; empty when no backend can run it.
std::string fixed_floor(const std::vector<Backend*>& backends, const Problem& problem, int64_t m);

// A row timed in the full round where a segment was decided: the default or a finalist, with a
// time (a pruned row's is a short round's, on another scale).
bool timed_in_full(const CandidateReport& c);

// The largest M at which `tactic` still runs the M tiles it runs at q.m (q.m when unknown).
int64_t reach_of(const Problem& q, const std::string& tactic, const std::vector<Backend*>& backends);

// PolicyOptions::check_segment_low_ends: times each segment at its lowest M and gives it to the
// contender that fits it best (see segment_ends.cpp). `edge_rows` are the edge's timings.
void check_low_ends(std::vector<ChoiceSegment>& segments, const Problem& problem,
                    const std::vector<Backend*>& backends, const std::vector<CandidateReport>& edge_rows,
                    double threshold, Timer& timer, const PolicyOptions& o);

// PolicyOptions::kept_floor_adapts: a segment that kept the floor's fixed answer at its sampled M
// (its default there, no challenger faster) and whose lowest M was not timed runs the adaptive
// floor instead: the same kernel at the sampled M, the heuristic's own answer at its other M.
void adapt_kept_floors(std::vector<ChoiceSegment>& segments, const Problem& problem,
                       const std::vector<Backend*>& backends);

// Adjacent segments with the same tactic become one (the upper one's times stay, with the lower
// one's low-end rows).
std::vector<ChoiceSegment> merged(std::vector<ChoiceSegment> in);

}  // namespace fp8gemm::tuning
