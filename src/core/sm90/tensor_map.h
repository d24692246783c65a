// TMA tensor maps of the sm_90a kernels (host side), encoded through the driver entry point that the
// CUDA runtime hands out (the library links cudart statically and never links libcuda itself).
#pragma once

#include <cuda.h>  // CUtensorMap (types only)

#include <cstdint>

namespace fp8gemm::sm90 {

// Bytes of K in one box: one 128-byte swizzle row segment.
inline constexpr int kTmaBoxKBytes = 128;

// 3-D tensor map {k, rows, batch} of a K-major FP8 tensor with a {128, box_rows, 1} box and the
// 128-byte swizzle; out-of-bounds parts of a box read as zeros. Throws Error(kCuda) when encoding
// fails or the driver has no encoder.
void encode_kmajor_map(CUtensorMap* map, const void* base, int64_t k, int64_t rows, int64_t batch, int box_rows);

}  // namespace fp8gemm::sm90
