// A challenger that the rule at one M turned down only because the noise floor was high is
// timed again with the default in a longer round, whose own noise floor decides
// (docs/tuning.md "Retiming a challenger held back by noise"; point_rule.h retime_held_back).
#pragma once

#include <string>
#include <vector>

#include "fp8gemm/measure.h"

namespace fp8gemm::tuning {

struct PolicyOptions;

// The fastest challenger that ran and beat the reference by more than `min_gain`; nullptr when
// none did. (Called where none beat it by the full threshold, so any it returns was held back
// by the noise floor alone.)
const Timing* held_back_by_noise(const Timing& reference, const std::vector<const Timing*>& challengers,
                                 double min_gain);

struct Retime {
  bool ran = false;   // the round ran and both tactics ran in it
  bool wins = false;  // the challenger beat the default by more than `threshold`, output matching
  double reference_us = 0;   // the faster of the default's two timings
  double challenger_us = 0;
  double noise = 0;          // of this round: the default's two timings, replay by replay
  double threshold = 0;      // max(min_gain, noise_factor * noise)
  double output_diff = -1;   // -1: not compared (it was not faster by the threshold)
  std::string note;          // what happened, for the candidate's report
};

// What one retime at an M whose calls take ~`call_us` costs on the GPU, in us (for budgets).
double retime_cost_us(double call_us);

// Times [reference, challenger, reference] at q: 7 replays of calls lasting >= kLongReplayUs each.
Retime retime(const Problem& q, const Tactic& reference, const Tactic& challenger, double call_us, Timer& timer,
              const PolicyOptions& o);

}  // namespace fp8gemm::tuning
