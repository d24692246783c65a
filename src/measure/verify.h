// Runs one tactic on fresh random inputs and checks it against the float64 reference, with the
// output poisoned (all-ones bits: NaN in bf16/fp16) before the call so unwritten elements show.
// Used by `fp8gemm check` and the GPU tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "core/reference.h"
#include "fp8gemm/types.h"

namespace fp8gemm {

class Context;  // fp8gemm/fp8gemm.h: the tactic runs through one

// Whether a tactic may accumulate with FP8 fast accumulation (sets the tolerance). Tactics that
// promote partial sums to full FP32 say so in their names ("fast_accum=0" or "acc32"); any
// other tactic is held to the (looser) fast-accumulation bound.
bool tactic_uses_fast_accum(const Tactic& t);

// One problem's random inputs, float64 reference and device buffers, reused for every tactic
// checked on it (the reference is the expensive part).
class VerifyCase {
 public:
  VerifyCase(const Problem& p, uint64_t seed);
  ~VerifyCase();
  const Problem& problem() const { return problem_; }
  // Poisons out, runs `t`, synchronizes `stream`, compares. Throws Error on CUDA failures.
  CheckResult run(Context& ctx, const Tactic& t, cudaStream_t stream = nullptr);

 private:
  struct Buffers;
  Problem problem_;
  Reference reference_;
  std::unique_ptr<Buffers> buffers_;
};

// VerifyCase(p, seed).run(ctx, t, stream).
CheckResult verify_tactic(Context& ctx, const Problem& p, const Tactic& t, uint64_t seed,
                          cudaStream_t stream = nullptr);

}  // namespace fp8gemm
