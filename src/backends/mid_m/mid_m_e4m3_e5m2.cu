// The kernels' instantiations for A (activations) e4m3 x B (weights) e5m2; one file per pair, so
// that they compile in parallel. On sm_100a the kernel bodies compile to a trap (no wgmma there).
#include "backends/mid_m/mid_m_launch.cuh"

namespace fp8gemm::mid_m {

void launch_e4m3_e5m2(const LaunchArgs& l) { kernel::launch_pair<sm90::E5M2, sm90::E4M3>(l); }
KernelFacts facts_e4m3_e5m2(const Problem& p, const Config& c) {
  return kernel::facts_pair<sm90::E5M2, sm90::E4M3>(p, c);
}

}  // namespace fp8gemm::mid_m
