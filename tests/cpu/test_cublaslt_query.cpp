// What the cuBLASLt backend asks, held against what torch._scaled_mm asks for the same problem
// (aten/src/ATen/cuda/CUDABlas.cpp scaled_gemm, called through cublasCommonArgs with A [m, k]
// row-major, B = W.t() column-major and a fresh row-major out): every value below is torch's,
// written out from its code, not computed by the backend's rules.
#include <gtest/gtest.h>

#include "backends/cublaslt/query.h"

namespace fp8gemm::cublaslt {
namespace {

Problem problem(int64_t batch, int64_t m, int64_t n, int64_t k, DType out = DType::kBF16) {
  Problem p;
  p.batch = batch, p.m = m, p.n = n, p.k = k;
  p.out_type = out;
  return p;
}

void expect_layout(const LayoutSettings& l, cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld,
                   const char* what) {
  EXPECT_EQ(l.type, type) << what;
  EXPECT_EQ(l.rows, rows) << what;
  EXPECT_EQ(l.cols, cols) << what;
  EXPECT_EQ(l.ld, ld) << what;
  // torch._scaled_mm is 2-D: it sets no batch attribute.
  EXPECT_FALSE(l.batch_count.has_value()) << what;
  EXPECT_FALSE(l.batch_stride.has_value()) << what;
}

// The issue's shape: 5120x20480 at M = 128, where the 32 MiB query answered a split-K kernel.
// torch: transpose_result (out contiguous), so cuBLAS m = N = 5120, n = M = 128, k = 20480;
// mata = W.t() -> transa 't', lda = 20480; matb = A -> transb 'n', ldb = 20480; ldc = 5120.
// CuBlasLtMatrixLayout(type, m, k, lda, transa == 't') is created as k x m; Bdesc k x n; C and D
// m x n; Cdesc's type is the bias type, which without a bias is the output type.
TEST(CublasLtQuery, MatmulSettingsAreTorchsForTheIssueShape) {
  const MatmulSettings s = matmul_settings(problem(1, 128, 5120, 20480), /*fast_accum=*/true);
  EXPECT_EQ(s.compute, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(s.scale_type, CUDA_R_32F);
  EXPECT_EQ(s.transa, CUBLAS_OP_T);
  EXPECT_EQ(s.transb, CUBLAS_OP_N);
  EXPECT_EQ(s.fast_accum, 1);  // use_fast_accum=True
  EXPECT_EQ(s.a_scale_mode, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F);  // TensorWise, CUDA >= 12.8
  EXPECT_EQ(s.b_scale_mode, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F);
  expect_layout(s.a, CUDA_R_8F_E4M3, 20480, 5120, 20480, "Lt A (the weight)");
  expect_layout(s.b, CUDA_R_8F_E4M3, 20480, 128, 20480, "Lt B (the activations)");
  expect_layout(s.c, CUDA_R_16BF, 5120, 128, 5120, "C");
  expect_layout(s.d, CUDA_R_16BF, 5120, 128, 5120, "D");
}

TEST(CublasLtQuery, MatmulSettingsFollowTypesAndFastAccum) {
  Problem p = problem(1, 1, 4096, 14336, DType::kFP16);
  p.a_type = DType::kE5M2;  // our A is Lt's B
  const MatmulSettings s = matmul_settings(p, /*fast_accum=*/false);
  EXPECT_EQ(s.fast_accum, 0);
  expect_layout(s.a, CUDA_R_8F_E4M3, 14336, 4096, 14336, "Lt A");
  expect_layout(s.b, CUDA_R_8F_E5M2, 14336, 1, 14336, "Lt B at M = 1");
  expect_layout(s.c, CUDA_R_16F, 4096, 1, 4096, "C");
  expect_layout(s.d, CUDA_R_16F, 4096, 1, 4096, "D");
}

// Beyond torch (it has no batched _scaled_mm): packed strided batches, set only when batch > 1.
TEST(CublasLtQuery, BatchesAreStridedAndOnlySetAboveOne) {
  const MatmulSettings s = matmul_settings(problem(3, 16, 1024, 512), true);
  EXPECT_EQ(s.a.batch_count, 3);
  EXPECT_EQ(s.a.batch_stride, 512 * 1024);
  EXPECT_EQ(s.b.batch_count, 3);
  EXPECT_EQ(s.b.batch_stride, 512 * 16);
  EXPECT_EQ(s.c.batch_count, 3);
  EXPECT_EQ(s.c.batch_stride, 1024 * 16);
  EXPECT_EQ(s.d.batch_stride, 1024 * 16);
}

// torch's scaled_gemm sets one preference, the workspace; the alignments stay at cuBLASLt's
// default. It requests one algorithm.
TEST(CublasLtQuery, TheFloorsPreferenceIsTorchs) {
  const PreferenceSettings s = torch_preference(kTorchDefaultWorkspaceBytes);
  EXPECT_EQ(s.max_workspace_bytes, 1ull << 20);
  EXPECT_FALSE(s.min_alignment.has_value());
  EXPECT_EQ(kTorchRequestedAlgos, 1);
}

TEST(CublasLtQuery, TheListingDeclaresTheProblemsAlignment) {
  Problem p = problem(1, 64, 1024, 1024);
  const PreferenceSettings s = listing_preference(p, 32ull << 20);
  EXPECT_EQ(s.max_workspace_bytes, 32ull << 20);
  ASSERT_TRUE(s.min_alignment.has_value());
  EXPECT_EQ(*s.min_alignment, 16u);
}

// at::cuda::getCUDABlasLtWorkspaceSize: CUBLASLT_WORKSPACE_SIZE in KiB through std::stoi, default
// 1024 KiB on every CUDA GPU (the 32 MiB Hopper default is cuBLAS's, not cuBLASLt's).
TEST(CublasLtQuery, TorchsWorkspaceRule) {
  EXPECT_EQ(torch_workspace_bytes(nullptr), 1ull << 20);
  EXPECT_EQ(torch_workspace_bytes("4096"), 4ull << 20);
  EXPECT_EQ(torch_workspace_bytes("0"), 0u);
  EXPECT_EQ(torch_workspace_bytes("  32768"), 32ull << 20);  // stoi skips leading blanks
  EXPECT_EQ(torch_workspace_bytes("+8"), 8u * 1024);
  EXPECT_EQ(torch_workspace_bytes("2048KiB"), 2ull << 20);   // and ignores what follows the digits
  for (const char* bad : {"", "abc", "-", " ", "KiB2048", "99999999999", "2147483648"})
    EXPECT_EQ(torch_workspace_bytes(bad), 1ull << 20) << "'" << bad << "'";  // invalid or out of range
  EXPECT_EQ(torch_workspace_bytes("2147483647"), 2147483647ull * 1024);
  EXPECT_EQ(torch_workspace_bytes("-4"), 1ull << 20);  // negative: the default (torch's own is ill-defined)
}

TEST(CublasLtQuery, TheFloorsWorkspaceIsTorchsWithinTheContexts) {
  EXPECT_EQ(floor_workspace_bytes(nullptr, 32ull << 20), 1ull << 20);
  EXPECT_EQ(floor_workspace_bytes("65536", 32ull << 20), 32ull << 20);
  EXPECT_EQ(floor_workspace_bytes(nullptr, 512 * 1024), 512u * 1024);
  EXPECT_EQ(floor_workspace_bytes("0", 32ull << 20), 0u);
}

}  // namespace
}  // namespace fp8gemm::cublaslt
