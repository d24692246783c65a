#include <cublasLt.h>

#include <sstream>

#include "fp8gemm/check.h"
#include "fp8gemm/device.h"

namespace fp8gemm {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::string no_device_reason() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    const std::string cuda = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice)
      return "no NVIDIA GPU or driver on this machine (" + cuda + ")";
    return cuda;
  }
  return n == 0 ? "no CUDA device found" : "";
}

DeviceInfo query_device(int device) {
  if (device < 0) FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  FP8GEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo d;
  d.device = device;
  d.name = prop.name;
  d.sm_count = prop.multiProcessorCount;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.l2_bytes = size_t(prop.l2CacheSize);
  d.smem_per_block_optin = prop.sharedMemPerBlockOptin;
  d.global_mem_bytes = prop.totalGlobalMem;
  FP8GEMM_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  FP8GEMM_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  d.cublaslt_version = cublasLtGetVersion();
  return d;
}

std::string DeviceInfo::to_string() const {
  std::ostringstream os;
  os << "GPU " << device << ": " << name << ", " << sm_count << " SMs, compute capability "
     << cc_major << "." << cc_minor << ", L2 " << (l2_bytes >> 20) << " MiB, smem/block "
     << (smem_per_block_optin >> 10) << " KiB, driver " << driver_version / 1000 << "."
     << (driver_version % 1000) / 10 << ", CUDA runtime " << runtime_version / 1000 << "."
     << (runtime_version % 1000) / 10 << ", cuBLASLt " << cublaslt_version;
  return os.str();
}

}  // namespace fp8gemm
