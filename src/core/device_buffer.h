// RAII device memory for tools, tests and the timer (never used on the call path).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "fp8gemm/check.h"

namespace fp8gemm {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes) FP8GEMM_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

  void upload(const void* host, size_t bytes) { FP8GEMM_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice)); }
  void download(void* host, size_t bytes) const { FP8GEMM_CUDA_CHECK(cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost)); }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace fp8gemm
