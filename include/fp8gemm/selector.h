// The interface through which a Context asks who chooses the tactic for `auto`: the autotuner
// implements it (tuned cache, per-arch default table); a caller may install their own.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>

#include "fp8gemm/types.h"

namespace fp8gemm {

// Chooses a tactic for `auto`. Returning nullopt means "no opinion": the Context then uses its
// fallback, the first available backend's default tactic (cuBLASLt's heuristic first).
class Selector {
 public:
  virtual ~Selector() = default;

  // A number that changes whenever select() may answer differently for the same arguments, or
  // kVolatile when any call may (e.g. while lazy tuning is on). The Context memoizes its
  // resolved choice per (problem, backend) under this number, so that a steady-state call
  // neither asks the selector nor copies a tactic name.
  static constexpr uint64_t kVolatile = ~uint64_t(0);
  virtual uint64_t generation() const { return kVolatile; }

  // `backend` is "auto" or a canonical backend name the choice must belong to. `stream` is the
  // stream of the call being dispatched (nullptr outside a call), so that a selector can tell a
  // stream capture (cudaStreamIsCapturing) and never profile inside one.
  virtual std::optional<Tactic> select(const Problem& p, const std::string& backend,
                                       cudaStream_t stream) = 0;
};

}  // namespace fp8gemm
