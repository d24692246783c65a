// The tuning policy for one key (docs/design.md "Measuring", docs/tuning.md): which candidates, how
// they are measured within the key's budget, and the rule that decides. decide() (decide.cpp) is
// the whole of it, step by step; each step lives in the file named for it. Works on Backend* and
// a Timer only, so every rule is tested on the CPU with fake backends and fake timers.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/tune.h"
#include "fp8gemm/measure.h"
#include "tune/keys/tune_key.h"
#include "tune/policy/candidates.h"
#include "tune/policy/round_plan.h"

namespace fp8gemm::tuning {

// The policy's settings. TuneOptions sets the key budget and the allowed backends
// (policy_options); the rest are the rule's constants, here so that tests can vary them.
struct PolicyOptions {
  double key_budget_ms = 100;
  std::vector<std::string> backends;  // challengers only from these (empty: all)
  // A challenger wins where it is faster than the default by more than max(min_gain,
  // noise_factor x the noise floor) and its output is within output_tolerance of the default's
  // (docs/tuning.md "Output check"; the same bound as bench).
  double min_gain = kMinTuningGain;
  double noise_factor = kNoiseFactor;
  double output_tolerance = 0.02;
  RoundOptions rounds;  // prune_ratio, max_finalists, full-round replays
  // The choice must hold for every M of the bucket, not only its upper edge: the edge's finalists
  // (best first, at most `sampled_finalists`, within the key budget again) are also timed at
  // `bucket_samples` M values below the edge, and each sampled M gets its own choice for the
  // part of the bucket from the sample below it, and upwards while that choice needs no more M
  // tiles, up to the next sampled M (docs/tuning.md "Segments"). Each sample after the first
  // goes where the previous choice needs another tile, but no lower than bucket_sample_ms()
  // puts it.
  int bucket_samples = 2;
  int sampled_finalists = 6;
  // Then up to this many of the candidates the edge's short round pruned, fastest first: a tile
  // that wastes a wave at the edge may be the best fit lower in the bucket. One: such a win is
  // rare, and the samples are a large share of the tune.
  int sampled_pruned = 1;
  // Tactics a backend lists at a sampled M but not at the edge (cuBLASLt's heuristic answers per
  // M) are also timed there, at most this many per M; 0: only the edge's candidates compete.
  int sample_newcomers = 4;
  // What `auto` runs at an M without tuning (the reference there: table or floor); empty: the
  // edge's default at every M.
  std::function<Tactic(const Problem&)> default_at;
  // Tactics to try first after the default (the neighbouring bucket's choices and finalists):
  // under a tight key budget the likeliest winners are then measured before the others. The
  // first fixed one is also the lower bucket's choice, timed at the lowest sample.
  std::vector<std::string> preferred;
  std::function<double()> clock_ms;  // wall clock (injectable for tests); empty: steady_clock
};

// The policy for a tuning run with `o`: its key budget and backends, the rule's constants.
PolicyOptions policy_options(const TuneOptions& o);

// What `auto` runs at q without tuning, as o.default_at answers; nullopt where it is not set or
// cannot answer (the caller's own default then stands in).
std::optional<Tactic> untuned_at(const PolicyOptions& o, const Problem& q);

// Measures and decides one key. `problem` is the key's representative problem (M at the bucket's
// edge). Never throws for a failing candidate or backend; a failing timer keeps the default with
// the reason.
Decision decide(const Problem& problem, const std::vector<Backend*>& backends,
                const Tactic& default_tactic, const Tactic& floor_tactic, Timer& timer,
                const PolicyOptions& options);

}  // namespace fp8gemm::tuning
