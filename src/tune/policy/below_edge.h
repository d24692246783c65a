// Below the edge (docs/tuning.md "Segments"): the rule again at sampled M values of the bucket,
// over the edge's best finalists, the default there and what the backends list only there; each
// sampled M's choice covers the part of the bucket that ends at it.
#pragma once

#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/tune.h"
#include "fp8gemm/measure.h"

namespace fp8gemm::tuning {

struct PolicyOptions;

// One segment per sampled M that could be timed, ascending (the edge's own segment not
// included). `edge` is the edge's rounds, `listed_at_edge` the edge's candidates; `threshold`
// the edge's; retimes draw on `retime_budget_us`, shared with the edge.
std::vector<ChoiceSegment> decide_below_edge(const Problem& problem, const std::vector<Backend*>& backends,
                                             const Tactic& default_tactic, const RoundResult& edge,
                                             const std::vector<Tactic>& listed_at_edge, double threshold,
                                             double& retime_budget_us, Timer& timer, const PolicyOptions& o);

}  // namespace fp8gemm::tuning
