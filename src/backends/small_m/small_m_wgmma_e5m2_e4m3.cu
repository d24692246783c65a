// The kernels' instantiations for weights E5M2, activations E4M3 (one file per pair: parallel
// compiles). On sm_100a the kernel bodies compile to a trap (no wgmma there).
#include "backends/small_m/small_m_wgmma.cuh"

namespace fp8gemm::small_m {

void launch_e5m2_e4m3(const LaunchArgs& l) { sm90::launch_pair<E5M2, E4M3>(l); }

}  // namespace fp8gemm::small_m
