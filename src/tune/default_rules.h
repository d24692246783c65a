// The selector's rules: which backend's default `auto` runs untuned on shapes the exact table
// (default_table.h) does not name. Generated per architecture from H200 tunes by
// data/tables/fit_default_rules.py, validated there on shapes it was not fitted on.
#pragma once

#include <string>
#include <vector>

#include "core/shape_box.h"

namespace fp8gemm::tuning {

// A box of shapes and what runs there: "<backend>:default" (that backend's default_tactic, e.g.
// small_m's or CUTLASS's own generated rules), "cublaslt:default" (the floor) or a canonical
// tactic name. `evidence` says what the fit saw, in one sentence.
struct SelectorRule {
  ShapeBox box;
  const char* action;
  const char* evidence;
};

// The rules of Hopper (sm_90), default_rules_sm90.cpp.
const std::vector<SelectorRule>& sm90_selector_rules();

// The rules for a compute capability (major*10 + minor); empty when there are none.
const std::vector<SelectorRule>& selector_rules(int compute_capability);

}  // namespace fp8gemm::tuning
