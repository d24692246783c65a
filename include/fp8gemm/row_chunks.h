// Calls larger than one backend call takes (m*k or m*n past 2^31-1: a long prefill through a wide
// layer) run as several on whole rows, each a problem of batch 1 within max_call_rows
// (fp8gemm/fp8gemm.h); every other call runs as it is. bmm_fp8 and linear_fp8 split this way; a
// front end that launches a call's parts itself with its own workspace (the PyTorch op) uses the
// same split. No allocation: a steady-state call stays free of it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "fp8gemm/context.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/types.h"

namespace fp8gemm {

inline bool splits_rows(const Problem& p) { return p.m > max_call_rows(p.n, p.k); }

// fn(problem, args) for each part of `p` in order: `p` itself, or (batch by batch) runs of at most
// max_call_rows rows, with A and out moved to the run's first row. Scales, weights and bias are
// the call's.
template <class Fn>
void for_each_row_chunk(const Problem& p, const GemmArgs& g, Fn&& fn) {
  if (!splits_rows(p)) {
    fn(p, g);
    return;
  }
  const int64_t rows = max_call_rows(p.n, p.k);
  const size_t out_bytes = dtype_bytes(p.out_type);
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t r = 0; r < p.m; r += rows) {
      Problem part = p;
      part.batch = 1;
      part.m = std::min(rows, p.m - r);
      const int64_t first = b * p.m + r;  // the run's first row among all batches' rows
      GemmArgs a = g;
      a.a = static_cast<const char*>(g.a) + first * p.k * int64_t(dtype_bytes(p.a_type));
      a.out = static_cast<char*>(g.out) + first * p.n * int64_t(out_bytes);
      fn(part, a);
    }
  }
}

// Every part's choice (Context::resolve, memoized) before any GPU work, so that a backend or tactic
// that cannot run one part fails before the first part is launched.
inline void resolve_every_part(Context& ctx, const Problem& p, const GemmArgs& g, const std::string& backend,
                               cudaStream_t stream) {
  for_each_row_chunk(p, g, [&](const Problem& part, const GemmArgs&) { ctx.resolve(part, backend, stream); });
}

}  // namespace fp8gemm
