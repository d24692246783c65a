#include "core/sm90/kernel_image.h"

#include <cuda_runtime_api.h>

namespace fp8gemm::sm90 {
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

}  // namespace fp8gemm::sm90
