// One tuning run over a list of problems (tune(), `fp8gemm tune`, a lazy tune of one key): the
// order its keys are measured in, where each key's answer comes from (this run's own earlier
// answer, the cache, an earlier failure, the spent run budget, else decide() measuring it), and
// what it leaves behind: the measured entries in the cache, the keys whose measuring failed. The
// selector makes one per tune() and holds its tuning lock for the run.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/tune.h"
#include "fp8gemm/measure.h"
#include "tune/cache/tune_cache.h"
#include "tune/keys/tune_key.h"
#include "tune/policy/decide.h"
#include "tune/unmeasured_keys.h"

namespace fp8gemm::tuning {

// What a run works on: the selector's backends, cache and unmeasured keys, and its default.
struct RunInputs {
  const std::vector<Backend*>& backends;
  TuneCache& cache;
  UnmeasuredKeys& unmeasured;
  std::function<Tactic(const Problem&)> default_for;  // what `auto` runs for a problem untuned
  std::function<double()> clock_ms;                   // for budgets (tests); empty: steady_clock
};

class TuningRun {
 public:
  TuningRun(const RunInputs& in, Timer& timer, const TuneOptions& options);

  // One Decision per problem, in the order given; keys are measured lightest first (docs/tuning.md
  // "Light after heavy") and a key met twice is tuned once. options.progress hears of each.
  std::vector<Decision> run(const std::vector<Problem>& problems);

 private:
  // The decision for `key`, tuned at its representative `rep`.
  Decision decision_for(const TuneKey& key, const Problem& rep);
  // A decision that keeps the default without measuring, for `reason`.
  Decision kept_default(const TuneKey& key, const Problem& rep, const std::string& reason);
  Decision measured(const TuneKey& key, const Problem& rep);

  const RunInputs& in_;
  Timer& timer_;
  const TuneOptions& options_;
  std::function<double()> clock_ms_;
  double start_ms_ = 0;
  PolicyOptions policy_;
  std::map<std::string, Decision> by_key_;  // a key met twice in one run is tuned once
  // Per shape (the key without its M bucket): the last tuned bucket's choices and best
  // finalists, tried first at the next bucket of that shape (under a tight key budget, at large
  // M, only a few candidates are measured; neighbouring buckets mostly share their best).
  std::map<std::string, std::vector<std::string>> neighbour_best_;
};

}  // namespace fp8gemm::tuning
