// The problem the backends' CPU tests build: e4m3 x e4m3 -> bf16, 16-byte aligned (Problem's
// defaults), the given shape and batch.
#pragma once

#include <cstdint>

#include "fp8gemm/types.h"

namespace fp8gemm::testing {

inline Problem problem(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  return p;
}

}  // namespace fp8gemm::testing
