// cuDNN tactic names: "cudnn:eng=<engine id>[,<knob>=<value>...]", the knobs in ascending order
// of their frontend knob type (cudnn_frontend::KnobType_t, whose numbers are a persisted
// contract), e.g. "cudnn:eng=4,tile_size=3,stages=4". The name alone rebuilds the execution plan
// (Graph::create_execution_plan(engine, knobs)). No cuDNN headers here: the CPU tests use it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fp8gemm::cudnn {

struct PlanConfig {
  int64_t engine = -1;
  std::vector<std::pair<int64_t, int64_t>> knobs;  // (knob type, value), ascending knob type

  bool operator==(const PlanConfig& o) const { return engine == o.engine && knobs == o.knobs; }
};

// The knob's name in tactic names ("tile_size"), or "k<type>" for a type without one.
std::string knob_name(int64_t type);

// Canonical spelling (knobs sorted by type). Throws Error(kInvalidArgument) on a negative engine
// or a repeated knob type.
std::string format_config(PlanConfig c);

// Parses a config ("eng=4,tile_size=3"); throws Error(kInvalidArgument) naming the rule broken,
// including for a spelling that is not the canonical one (which it names).
PlanConfig parse_config(std::string_view config);

}  // namespace fp8gemm::cudnn
