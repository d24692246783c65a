// Whether this binary carries machine code the current device can run: an empty kernel built for
// the same architectures as the small_m kernels.
#include "backends/small_m/small_m_launch.h"

namespace fp8gemm::small_m {
namespace {
__global__ void kernel_image_probe() {}
}  // namespace

const char* kernel_image_problem() {
  cudaFuncAttributes attrs{};
  const cudaError_t err = cudaFuncGetAttributes(&attrs, kernel_image_probe);
  if (err == cudaSuccess) return "";
  cudaGetLastError();  // leave no error pending for the caller
  return cudaGetErrorString(err);
}

}  // namespace fp8gemm::small_m
