// Shared helpers for GPU tests: skip visibly without a GPU, one Context for the binary.
#pragma once

#include <gtest/gtest.h>

#include "fp8gemm/fp8gemm.h"

namespace fp8gemm::testing {

// Returns true (after GTEST_SKIP's message is recorded) when there is no usable GPU.
inline bool no_gpu() { return device_count() == 0; }

#define FP8GEMM_SKIP_WITHOUT_GPU()                                                \
  do {                                                                            \
    if (::fp8gemm::testing::no_gpu())                                             \
      GTEST_SKIP() << "no GPU: " << ::fp8gemm::no_device_reason();                \
  } while (0)

inline Context& test_context() { return default_context(); }

// e4m3 x e4m3 -> bf16, batch 1.
inline Problem problem(int64_t m, int64_t n, int64_t k) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

}  // namespace fp8gemm::testing
