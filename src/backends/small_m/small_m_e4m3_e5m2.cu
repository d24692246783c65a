// Instantiations for weights E4M3, activations E5M2 (one file per pair: parallel compiles).
#include "backends/small_m/small_m_kernel.cuh"

namespace fp8gemm::small_m {

void launch_e4m3_e5m2(const LaunchArgs& l) { launch_pair<E4M3, E5M2>(l); }

}  // namespace fp8gemm::small_m
