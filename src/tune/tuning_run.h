// One tuning run over a list of problems (tune(), `fp8gemm tune`, a lazy tune of one key): the
// order its keys are measured in, where each key's answer comes from (this run's own earlier
// answer, the cache, an earlier failure, the spent run budget, else decide() measuring it), and
// what it leaves in the selector: the measured entries and the keys whose measuring failed.
// The caller holds the selector's tuning lock for the run.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fp8gemm/tune.h"
#include "measure/timer.h"
#include "tune/keys/tune_key.h"
#include "tune/policy/decide.h"

namespace fp8gemm::tuning {

class TuningSelector;

class TuningRun {
 public:
  TuningRun(TuningSelector& selector, Timer& timer, const TuneOptions& options);

  // One Decision per problem, in the order given; keys are measured lightest first (docs/tuning.md
  // "Light after heavy") and a key met twice is tuned once. options.progress hears of each.
  std::vector<Decision> run(const std::vector<Problem>& problems);

 private:
  // The decision for `key`, tuned at its representative `rep`.
  Decision decision_for(const TuneKey& key, const Problem& rep);
  // A decision that keeps the default without measuring, for `reason`.
  Decision kept_default(const TuneKey& key, const Problem& rep, const std::string& reason);
  Decision measured(const TuneKey& key, const Problem& rep);

  TuningSelector& selector_;
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
