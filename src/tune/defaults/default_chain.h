// The pieces of `auto` that do not depend on the cache: the floor and the default chain.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/measure.h"
#include "runtime/floor.h"
#include "core/decision_tables.h"

namespace fp8gemm::tuning {

using TimerFactory = std::function<std::unique_ptr<Timer>()>;

// The floor, the Context's own fallback (runtime/floor.h): what the tuner's choice must beat.
using fp8gemm::floor_choice;
using fp8gemm::find_backend;

// The adaptive form of floor_choice(p) (Backend::adaptive_default of the backend whose default
// is the floor, e.g. "cublaslt:heuristic"): at every M it runs that M's floor. nullopt when that
// backend has none or it cannot run `p`; never throws.
std::optional<Tactic> adaptive_floor(const std::vector<Backend*>& backends, const Problem& p);

// The default chain of one architecture, in order: the exact-shape table (a shape it names gets
// its tactic where a rule covers p.m and the floor elsewhere: the tune measured the floor best
// there), then the selector rules (the first whose box holds p and whose action runs p), then the
// floor. `sms`: the device's SM count (a box may bound the weight rows per SM).
struct DefaultChain {
  const std::vector<ExactRow>* table = nullptr;
  const std::vector<BoxRule>* rules = nullptr;
  int sms = 0;
};

// What the chain answers for `p`: a tactic, or nullopt for the floor; `why` (if given) gets the
// step that decided, e.g. "rule 3 (m 1..24, ...) -> small_m:default (fitted on ...)". Never throws.
std::optional<Tactic> chain_choice(const std::vector<Backend*>& backends, const DefaultChain& chain,
                                   const Problem& p, std::string* why = nullptr);

// chain_choice, else the floor: what `auto` runs untuned, and what `tune` measures against.
Tactic default_choice(const std::vector<Backend*>& backends, const DefaultChain& chain, const Problem& p);

// Whether one of `backends` is available and can run `t` on `p` (false also when asking throws).
bool can_run(const std::vector<Backend*>& backends, const Problem& p, const Tactic& t);

}  // namespace fp8gemm::tuning
