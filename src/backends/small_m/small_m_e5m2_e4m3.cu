// Instantiations for weights E5M2, activations E4M3 (one file per pair: parallel compiles).
#include "backends/small_m/small_m_kernel.cuh"

namespace fp8gemm::small_m {

void launch_e5m2_e4m3(const LaunchArgs& l) { launch_pair<E5M2, E4M3>(l); }

}  // namespace fp8gemm::small_m
