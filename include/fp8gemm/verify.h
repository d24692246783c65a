// Checking a tactic's output: fresh random FP8 inputs, the float64 reference GEMM, the tolerance
// every backend and tactic must meet, and one tactic run against it with its output poisoned
// first (`fp8gemm check`, the GPU tests).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fp8gemm/types.h"

namespace fp8gemm {

// ---- Inputs, the float64 reference and the tolerance -----------------------------------------
// Host-side inputs of a problem, as stored on the device (A [b,m,k], B [b,n,k], out [b,m,n]).
struct HostInputs {
  std::vector<uint8_t> a, b;
  float a_scale = 1, b_scale = 1;
  std::vector<uint16_t> bias;  // [n] bits of the output type when Problem::bias
};

// Fresh random FP8 inputs: values spread over several binades with random signs (never zeros
// everywhere), plus random scales in [0.5, 2), and a bias when the problem has one.
HostInputs random_inputs(const Problem& p, uint64_t seed);

struct Reference {
  std::vector<double> out;      // a_scale * b_scale * sum_k A*B (+ bias[n]), exact in float64
  std::vector<double> abs_sum;  // a_scale * b_scale * sum_k |A*B|, sets the accumulation tolerance
};

Reference reference_gemm(const Problem& p, const HostInputs& in);

// Tolerance: an element passes when |out - ref| <= out_rtol*|ref| + acc_tol*abs_sum.
//  out_rtol: one unit in the last place of the output type relative to the value (bf16 2^-7,
//            fp16 2^-10: 8 and 11 bits of precision), twice the worst round-to-nearest error of
//            storing the result (half an ulp is up to 2^-8 / 2^-11 of |x| just above a power
//            of two; FP32-accumulating tactics were seen to exceed a half-ulp bound).
//  acc_tol:  the tensor cores' FP32 accumulation; with fast accumulation Hopper keeps ~13-14
//            mantissa bits in the running sum, which bounds the error by a small multiple of
//            2^-13 * sum|A*B| for the K of the suite; 2^-9 leaves margin for K = 32768.
//            Without fast accumulation partial sums are promoted to FP32 after every few k-steps,
//            but inside one FP8 wgmma they still keep ~14 bits: cuBLASLt fast_accum=0 and
//            CUTLASS acc32 kernels err by a few 2^-16 * sum|A*B|, so 2^-13 (still 16x tighter
//            than fast accumulation).
// These bounds hold for the random-sign inputs the checks draw. Where every product of a sum
// has one sign (an activation row equal to a weight row) fast accumulation's truncations add up:
// about 3% of sum|A*B| at K = 4096 (H100, cuBLASLt and small_m).
// A wrong or unwritten element is off by ~|ref| (or NaN): orders of magnitude above both.
// In addition the relative Frobenius error ||out-ref||/||ref|| must stay under fro_tol, which
// catches small systematic errors (a missing K tile, a wrong scale) that per-element bounds
// can miss.
struct Tolerance {
  double out_rtol;
  double acc_tol;
  double fro_tol;
  static Tolerance for_problem(const Problem& p, bool fast_accum);
};

struct CheckResult {
  bool ok = false;
  size_t bad = 0;           // elements outside tolerance (NaN / poison included)
  size_t nan = 0;
  double worst_ratio = 0;   // max over elements of |err| / allowed (<= 1 passes)
  double fro_rel = 0;       // ||out - ref|| / ||ref||
  size_t first_bad = 0;     // index of the first failing element
  std::string to_string() const;
};

// `out` holds the device output copied to the host (bf16 or fp16 bits).
CheckResult check_output(const Problem& p, const std::vector<uint16_t>& out, const Reference& ref,
                         const Tolerance& tol);

// ---- One tactic against the reference --------------------------------------------------------
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
