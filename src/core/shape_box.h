// A box of problem shapes: the condition of a generated default rule (the selector's, small_m's
// and CUTLASS's), bounds on M, N, K, batch, the weight's bytes and the weight rows per SM
// (ceil(n * batch / SMs), which carries a rule over to GPUs with other SM counts), and whether K
// is a multiple of 128. Written as a chain, e.g. ShapeBox().m(33, 64).batch(1, 1).n_below(4608),
// so that a generated rule reads as what it covers; printed the same way for `explain`.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "fp8gemm/types.h"

namespace fp8gemm {

struct ShapeBox {
  static constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kMiB = int64_t(1) << 20;

  // Inclusive bounds. weight = n * k * batch, the bytes of B (FP8).
  int64_t m_lo = 1, m_hi = kAny;
  int64_t n_lo = 1, n_hi = kAny;
  int64_t k_lo = 1, k_hi = kAny;
  int64_t batch_lo = 1, batch_hi = kAny;
  int64_t weight_lo = 0, weight_hi = kAny;
  int64_t rows_per_sm_lo = 1, rows_per_sm_hi = kAny;
  int k_multiple_of_128 = -1;  // 1: k % 128 == 0 only, 0: k % 128 != 0 only, -1: either

  constexpr ShapeBox m(int64_t lo, int64_t hi) const { return with(&ShapeBox::m_lo, lo, &ShapeBox::m_hi, hi); }
  constexpr ShapeBox batch(int64_t lo, int64_t hi) const {
    return with(&ShapeBox::batch_lo, lo, &ShapeBox::batch_hi, hi);
  }
  constexpr ShapeBox rows_per_sm(int64_t lo, int64_t hi) const {
    return with(&ShapeBox::rows_per_sm_lo, lo, &ShapeBox::rows_per_sm_hi, hi);
  }
  constexpr ShapeBox n_at_least(int64_t v) const { return with(&ShapeBox::n_lo, v); }
  constexpr ShapeBox n_below(int64_t v) const { return with(&ShapeBox::n_hi, v - 1); }
  constexpr ShapeBox k_at_least(int64_t v) const { return with(&ShapeBox::k_lo, v); }
  constexpr ShapeBox k_below(int64_t v) const { return with(&ShapeBox::k_hi, v - 1); }
  constexpr ShapeBox weight_at_least(int64_t v) const { return with(&ShapeBox::weight_lo, v); }
  constexpr ShapeBox weight_below(int64_t v) const { return with(&ShapeBox::weight_hi, v - 1); }
  constexpr ShapeBox k_multiple_of(int64_t v, bool yes) const {
    ShapeBox b = *this;
    b.k_multiple_of_128 = v == 128 ? (yes ? 1 : 0) : -1;
    return b;
  }

  // Whether `p` is in the box on a device of `sms` SMs.
  bool contains(const Problem& p, int sms) const;
  // "m 33..64, batch 1, k % 128 == 0, n < 4608, weight in [8 MiB, 24 MiB)"
  std::string to_string() const;

 private:
  constexpr ShapeBox with(int64_t ShapeBox::*a, int64_t va, int64_t ShapeBox::*b = nullptr, int64_t vb = 0) const {
    ShapeBox r = *this;
    r.*a = va;
    if (b) r.*b = vb;
    return r;
  }
};

}  // namespace fp8gemm
