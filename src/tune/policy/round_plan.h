// How much of a key's budget each measurement may take: rough call times from a roofline and the
// rounds' sizes that follow from them; and the round the segment checks time two tactics in.
// Nothing here decides.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>

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

// How the segment checks (low ends, middles, untimed defaults) time tactics against each other at
// one M: one warm-up and 3 timed replays, in one round-robin. Shorter than kBelowEdgeRound: the
// tactics there are few and far apart, and a whole-suite tune has hundreds of such checks to fit.
constexpr MeasureOptions kCheckRound{0, 3, 1};

// `a` and `b` timed at q in one kCheckRound: both timings, or nullopt where a name does not parse,
// the round throws, or either did not run.
std::optional<std::array<Timing, 2>> time_pair(Timer& timer, const Problem& q, const std::string& a,
                                               const std::string& b);

// The estimated cost (us) of `tactics` tactics timed at q in a round of `round` (its warm-up and
// timed replays, with the GPU timer's default sizing); only for budgeting.
double round_cost_us(const Problem& q, const MeasureOptions& round, int tactics = 1);

// The estimated cost (us) of one tactic timed below the edge at q (kBelowEdgeRound); only for
// budgeting.
double below_edge_cost_us(const Problem& q);

}  // namespace fp8gemm::tuning
