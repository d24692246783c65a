// Throwing fp8gemm::Error with the call site, as the library does everywhere and its front ends
// (the CLI, the torch extension) do too: FP8GEMM_REQUIRE(cond, kind, message parts...),
// FP8GEMM_FAIL(kind, parts...), FP8GEMM_CUDA_CHECK(cuda call). Every message names the argument and
// the rule.
#pragma once

#include <cuda_runtime_api.h>

#include <sstream>
#include <string>

#include "fp8gemm/error.h"

namespace fp8gemm::detail {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);
[[noreturn]] void throw_error(ErrorKind kind, const std::string& what, const char* file, int line);

// Builds a message from stream-able parts: FP8GEMM_FAIL(kInvalidArgument, "k must be ...", k).
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

}  // namespace fp8gemm::detail

#define FP8GEMM_CUDA_CHECK(expr)                                                 \
  do {                                                                           \
    cudaError_t fp8gemm_err_ = (expr);                                           \
    if (fp8gemm_err_ != cudaSuccess)                                             \
      ::fp8gemm::detail::throw_cuda_error(fp8gemm_err_, #expr, __FILE__, __LINE__); \
  } while (0)

#define FP8GEMM_FAIL(kind, ...) \
  ::fp8gemm::detail::throw_error(::fp8gemm::ErrorKind::kind, ::fp8gemm::detail::cat(__VA_ARGS__), __FILE__, __LINE__)

#define FP8GEMM_REQUIRE(cond, kind, ...) \
  do {                                   \
    if (!(cond)) FP8GEMM_FAIL(kind, __VA_ARGS__); \
  } while (0)
