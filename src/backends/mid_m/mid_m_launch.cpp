// The dtype pair of a problem picks the translation unit whose kernels run it.
#include "backends/mid_m/mid_m_launch.h"

#include "fp8gemm/check.h"

namespace fp8gemm::mid_m {

void launch(const LaunchArgs& l) {
  const Problem& p = l.problem;
  if (p.a_type == DType::kE4M3 && p.b_type == DType::kE4M3) return launch_e4m3_e4m3(l);
  if (p.a_type == DType::kE4M3 && p.b_type == DType::kE5M2) return launch_e4m3_e5m2(l);
  if (p.a_type == DType::kE5M2 && p.b_type == DType::kE4M3) return launch_e5m2_e4m3(l);
  FP8GEMM_FAIL(kUnsupported, "mid_m: dtype pair ", to_string(p.a_type), " x ", to_string(p.b_type),
               " is not supported");
}

KernelFacts kernel_facts(const Problem& p, const Config& c) {
  if (p.a_type == DType::kE4M3 && p.b_type == DType::kE4M3) return facts_e4m3_e4m3(p, c);
  if (p.a_type == DType::kE4M3 && p.b_type == DType::kE5M2) return facts_e4m3_e5m2(p, c);
  if (p.a_type == DType::kE5M2 && p.b_type == DType::kE4M3) return facts_e5m2_e4m3(p, c);
  FP8GEMM_FAIL(kUnsupported, "mid_m: dtype pair ", to_string(p.a_type), " x ", to_string(p.b_type),
               " is not supported");
}

}  // namespace fp8gemm::mid_m
