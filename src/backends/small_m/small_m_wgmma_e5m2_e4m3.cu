// The kernels' instantiations for A (activations) e5m2 x B (weights) e4m3, one file per pair so
// that they compile in parallel. On sm_100a the kernel bodies compile to a trap (no wgmma there).
#include "backends/small_m/small_m_wgmma.cuh"

namespace fp8gemm::small_m {

void launch_e5m2_e4m3(const LaunchArgs& l) { sm90::launch_pair<E4M3, E5M2>(l); }

}  // namespace fp8gemm::small_m
