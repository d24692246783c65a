// torch.ops.fp8gemm: where the tuning cache lives (default_cache_path, env_cache_path), and releasing what tuning
// and streams hold (release_tuning_buffers, release_stream), on torch's current GPU.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include "args.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/tune.h"

namespace fp8gemm::torch_ops {
namespace {

// The file `auto` loads on first use and tuning writes when no path is given ("" for none).
std::string default_cache_path_op() {
  return on_current_gpu("fp8gemm.default_cache_path", [](Context& ctx) { return default_cache_path(ctx.device()); });
}

// $FP8GEMM_CACHE as the library reads it, without a GPU: the file it names, "" when unset or `off`.
std::string env_cache_path_op() { return cache_path_from_env().value_or(""); }

void release_tuning_buffers_op() {
  on_current_gpu("fp8gemm.release_tuning_buffers", [](Context& ctx) { release_tuning_buffers(ctx); });
}

// `stream` is a torch.cuda.Stream's cuda_stream (its cudaStream_t as an integer); 0 is refused:
// the legacy default stream is never destroyed.
bool release_stream_op(int64_t stream) {
  TORCH_CHECK_VALUE(stream != 0, "release_stream: stream must be a CUDA stream handle (torch.cuda.Stream.cuda_stream), "
                                 "not 0 (the default stream is never destroyed)");
  return on_current_gpu("fp8gemm.release_stream", [&](Context& ctx) { return ctx.release_stream(reinterpret_cast<cudaStream_t>(stream)); });
}

}  // namespace
}  // namespace fp8gemm::torch_ops

TORCH_LIBRARY_FRAGMENT(fp8gemm, m) {
  m.def("default_cache_path() -> str", &fp8gemm::torch_ops::default_cache_path_op);
  m.def("env_cache_path() -> str", &fp8gemm::torch_ops::env_cache_path_op);
  m.def("release_tuning_buffers() -> ()", &fp8gemm::torch_ops::release_tuning_buffers_op);
  m.def("release_stream(int stream) -> bool", &fp8gemm::torch_ops::release_stream_op);
}
