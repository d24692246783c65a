// Argument checks shared by the CUDA and Meta implementations of the torch ops, and the map
// from fp8gemm::Error to the Python exception it surfaces as.
//
// Layout rules (FlashInfer's bmm_fp8): A [b, m, k] contiguous; B [b, k, n] column-major, i.e.
// B.transpose(-2, -1) contiguous (a weight W[n, k] passed as W.t()); out [b, m, n] contiguous;
// scales float32 with exactly one element. gemm_fp8 is the same without the batch dimension.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/core/SymInt.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include <string>

#include "fp8gemm/fp8gemm.h"

namespace fp8gemm::torch_ops {

// The dims of one call. Under torch.compile (Meta/fake tensors) m may be symbolic.
struct CallDims {
  c10::SymInt batch, m, n, k;
};

// Ranks, dtypes, shapes and strides of the tensors, each rule naming the argument: everything
// that needs no memory, so the Meta implementation runs exactly these checks. `rank` is 3 for
// bmm_fp8 and 2 for gemm_fp8. `out` may be undefined (the functional op). Throws c10::TypeError
// for a wrong dtype and c10::ValueError for everything else.
CallDims check_tensors(const at::Tensor& A, const at::Tensor& B, const at::Tensor& A_scale,
                       const at::Tensor& B_scale, at::ScalarType out_dtype, const at::Tensor* out,
                       int rank);

// The library's arguments for a call with concrete dims (pointers null: fill them in).
BmmFp8Args library_args(const CallDims& d, const at::Tensor& A, const at::Tensor& B, at::ScalarType out_dtype);

// validate_problem's rules that need no GPU (dims, dtypes, 32-bit sizes), for the checks made
// before any allocation or GPU work; the GPU's compute capability is checked on it. Throws
// fp8gemm::Error.
Problem problem_without_gpu(const BmmFp8Args& args);

// `backend` is auto, a backend name (FlashInfer's spellings too) or a tactic name BACKEND:CONFIG
// with a known backend and a configuration. Throws Error(kInvalidArgument) naming it and the rule.
void check_backend(const std::string& backend);

// problem_without_gpu on possibly symbolic dims (n and k are specialized, a symbolic batch or m
// is checked at run time) and check_backend, as c10 errors. The eager ops run this before they
// allocate `out`; the Meta implementations run it instead of the GEMM.
void check_problem(const CallDims& d, const at::Tensor& A, const at::Tensor& B, at::ScalarType out_dtype,
                   const std::string& backend);

DType to_dtype(at::ScalarType t);  // fp8 and bf16/fp16 only; anything else is c10::TypeError

// Rethrows an fp8gemm::Error as the c10 error Python shows as ValueError (kInvalidArgument) or
// RuntimeError (everything else), with the library's message unchanged.
[[noreturn]] void throw_torch_error(const Error& e);

// Runs fn on the Context of torch's current GPU, with library errors as Python exceptions. `what`
// ("fp8gemm.tune") names the call when there is no GPU: each op checks its arguments before this,
// so a bad argument is reported first, and a missing GPU in fp8gemm's words, not the driver's.
template <typename Fn>
auto on_current_gpu(const char* what, Fn&& fn) {
  TORCH_CHECK(device_count() > 0, what, " needs a CUDA GPU: ", no_device_reason());
  const int dev = c10::cuda::current_device();
  const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(dev));
  try {
    return fn(default_context(dev));
  } catch (const Error& e) {
    throw_torch_error(e);
  }
}

}  // namespace fp8gemm::torch_ops
