#include "runtime/floor.h"

#include "fp8gemm/check.h"

namespace fp8gemm {

Tactic floor_choice(const std::vector<Backend*>& backends, const Problem& p) {
  std::string reasons;
  for (Backend* b : backends) {
    try {
      const Verdict v = b->available();
      if (!v.ok) {
        reasons += "\n  " + b->name() + ": " + v.reason;
        continue;
      }
      return b->default_tactic(p);
    } catch (const std::exception& e) {
      reasons += "\n  " + b->name() + ": " + e.what();
    }
  }
  FP8GEMM_FAIL(kUnsupported, "no backend can run ", p, ":", reasons);
}

Backend* find_backend(const std::vector<Backend*>& backends, const std::string& name) {
  for (Backend* b : backends)
    if (b->name() == name) return b;
  return nullptr;
}

}  // namespace fp8gemm
