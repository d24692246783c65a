// Tuning keys: what a tuned choice is stored under and looked up by (DESIGN.md "Measuring").
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "fp8gemm/tune.h"
#include "fp8gemm/types.h"

namespace fp8gemm::tuning {

// (op, dtypes, out dtype, batch, M bucket, N, K, alignment class). Every field, so permuted
// (m, n, k) never collide.
struct TuneKey {
  std::string op = "bmm_fp8";
  DType a_type = DType::kE4M3, b_type = DType::kE4M3, out_type = DType::kBF16;
  int64_t batch = 1, m_bucket = 1, n = 0, k = 0;
  int alignment = 16;
  int scale_alignment = 16;  // Problem::scale_alignment (cuBLASLt needs 16)
  bool bias = false;         // Problem::bias: only backends with a bias epilogue compete

  // "bmm_fp8 e4m3xe4m3->bf16 b=1 m<=16 n=6144 k=4096 align=16[ bias]": the cache entry's identity.
  std::string to_string() const;
  // The problem a key is tuned on: M = the bucket's upper edge.
  Problem representative() const;
  // Field-wise (no string building: dispatch looks keys up on every call).
  bool operator<(const TuneKey& o) const;
  bool operator==(const TuneKey& o) const;
};

TuneKey key_of(const Problem& p);

// Alignment classes: 16, 8, 4, 2, 1 bytes (Problem::alignment is already capped at 16).
int alignment_class(int alignment);

// The previous edge of m's bucket: the bucket is (lower, edge].
int64_t bucket_lower(int64_t m);

// M values below the bucket's upper edge `m` at which the finalists are also timed: `count`
// points splitting the bucket (lower, edge] into equal parts (distinct, ascending). Each one's
// choice covers the M values from the previous point (exclusive) up to it; the samples step moves
// a sample up to where the previous sample's choice needs another M tile when that is higher.
std::vector<int64_t> bucket_sample_ms(int64_t m, int count);

}  // namespace fp8gemm::tuning
