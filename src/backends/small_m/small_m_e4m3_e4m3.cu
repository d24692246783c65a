// Instantiations for weights E4M3, activations E4M3 (one file per pair: parallel compiles).
#include "backends/small_m/small_m_kernel.cuh"

namespace fp8gemm::small_m {

void launch_e4m3_e4m3(const LaunchArgs& l) { launch_pair<E4M3, E4M3>(l); }

}  // namespace fp8gemm::small_m
