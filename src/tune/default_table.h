// The first step of the default without tuning: a built-in table per architecture of the
// measured-best tactic per exact (shape class, M range) of the DESIGN suite, generated from H200
// measurements by data/tables/make_default_table.py. The default chain (tuner.h) reads it; shapes
// it does not name go on to the selector rules (default_rules.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fp8gemm/types.h"

namespace fp8gemm::tuning {

// Shape class = (a, b, out dtypes, batch, n, k); a rule covers every M in [m_lo, m_hi]. Ranges
// start and end where the tuned cache's buckets or their segments do (a generated table is
// the tuned choices of one H200 run, merged where neighbours agree).
struct DefaultRule {
  DType a_type, b_type, out_type;
  int64_t batch, n, k;
  int64_t m_lo, m_hi;
  const char* tactic;  // canonical tactic name
};

// The rules of Hopper (sm_90), default_table_sm90.cpp.
const std::vector<DefaultRule>& sm90_default_rules();

// The rules for a compute capability (major*10 + minor); empty when there is no table.
const std::vector<DefaultRule>& default_rules(int compute_capability);

}  // namespace fp8gemm::tuning
