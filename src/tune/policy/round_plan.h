// How much of a key's budget each measurement may take: rough call times from a roofline and the
// rounds' sizes that follow from them. Budgeting only; nothing here decides.
#pragma once

#include <cstddef>

#include "fp8gemm/measure.h"

namespace fp8gemm::tuning {

struct PolicyOptions;

// A rough per-call time (us) from a conservative roofline; only used to fit the measurement
// into the key's budget, never to decide.
double estimate_call_us(const Problem& p);

// How measure_in_rounds is configured for `p` with `n_candidates` candidates so that the key
// stays within its budget; `keep` is how many candidates (default included) may be measured.
struct RoundPlan {
  RoundOptions rounds;
  size_t keep = 0;
};
RoundPlan plan_rounds(const Problem& p, size_t n_candidates, const PolicyOptions& o);

// How tactics are timed at a sampled M below the edge: one warm-up and 5 timed replays each, in
// one round-robin.
constexpr MeasureOptions kBelowEdgeRound{0, 5, 1};

// The estimated cost (us) of `tactics` tactics timed at q in a round of `round` (its warm-up and
// timed replays, with the GPU timer's default sizing); only for budgeting.
double round_cost_us(const Problem& q, const MeasureOptions& round, int tactics = 1);

// The estimated cost (us) of one tactic timed below the edge at q (kBelowEdgeRound); only for
// budgeting.
double below_edge_cost_us(const Problem& q);

}  // namespace fp8gemm::tuning
