#include "fp8gemm/check.h"

#include <cstring>

namespace fp8gemm {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "invalid argument";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kNotAvailable: return "not available";
    case ErrorKind::kCuda: return "CUDA error";
    case ErrorKind::kIo: return "I/O error";
    case ErrorKind::kInternal: return "internal error";
  }
  return "error";
}

namespace detail {

static const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  // Clear a non-sticky error so the context is usable afterwards.
  cudaGetLastError();
  throw Error(ErrorKind::kCuda, cat("fp8gemm: ", expr, " failed: ", cudaGetErrorName(err), " (",
                                    cudaGetErrorString(err), ") at ", base_name(file), ":", line));
}

void throw_error(ErrorKind kind, const std::string& what, const char* file, int line) {
  // Argument errors are for users: the message alone; others also say where.
  if (kind == ErrorKind::kInvalidArgument || kind == ErrorKind::kUnsupported)
    throw Error(kind, "fp8gemm: " + what);
  throw Error(kind, cat("fp8gemm: ", what, " [", base_name(file), ":", line, "]"));
}

}  // namespace detail
}  // namespace fp8gemm
