// The compiled CUTLASS kernels, type-erased: one KernelVariant per (configs.def row, A type,
// B type, out type). Plain C++ so the backend (cutlass_backend.cpp) needs no CUTLASS headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "fp8gemm/types.h"

namespace fp8gemm::cutlass_backend {

struct KernelVariant {
  int row_id = 0;  // configs.def id
  DType a_type = DType::kE4M3, b_type = DType::kE4M3, out_type = DType::kBF16;
  size_t smem_bytes = 0;  // dynamic shared memory per CTA (the kernel's SharedStorage)
  // CUTLASS's own can_implement on the problem's shape and strides (alignment, stream-K limits).
  Verdict (*can_implement)(const Problem& p, int sm_count) = nullptr;
  // The kernel's get_workspace_size for p (stream-K partials; 0 for data-parallel kernels).
  size_t (*workspace_bytes)(const Problem& p, int sm_count) = nullptr;
  // Whether the kernel was built with GDC, so that it may launch with PDL.
  bool pdl_capable = false;
  // Enqueues the GEMM (with PDL if `pdl`, which needs pdl_capable). No allocation, no
  // synchronization; throws Error(kCuda) on failure.
  void (*run)(const Problem& p, const GemmArgs& args, Workspace ws, cudaStream_t stream,
              int device, int sm_count, bool pdl) = nullptr;
};

// Every kernel compiled into this library (all shards), in no particular order.
const std::vector<KernelVariant>& built_kernels();

}  // namespace fp8gemm::cutlass_backend
