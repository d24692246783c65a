// What the backend asks cuBLASLt, as plain values: the matmul descriptor's attributes, the four
// matrix layouts and the heuristic preference. The backend builds its descriptors from these
// alone, so a CPU test can hold them against torch._scaled_mm's own call field by field.
//
// The floor (default_tactic) asks exactly what torch._scaled_mm(A, W.t(), s_a, s_b, out_dtype=bf16
// or fp16, use_fast_accum=True) asks for the same problem (aten/src/ATen/cuda/CUDABlas.cpp
// scaled_gemm): its heuristic's first algorithm is then torch's kernel by construction.
// docs/cublaslt.md "The floor" lists what torch sets and why each value here is what it is.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <optional>

#include "fp8gemm/types.h"

namespace fp8gemm::cublaslt {

struct LayoutSettings {
  cudaDataType_t type = CUDA_R_8F_E4M3;
  uint64_t rows = 0, cols = 0;  // column-major, cuBLASLt's view
  int64_t ld = 0;
  // Strided batches; left unset at batch 1, as torch (2-D only) leaves them.
  std::optional<int32_t> batch_count;
  std::optional<int64_t> batch_stride;
};

struct MatmulSettings {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale_type = CUDA_R_32F;
  cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  int8_t fast_accum = 1;
  // CUBLASLT_MATMUL_DESC_{A,B}_SCALE_MODE: one float per tensor (torch sets it explicitly).
  int32_t a_scale_mode = 0, b_scale_mode = 0;
  // Lt's A is our B (the weight), Lt's B our A, C and D our out.
  LayoutSettings a, b, c, d;
  // Problem::bias: CUBLASLT_EPILOGUE_BIAS with a bias of this type (the output type, as torch
  // requires), one value per row of Lt's D (our n), added before the output is rounded.
  bool bias = false;
  cudaDataType_t bias_type = CUDA_R_16BF;
};

struct PreferenceSettings {
  uint64_t max_workspace_bytes = 0;
  // CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_{A,B,C,D}_BYTES; nullopt leaves cuBLASLt's default (256),
  // as torch's scaled_gemm does.
  std::optional<uint32_t> min_alignment;
};

cudaDataType_t cuda_type(DType t);

// The descriptors of `p`, for queries and calls alike (torch's orientation and attributes).
MatmulSettings matmul_settings(const Problem& p, bool fast_accum);

// The floor's preference: torch's, with torch's workspace (floor_workspace_bytes).
PreferenceSettings torch_preference(uint64_t workspace_bytes);
// The tactic list's queries: the problem's pointer alignment declared, so that no listed algorithm
// needs more than every call guarantees.
PreferenceSettings listing_preference(const Problem& p, uint64_t workspace_bytes);

// torch asks for one algorithm and runs it.
inline constexpr int kTorchRequestedAlgos = 1;

// torch's cuBLASLt workspace when CUBLASLT_WORKSPACE_SIZE is unset: 1 MiB on every GPU.
inline constexpr uint64_t kTorchDefaultWorkspaceBytes = 1ull << 20;

// torch's cuBLASLt workspace for a CUBLASLT_WORKSPACE_SIZE value (nullptr: unset): the value in
// KiB as std::stoi reads it (leading blanks, sign, digits; what follows is ignored); unset, not a
// number, out of int range or negative: the 1 MiB default.
uint64_t torch_workspace_bytes(const char* cublaslt_workspace_size);

// The floor's workspace limit: torch's, capped at the Context's workspace (what a call can use).
uint64_t floor_workspace_bytes(const char* cublaslt_workspace_size, uint64_t context_workspace_bytes);

}  // namespace fp8gemm::cublaslt
