// fp8gemm: FP8 batched GEMM with per-tensor scales, FlashInfer bmm_fp8 semantics.
//
//   out[b, m, n] = (*a_scale) * (*b_scale) * sum_k A[b, m, k] * B[b, k, n]
//
// A [b, m, k] row-major; B [b, k, n] column-major (stored [b, n, k], e.g. a weight W[n, k]);
// out [b, m, n] row-major bf16/fp16. Scales are float32 in device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "fp8gemm/backend.h"
#include "fp8gemm/context.h"
#include "fp8gemm/device.h"
#include "fp8gemm/error.h"
#include "fp8gemm/linear.h"
#include "fp8gemm/quantize.h"
#include "fp8gemm/types.h"
#include "fp8gemm/version.h"

namespace fp8gemm {

struct BmmFp8Args {
  const void* a = nullptr;        // [batch, m, k] FP8
  const void* b = nullptr;        // [batch, k, n] FP8, column-major
  const float* a_scale = nullptr; // device scalar
  const float* b_scale = nullptr; // device scalar
  void* out = nullptr;            // [batch, m, n] bf16/fp16, must not overlap a or b
  int64_t batch = 1, m = 0, n = 0, k = 0;
  DType a_type = DType::kE4M3, b_type = DType::kE4M3, out_type = DType::kBF16;
};

// Checks every rule of docs/design.md "Semantics" without touching the GPU's work queue and
// returns the Problem. Throws Error(kInvalidArgument) naming the argument and the rule.
Problem validate(const BmmFp8Args& args, const DeviceInfo& device,
                 PointerPlacement pointers = PointerPlacement::kAskDriver);
// The same rules but the pointers' (dims, dtypes, the device's compute capability): for tools that
// plan calls before they have memory (`fp8gemm tune`, `bench`, `explain`).
Problem validate_problem(const BmmFp8Args& args, const DeviceInfo& device);

// The most rows one backend call takes: m*k and m*n within 2^31-1, what every backend's 32-bit
// sizes and strides hold (a multiple of 64 where that is at least 64). bmm_fp8 and linear_fp8 run
// a larger m as several calls on whole rows, so validation accepts it.
int64_t max_call_rows(int64_t n, int64_t k);
// Throws Error(kInvalidArgument) when `p` has more rows than one backend call takes: what a
// backend, the tuner or a benchmark is given directly.
void require_one_call(const Problem& p);

// Validates, chooses a tactic ("auto", a backend name, or a tactic name) and enqueues the GEMM
// on `stream`. Uses default_context() when ctx is null. An empty problem (batch or m == 0) is a
// valid no-op.
void bmm_fp8(const BmmFp8Args& args, cudaStream_t stream = nullptr,
             const std::string& backend = "auto", Context* ctx = nullptr);

}  // namespace fp8gemm
