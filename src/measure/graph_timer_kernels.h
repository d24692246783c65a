// Small device kernels the GraphTimer needs: random FP8 data, an L2 flush and an output
// comparison. Host wrappers enqueue on `stream` and never synchronize (except the compare,
// which must return numbers).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "fp8gemm/types.h"

namespace fp8gemm::measure_kernels {

// Fills `bytes` FP8 codes of type `t` with random finite, non-zero values: random sign,
// magnitude in [0.25, 4) (so no binade is zero, NaN or Inf, and sums over K stay far from the
// fp16 limit). A function of (seed, index): the same seed gives the same data.
void fill_random_fp8(void* data, size_t bytes, DType t, uint64_t seed, cudaStream_t stream);

// Reads `bytes` of `data` so that whatever was cached in L2 before is evicted.
void read_through(const void* data, size_t bytes, cudaStream_t stream);

struct Difference {
  double max_abs_diff = 0;  // max |out - ref|
  double max_abs_ref = 0;   // max |ref|
  bool nan = false;         // out (or ref) holds a NaN
};

// Keeps the GPU busy for about `us` microseconds (one thread reading the global timer), so that
// what the host enqueues behind it within that time runs back to back with it: an event recorded
// on an idle stream fires at once, and the host's next launch would land inside the timed span.
// Enqueues only.
void hold(double us, cudaStream_t stream);

// Compares two bf16/fp16 arrays of `count` elements; `scratch` is >= 16 bytes of device memory.
// Synchronizes `stream`.
Difference compare(const void* out, const void* ref, size_t count, DType out_type, void* scratch,
                   cudaStream_t stream);

}  // namespace fp8gemm::measure_kernels
