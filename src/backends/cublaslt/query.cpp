#include "backends/cublaslt/query.h"

#include <algorithm>
#include <cctype>
#include <climits>

namespace fp8gemm::cublaslt {

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::kE4M3: return CUDA_R_8F_E4M3;
    case DType::kE5M2: return CUDA_R_8F_E5M2;
    case DType::kBF16: return CUDA_R_16BF;
    case DType::kFP16: return CUDA_R_16F;
  }
  return CUDA_R_32F;
}

namespace {

LayoutSettings layout(DType t, int64_t rows, int64_t cols, int64_t batch) {
  LayoutSettings l;
  l.type = cuda_type(t);
  l.rows = uint64_t(rows);
  l.cols = uint64_t(cols);
  l.ld = rows;
  if (batch > 1) {
    l.batch_count = int32_t(batch);
    l.batch_stride = rows * cols;
  }
  return l;
}

}  // namespace

// torch computes out[m, n] = A[m, k] @ W.t() (out row-major, W [n, k] k-contiguous) as cuBLAS's
// column-major out^T[n, m] = W * A^T (cublasCommonArgs swaps the operands for a row-major result):
// transa T, transb N, m = our n, n = our m, lda = ldb = k, ldc = our n; the weight's scale is
// Lt's A scale. The C layout has the bias type, which without a bias is the output type.
MatmulSettings matmul_settings(const Problem& p, bool fast_accum) {
  MatmulSettings s;
  s.fast_accum = fast_accum ? 1 : 0;
  s.a_scale_mode = s.b_scale_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  s.a = layout(p.b_type, p.k, p.n, p.batch);
  s.b = layout(p.a_type, p.k, p.m, p.batch);
  s.c = layout(p.out_type, p.n, p.m, p.batch);
  s.d = s.c;
  s.bias = p.bias;
  s.bias_type = cuda_type(p.out_type);
  return s;
}

PreferenceSettings torch_preference(uint64_t workspace_bytes) {
  PreferenceSettings s;
  s.max_workspace_bytes = workspace_bytes;
  return s;
}

PreferenceSettings listing_preference(const Problem& p, uint64_t workspace_bytes) {
  PreferenceSettings s;
  s.max_workspace_bytes = workspace_bytes;
  s.min_alignment = uint32_t(p.alignment);
  return s;
}

uint64_t torch_workspace_bytes(const char* value) {
  if (!value) return kTorchDefaultWorkspaceBytes;
  const char* c = value;
  while (*c && std::isspace(static_cast<unsigned char>(*c))) ++c;
  bool negative = false;
  if (*c == '+' || *c == '-') negative = *c++ == '-';
  if (!std::isdigit(static_cast<unsigned char>(*c))) return kTorchDefaultWorkspaceBytes;
  long long kib = 0;
  for (; std::isdigit(static_cast<unsigned char>(*c)); ++c) {
    kib = kib * 10 + (*c - '0');
    if (kib > INT_MAX + 1ll) return kTorchDefaultWorkspaceBytes;  // std::stoi: out of range
  }
  if (negative) kib = -kib;
  if (kib < 0 || kib > INT_MAX) return kTorchDefaultWorkspaceBytes;
  return uint64_t(kib) * 1024;
}

uint64_t floor_workspace_bytes(const char* value, uint64_t context_workspace_bytes) {
  return std::min(torch_workspace_bytes(value), context_workspace_bytes);
}

}  // namespace fp8gemm::cublaslt
