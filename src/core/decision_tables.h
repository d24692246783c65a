// What `auto` runs without tuning is decided by generated tables, every one of them in
// src/core/tables/<arch>/ and read through decision_tables() below. tools/tables generates them
// from the measurements in data/tables (data/tables/README.md says how; the CPU tests
// Scripts.DefaultTableIsRegeneratedFromItsTunes and Scripts.DefaultRulesAreRegeneratedFromTheirTunes
// require them byte for byte):
//   exact     the measured-best tactic per shape class and M range of the suite's shapes
//             (tools/tables/make_default_table.py)
//   selector  which backend's default, or which tactic, runs a shape the exact table does not
//             name (tools/tables/fit_default_rules.py, as the two below)
//   small_m   small_m's default: a box of shapes -> the recipes to try there
//   cutlass   CUTLASS's default: a box of shapes -> a config
// The tune layer's default chain reads exact and selector, the backends their own rules.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape_box.h"
#include "fp8gemm/types.h"

namespace fp8gemm {

// A row of the exact table: shape class (a, b, out dtypes, batch, n, k) and M in [m_lo, m_hi].
// Ranges start and end where the tuned cache's buckets or their segments do (a table is the
// tuned choices of one H200 run, merged where neighbours agree).
struct ExactRow {
  DType a_type, b_type, out_type;
  int64_t batch, n, k;
  int64_t m_lo, m_hi;
  const char* tactic;  // canonical tactic name
};

// A rule of the other tables: the shapes it covers, what it runs there (as its table says: a
// tactic or "<backend>:default", a config, recipes), and what the fit saw, in one sentence.
struct BoxRule {
  ShapeBox box;
  const char* action;
  const char* evidence;
};

struct DecisionTables {
  std::vector<ExactRow> exact;
  std::vector<BoxRule> selector;
  std::vector<BoxRule> small_m;
  std::vector<BoxRule> cutlass;
};

// The tables for a compute capability (major*10 + minor): sm_90's, else empty ones. Their tactics
// are sm_90a kernels fitted on H200 times; another GPU of that generation (H100, H20) runs them,
// and every reader checks a rule's tactic with can_implement anyway.
const DecisionTables& decision_tables(int compute_capability);

}  // namespace fp8gemm
