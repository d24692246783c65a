// The ranker of untuned `auto` at mid and large M: gradient-boosted regression trees that score the
// floor and a few candidate tactics from each one's geometry at the problem (tile, cluster, waves,
// padding, kind) and run the lowest score (docs/tuning.md "The ranker"). The trees and the
// candidates are generated per architecture by data/tables/fit_default_rules.py, which computes
// the same features (data/tables/default_ranker.py); a selector rule whose action is "ranker"
// hands its box to it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fp8gemm/backend.h"

namespace fp8gemm::tuning {

// The features, in the generated trees' order.
inline constexpr std::array<const char*, 34> kRankerFeatures = {
    "lm",     "ln",         "lk",     "batch",     "ltm",       "ltn",      "tk",          "cn",
    "cm",     "cs",         "splitk", "red",       "fast_accum", "fitted",  "swap",        "streamk",
    "custom", "schedule",   "pdl",    "is_cutlass", "is_floor", "util_m",   "util_n",      "whole_waves",
    "lwaves", "wave_eff",   "last_wave", "lkit",   "floor_ltm", "floor_ltn", "floor_cs",   "floor_custom",
    "dltm",   "dltn"};
using RankerFeatures = std::array<double, kRankerFeatures.size()>;

// One tree node: a leaf has feature -1 and its value (log-time in 1e-4 units); an inner node goes
// to left where the feature is <= threshold, else to right (node indexes within its tree).
struct RankerNode {
  int8_t feature;
  double threshold;
  uint16_t left, right;
  int32_t value;
};

// Candidates for the problems with m_lo <= M <= m_hi.
struct RankerRange {
  int64_t m_lo, m_hi;
  std::vector<const char*> tactics;
};

// A problem the generator scored, which the ranker must score the same (a CPU test checks).
struct RankerCheck {
  int64_t batch, m, n, k;
  const char* tactic;
  const char* floor;
  int32_t score;
};

struct RankerModel {
  int32_t base;                       // every score starts here
  const RankerNode* nodes;
  std::vector<uint32_t> roots;        // each tree's first node
  std::vector<const char*> features;  // the generator's names: must be kRankerFeatures
  std::vector<RankerRange> ranges;
  int sms;                            // the device the waves were counted for
  std::vector<RankerCheck> checks;
};

// Hopper's (default_ranker_sm90.cpp); ranker(cc): the model of a compute capability, else nullptr.
const RankerModel& sm90_ranker();
const RankerModel* ranker(int compute_capability);

// The features of a tactic of geometry `t` (of backend `backend`) at `p`, where cuBLASLt's
// heuristic answers `floor`, on a device of `sms` SMs.
RankerFeatures ranker_features(const Problem& p, const TacticShape& t, const std::string& backend,
                               const TacticShape& floor, bool is_floor, int sms);

// The model's score of one feature vector (lower: faster).
int32_t ranker_score(const RankerModel& model, const RankerFeatures& x);

// The ranker's choice at `p`: the candidate of p's range with the lowest score where it is below
// the floor's, nullopt for the floor (also where the floor is not a tactic the ranker can describe).
// `why` gets the scores, in a sentence. Never throws.
std::optional<Tactic> ranker_choice(const std::vector<Backend*>& backends, const RankerModel& model,
                                    const Problem& p, int sms, std::string* why = nullptr);

}  // namespace fp8gemm::tuning
