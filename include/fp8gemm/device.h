// Facts about the GPU a Context runs on, read once from the device (never hard-coded).
#pragma once

#include <cstddef>
#include <string>

namespace fp8gemm {

struct DeviceInfo {
  int device = -1;
  std::string name;
  int sm_count = 0;
  int cc_major = 0;
  int cc_minor = 0;
  size_t l2_bytes = 0;
  size_t smem_per_block_optin = 0;
  size_t global_mem_bytes = 0;
  int driver_version = 0;     // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;    // cudaRuntimeGetVersion
  size_t cublaslt_version = 0;

  int compute_capability() const { return cc_major * 10 + cc_minor; }
  std::string to_string() const;
};

// How validation learns where a call's pointers live. kAskDriver: it asks the driver for each
// (cudaPointerGetAttributes). kOnDevice: the caller vouches that each is device memory of the
// call's GPU, as a framework op whose tensors already say where they live does; the other pointer
// rules (non-null, alignment, no overlap) hold either way.
enum class PointerPlacement : unsigned char { kAskDriver, kOnDevice };

// Number of CUDA devices; 0 (not an error) when there is no GPU or no driver.
int device_count();
// Why there is no usable GPU ("" when there is one): the CUDA error text, for messages.
std::string no_device_reason();
// Reads the device's properties. Throws Error(kCuda) when the device cannot be queried.
DeviceInfo query_device(int device);

}  // namespace fp8gemm
