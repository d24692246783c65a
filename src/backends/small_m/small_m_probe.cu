// Whether this binary carries machine code the current device can run (the library is built
// for specific architectures, e.g. sm_90a only).
#include "backends/small_m/small_m_kernel.cuh"

namespace fp8gemm::small_m {

const char* kernel_image_problem() {
  cudaFuncAttributes attrs{};
  const cudaError_t err = cudaFuncGetAttributes(&attrs, small_m_kernel<E4M3, E4M3, 2, 2, 2>);
  if (err == cudaSuccess) return "";
  cudaGetLastError();  // leave no error pending for the caller
  return cudaGetErrorString(err);
}

}  // namespace fp8gemm::small_m
