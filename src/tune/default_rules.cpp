#include "tune/default_rules.h"

namespace fp8gemm::tuning {

const std::vector<SelectorRule>& selector_rules(int compute_capability) {
  static const std::vector<SelectorRule> none;
  // sm_90 only, like the exact table: the rules name sm_90a kernels and were fitted on H200 times.
  if (compute_capability == 90) return sm90_selector_rules();
  return none;
}

}  // namespace fp8gemm::tuning
