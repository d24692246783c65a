// Tuning keys: what a tuned choice is stored under and looked up by (docs/design.md "Measuring").
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
  // The linear layer's keys (op "linear_fp8"): the quantization of x_type activations runs before
  // the GEMM, and is timed with it (Problem::prologue).
  Problem::Prologue prologue = Problem::Prologue::kNone;
  DType x_type = DType::kBF16;

  // "bmm_fp8 e4m3xe4m3->bf16 b=1 m<=16 n=6144 k=4096 align=16[ bias]", or for a layer
  // "linear_fp8 bf16 static e4m3xe4m3->bf16 b=1 m<=16 ...": the cache entry's identity.
  std::string to_string() const;
  // The problem a key is tuned on: M = the bucket's upper edge, or the most rows one backend call
  // takes (core/validate.h max_call_rows) where that is less.
  Problem representative() const;
  // Field-wise (no string building: dispatch looks keys up on every call).
  bool operator<(const TuneKey& o) const;
  bool operator==(const TuneKey& o) const;
};

TuneKey key_of(const Problem& p);

// The op names of the two kinds of key.
inline constexpr const char* kGemmOp = "bmm_fp8";
inline constexpr const char* kLayerOp = "linear_fp8";

// A layer problem's GEMM alone (no prologue): whose tuned entry and default a layer key without
// an entry of its own runs.
Problem gemm_of(const Problem& p);

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
