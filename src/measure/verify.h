// Runs one tactic on fresh random inputs and checks it against the float64 reference, with the
// output poisoned (all-ones bits: NaN in bf16/fp16) before the call so unwritten elements show.
// Used by `fp8gemm check` and the GPU tests.
#pragma once

#include <cstdint>

#include "core/reference.h"
#include "fp8gemm/context.h"

namespace fp8gemm {

// Whether a tactic may accumulate with FP8 fast accumulation (sets the tolerance). Tactics that
// promote partial sums to full FP32 say so in their names ("fast_accum=0" or "acc32"); any
// other tactic is held to the (looser) fast-accumulation bound.
bool tactic_uses_fast_accum(const Tactic& t);

// Synchronizes `stream`. Throws Error on CUDA failures (which are then reported as FAIL).
CheckResult verify_tactic(Context& ctx, const Problem& p, const Tactic& t, uint64_t seed,
                          cudaStream_t stream = nullptr);

}  // namespace fp8gemm
