#include "tune/default_table.h"

#include "fp8gemm/tune.h"

namespace fp8gemm::tuning {

const std::vector<DefaultRule>& default_rules(int compute_capability) {
  static const std::vector<DefaultRule> none;
  // sm_90 only: the table's tactics are sm_90a kernels and H200 timings; another GPU of the same
  // generation (H100, H20) still runs them, and the choice is checked by can_implement anyway.
  if (compute_capability == 90) return sm90_default_rules();
  return none;
}

}  // namespace fp8gemm::tuning
