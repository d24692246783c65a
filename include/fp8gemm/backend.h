// The one interface every backend implements (docs/design.md). Adding a backend is adding a
// folder under src/backends/ and one line in the registry (src/runtime/registry.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fp8gemm/device.h"
#include "fp8gemm/types.h"

namespace fp8gemm {

// Workspace per stream that a Context gives each call unless told otherwise (cuBLASLt's split-K
// and CUTLASS's stream-K need it).
inline constexpr size_t kDefaultWorkspaceBytes = 32ull << 20;

// What a backend is built with. The Context fills it from its ContextOptions; backends never
// see the Context.
struct BackendOptions {
  // The workspace `run` is given on each stream; cuBLASLt and cuDNN list no tactic needing more.
  size_t workspace_bytes = kDefaultWorkspaceBytes;
  // cuDNN: also list the plans it compiles at run time (ContextOptions::cudnn_runtime_compiled).
  bool cudnn_runtime_compiled = false;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Canonical lower-case name, also the prefix of its tactic names ("cublaslt", "cutlass", ...).
  virtual std::string name() const = 0;

  // Whether the backend loaded and can run anything on this device, with the reason if not.
  virtual Verdict available() const = 0;

  // Every tactic that can run `p` (each passed can_implement). May throw Error; the caller
  // (registry / tuner) catches it and excludes the backend for that problem, with its reason.
  virtual std::vector<Tactic> tactics(const Problem& p) = 0;

  // The backend's own first choice for `p` (cuBLASLt: its heuristic's first). Used on a cache
  // miss and as the numerics reference when tuning. Throws Error(kUnsupported) saying why when
  // no tactic of this backend can run `p`.
  virtual Tactic default_tactic(const Problem& p) = 0;

  // The generated rule behind default_tactic(p), in a sentence, for a backend whose default comes
  // from rules fitted to measurements (small_m, CUTLASS): which rule chose and why; empty where
  // none of its rules did (its fixed fallback chose). The selector trusts a backend's default only
  // where a rule chose it; `fp8gemm explain` prints it. Never throws.
  virtual std::string default_rule(const Problem&) { return {}; }

  // A tactic that runs, for whatever problem it is given, default_tactic() of that problem
  // (cuBLASLt: "cublaslt:heuristic", its heuristic's first at the call's own M). The tuner can
  // then give a part of an M bucket to the heuristic itself, which re-decides per M, instead of
  // the one kernel it chose at the M that was timed (docs/tuning.md "The adaptive floor").
  // nullopt: the backend has none.
  virtual std::optional<Tactic> adaptive_default() const { return std::nullopt; }

  // Whether `t` (possibly parsed from a cache file) runs `p`; the reason when it does not.
  virtual Verdict can_implement(const Problem& p, const Tactic& t) = 0;

  // Device workspace `run` needs for (p, t); 0 when none.
  virtual size_t workspace_bytes(const Problem& p, const Tactic& t) = 0;

  // The largest M >= p.m at which `t` needs no more M tiles than at p.m (so it takes about its
  // time at p.m there): the tuner lets a choice measured at p.m hold up to that M. p.m when the
  // backend cannot tell.
  virtual int64_t same_tiles_up_to(const Problem& p, const Tactic& t) {
    (void)t;
    return p.m;
  }

  // Enqueue the GEMM on `stream`. Preconditions: the problem was validated, can_implement(p, t)
  // holds and ws.bytes >= workspace_bytes(p, t). Never allocates or synchronizes; legal inside
  // stream capture. Throws Error(kCuda) when a launch fails.
  virtual void run(const Problem& p, const Tactic& t, const GemmArgs& args, Workspace ws,
                   cudaStream_t stream) = 0;
};

// Backend names the library knows, in the order `auto` considers them.
const std::vector<std::string>& known_backend_names();

// Maps user spellings (FlashInfer's "cublas", "cudnn", "cutlass", "auto"; ours "cublaslt",
// "small_m") to canonical names. Throws Error(kInvalidArgument) naming the accepted spellings.
std::string canonical_backend_name(const std::string& spelling);

}  // namespace fp8gemm
