// Both power states (docs/tuning.md "Both power states"): a light key's close contenders, timed
// at boost by the tune, are timed again under a heavy GEMM load, and the one whose worse regret
// over the two states is smaller takes the segment. Why: on the H200 which of two weight streams
// is faster can turn on the SM clock (nemoH8b.down M=12: small_m 22.66 us at 1831 MHz, 25.57 at
// 1407; CUTLASS's swap tile 22.71 and 23.38), the tune times light keys at boost, and a server
// (or a benchmark) runs them wherever its load has left the clock.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "fp8gemm/tune.h"
#include "measure/timer.h"
#include "tune/policy.h"

namespace fp8gemm::tuning {

struct PowerStateOptions {
  // Contenders: the tactics timed where the segment was decided within this of its choice's
  // time (either side): those that are within the 1.03 a point may cost at boost.
  double margin = 0.03;
  int max_others = 2;
  // Only segments whose choice's calls are shorter than this (us): the tune times heavier keys
  // under their own load already (GraphTimerOptions: settling, keep_busy_ms).
  double max_call_us = 100;
  int replays = 5;
  // The load between cycles, as a multiple of one cycle's estimated time (1: half the GPU time is
  // the load), and before each measurement (us; the first of a pass gets first_lead_us: the clock
  // takes ~50-100 ms of load to come down from boost).
  double load_per_cycle = 0.5;
  double lead_us = 2000;
  double first_lead_us = 50000;
  // The pass stops starting measurements once it has run this long (ms); 0: no limit.
  double budget_ms = 5000;
};

// How a decision's reason says that a segment changed hands under the load (one per segment).
inline constexpr const char* kUnderLoad = "under a heavy load at M=";

// One segment to time again: decisions[decision].segments[segment] at M = problem.m.
struct PowerStateContest {
  size_t decision = 0;
  size_t segment = 0;
  Problem problem;
  int64_t low_m = 0;               // the segment's lowest M
  int64_t m_max = 0;               // and its highest
  std::vector<Tactic> contenders;  // the choice first
  std::vector<double> boost_us;    // their times where the segment was decided
  std::string reference;           // what `auto` runs there untuned: outputs are compared with it
};

// The contests of one decision (a measured one; its segments, the edge's included). Tactics in
// `adaptive` (a backend's adaptive default, e.g. "cublaslt:heuristic") take no part: they run
// other kernels at other M inside the segment, and the segment's own checks placed them.
std::vector<PowerStateContest> power_state_contests(const Decision& d, size_t index, const PowerStateOptions& o,
                                                    const std::set<std::string>& adaptive = {});

struct PowerStateResult {
  bool ran = false;
  size_t winner = 0;  // index into the contest's contenders (0: the choice stays)
  std::vector<double> capped_us;
  double noise = 0, threshold = 0;
  std::string note;
};

// The rule, given both states' times: each contender's worse regret over the two (its time over
// the fastest's, per state); the one with the smallest takes the segment if it also beats the
// choice under the load by more than max(min_gain, noise_factor x noise). Ties keep the choice.
size_t power_state_winner(const std::vector<double>& boost_us, const std::vector<double>& capped_us, double threshold);

// Times every contest (lightest first, as given) under the load, and applies the winners that
// hold across their segment and whose output matches the reference's: segment tactics, the edge's
// choice and the reasons change. A winner holds where it needs the same M tiles from the
// segment's sampled M up to its top (Backend::same_tiles_up_to), and, timed against the choice at
// the segment's lowest M under the load, is not slower there by more than min_gain. Why (H200):
// a fitted cuBLASLt tile taken at M=384 runs another kernel at M=300 (1.35x the best), and a fixed
// 144x64 tile that beat the fitted 80xM/2 at M=256 ran 1.14x the best at M=200, where the fitted
// tile narrows. Returns how many segments changed hands. Never throws for a failing measurement.
int check_power_states(std::vector<Decision*>& decisions, const std::vector<Backend*>& backends, Timer& timer,
                       const PolicyOptions& policy, const PowerStateOptions& o,
                       const std::function<double()>& clock_ms);

}  // namespace fp8gemm::tuning
