// The kernels' instantiations for weights E4M3, activations E4M3 (one file per pair: parallel
// compiles). On sm_100a the kernel bodies compile to a trap (no wgmma there).
#include "backends/small_m/small_m_wgmma.cuh"

namespace fp8gemm::small_m {

// The bias kernels (the linear layer's epilogue) exist for this pair only: the layer's activations
// are e4m3, and so are the weights of the checkpoints it runs.
void launch_e4m3_e4m3(const LaunchArgs& l) {
  if (l.problem.bias) sm90::launch_pair<E4M3, E4M3, sm90::BiasParams>(l);
  else sm90::launch_pair<E4M3, E4M3>(l);
}

}  // namespace fp8gemm::small_m
