#include "backends/cutlass/kernels.h"

namespace fp8gemm::cutlass_backend {

// Each generated shard file (shard_<S>.cu, see CMakeLists.txt) defines add_shard_kernels_<S>.
// cutlass_shards.inc is generated too: one FP8GEMM_CUTLASS_SHARD(S) per shard.
#define FP8GEMM_CUTLASS_SHARD(s) void add_shard_kernels_##s(std::vector<KernelVariant>& out);
#include "cutlass_shards.inc"
#undef FP8GEMM_CUTLASS_SHARD

const std::vector<KernelVariant>& built_kernels() {
  static const std::vector<KernelVariant> kernels = [] {
    std::vector<KernelVariant> all;
#define FP8GEMM_CUTLASS_SHARD(s) add_shard_kernels_##s(all);
#include "cutlass_shards.inc"
#undef FP8GEMM_CUTLASS_SHARD
    return all;
  }();
  return kernels;
}

}  // namespace fp8gemm::cutlass_backend
