// A Context owns everything a call needs on one device: the backends (and through them the
// cuBLASLt handle), per-stream workspaces, and the tactic selector. Thread-safe.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/device.h"
#include "fp8gemm/selector.h"
#include "fp8gemm/types.h"

namespace fp8gemm {

struct ContextOptions {
  int device = -1;                                  // -1: the current device
  size_t workspace_bytes = kDefaultWorkspaceBytes;  // per stream; cuBLASLt's split-K needs it
  std::vector<std::string> disabled_backends;
  // List cuDNN's runtime-compiled plans (compiled with NVRTC per plan and problem on first use,
  // which is slow) among its tactics, so that auto, tune and bench consider them. Off: only its
  // precompiled plans are listed (none for this graph on the H200); a named cudnn tactic, or
  // backend "cudnn" itself, runs either way. FP8GEMM_CUDNN_RUNTIME_COMPILED=1 also turns it on.
  bool cudnn_runtime_compiled = false;
};

class Context {
 public:
  explicit Context(ContextOptions options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& device() const;
  const ContextOptions& options() const;

  // Every backend the library was built with, available or not (see Backend::available()).
  std::vector<Backend*> backends() const;
  // nullptr when `name` (canonical) is not built in or is disabled.
  Backend* backend(const std::string& name) const;

  // What a call with `backend` would run: `backend` is "auto", a backend name in any accepted
  // spelling, or a full tactic name ("cublaslt:algo=..."). Throws Error(kUnsupported) with the
  // reason when the named backend/tactic cannot run `p`; "auto" fails only if nothing can.
  // `stream`: the stream the call will run on (passed to the selector).
  Tactic choose(const Problem& p, const std::string& backend = "auto", cudaStream_t stream = nullptr);

  // What run() launches for (p, backend): the chosen tactic, its backend and the workspace it
  // needs. Memoized per (problem, backend spelling) under the selector's generation, so that a
  // steady-state call allocates nothing and asks no selector (Selector::generation()).
  struct Resolved {
    uint64_t generation;
    Tactic tactic;
    Backend* backend;
    size_t workspace_bytes;
  };
  std::shared_ptr<const Resolved> resolve(const Problem& p, const std::string& backend = "auto",
                                          cudaStream_t stream = nullptr);

  // Enqueue `p` on `stream`. `p` must already be validated (see validate()). Allocates nothing
  // after the first call on a stream, never synchronizes, legal inside stream capture.
  void run(const Problem& p, const GemmArgs& args, cudaStream_t stream,
           const std::string& backend = "auto");
  void run_tactic(const Problem& p, const Tactic& t, const GemmArgs& args, cudaStream_t stream);

  // The workspace this Context uses on `stream`: its scratch and its flags (Workspace), each
  // allocated on first use of the stream (legal inside stream capture) and kept until
  // release_stream(stream) or the Context's end.
  Workspace workspace(cudaStream_t stream);
  // The flags alone (no scratch), for callers that bring their own scratch (the PyTorch op).
  Workspace flags(cudaStream_t stream);

  // Frees the workspace of `stream` after waiting for the work queued on it; a later call on
  // `stream` allocates a new one. Call it before destroying a stream that ran calls of this
  // Context (no call on `stream` may run concurrently with it), once no CUDA graph captured on
  // `stream` with calls of this Context can replay again: such a graph holds the workspace's
  // address (destroy the graph first). Throws Error(kInvalidArgument) while `stream` is being
  // captured. Returns false when `stream` had no workspace. Nothing is freed automatically;
  // past kStreamWorkspaceWarning streams with a workspace, the Context warns once.
  bool release_stream(cudaStream_t stream);
  size_t stream_workspaces() const;  // how many streams hold a workspace now
  static constexpr size_t kStreamWorkspaceWarning = 64;

  // Flags per stream: a stream-K launch uses one per block.
  static constexpr size_t kStreamFlags = 4096;

  void set_selector(std::shared_ptr<Selector> selector);
  std::shared_ptr<Selector> selector() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One Context per device, created on first use, alive until exit, with the autotuner installed
// when the library has one (install_autotuner in fp8gemm/tune.h).
Context& default_context(int device = -1);

}  // namespace fp8gemm
