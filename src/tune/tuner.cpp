#include "tune/tuner.h"

namespace fp8gemm::tuning {

bool can_run(const std::vector<Backend*>& backends, const Problem& p, const Tactic& t) {
  Backend* b = find_backend(backends, t.backend);
  if (!b) return false;
  try {
    return b->available().ok && b->can_implement(p, t).ok;
  } catch (const std::exception&) {
    return false;
  }
}

std::optional<Tactic> adaptive_floor(const std::vector<Backend*>& backends, const Problem& p) {
  try {
    const Tactic floor = floor_choice(backends, p);
    Backend* b = find_backend(backends, floor.backend);
    std::optional<Tactic> t = b ? b->adaptive_default() : std::nullopt;
    if (t && can_run(backends, p, *t)) return t;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::optional<Tactic> checked_table_choice(const std::vector<Backend*>& backends,
                                           const std::vector<DefaultRule>& rules, const Problem& p) {
  try {
    std::optional<Tactic> t = table_choice(rules, p);
    if (t && can_run(backends, p, *t)) return t;
  } catch (const std::exception&) {
    // A table tactic this build or this cuBLASLt cannot parse: the floor takes over.
  }
  return std::nullopt;
}

Tactic default_choice(const std::vector<Backend*>& backends, const std::vector<DefaultRule>& rules,
                      const Problem& p) {
  if (auto t = checked_table_choice(backends, rules, p)) return *t;
  return floor_choice(backends, p);
}

}  // namespace fp8gemm::tuning
