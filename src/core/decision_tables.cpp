#include "core/decision_tables.h"

namespace fp8gemm {

namespace {

DecisionTables sm90_tables() {
  using D = DType;
  DecisionTables t;
  t.exact = {
#include "core/tables/sm90/exact_table.inc"
  };
  t.selector = {
#include "core/tables/sm90/selector_rules.inc"
  };
  t.small_m = {
#include "core/tables/sm90/small_m_rules.inc"
  };
  t.cutlass = {
#include "core/tables/sm90/cutlass_rules.inc"
  };
  return t;
}

}  // namespace

const DecisionTables& decision_tables(int compute_capability) {
  static const DecisionTables none;
  static const DecisionTables sm90 = sm90_tables();
  return compute_capability == 90 ? sm90 : none;
}

}  // namespace fp8gemm
