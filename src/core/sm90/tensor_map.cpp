#include "core/sm90/tensor_map.h"

#include <cuda_runtime_api.h>

#include <mutex>

#include "fp8gemm/check.h"

namespace fp8gemm::sm90 {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_tiled() {
  static EncodeTiled fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<EncodeTiled>(p);
    else
      cudaGetLastError();
  });
  return fn;
}

}  // namespace

void encode_kmajor_map(CUtensorMap* map, const void* base, int64_t k, int64_t rows, int64_t batch, int box_rows) {
  const EncodeTiled fn = encode_tiled();
  FP8GEMM_REQUIRE(fn != nullptr, kCuda, "TMA: the driver has no cuTensorMapEncodeTiled (CUDA >= 12.0 driver needed)");
  const cuuint64_t dims[3] = {cuuint64_t(k), cuuint64_t(rows), cuuint64_t(batch)};
  const cuuint64_t strides[2] = {cuuint64_t(k), cuuint64_t(k) * cuuint64_t(rows)};  // bytes, dims 1 and 2
  const cuuint32_t box[3] = {cuuint32_t(kTmaBoxKBytes), cuuint32_t(box_rows), 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult r = fn(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, const_cast<void*>(base), dims, strides, box,
                        elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  FP8GEMM_REQUIRE(r == CUDA_SUCCESS, kCuda, "TMA: cuTensorMapEncodeTiled failed (CUresult ", int(r), ") for k=", k,
                  " rows=", rows, " batch=", batch, " box_rows=", box_rows);
}

}  // namespace fp8gemm::sm90
