// The per-stream device memory of a Context (Context::workspace): scratch and flags, each
// allocated on the first call on a stream that needs it, freed by release() or with the owner.
// Nothing is freed behind the caller's back: a CUDA graph captured on a stream keeps the addresses
// it was captured with, and nothing here can tell whether such a graph may still replay
// (docs/decisions/runtime.md). The device calls are injected so that CPU tests can watch them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "fp8gemm/types.h"

namespace fp8gemm {

class StreamWorkspaces {
 public:
  struct DeviceCalls {
    std::function<void*(size_t bytes, bool zero)> allocate;  // legal inside stream capture
    std::function<void(void*)> free;
    std::function<void(cudaStream_t)> synchronize;     // throws when the stream cannot be waited for
    std::function<bool(cudaStream_t)> is_capturing;    // true also when it cannot be told
    std::function<void(size_t streams)> warn_many;     // once, when more than `warn_above` hold one
  };

  StreamWorkspaces(DeviceCalls calls, size_t flag_count, size_t warn_above);
  ~StreamWorkspaces();  // frees every workspace
  StreamWorkspaces(const StreamWorkspaces&) = delete;
  StreamWorkspaces& operator=(const StreamWorkspaces&) = delete;

  // The stream's flags (`flag_count`, zeroed), and `scratch_bytes` of scratch when > 0.
  Workspace get(cudaStream_t stream, size_t scratch_bytes);

  // Waits for the work queued on `stream`, then frees its workspace; false when it had none.
  // Throws Error(kInvalidArgument) while `stream` is being captured, and whatever synchronize
  // throws (the workspace is then kept).
  bool release(cudaStream_t stream);

  size_t size() const;  // how many streams hold a workspace

 private:
  struct Memory {
    void* scratch = nullptr;
    unsigned* flags = nullptr;
  };
  void free(const Memory& m);

  DeviceCalls calls_;
  size_t flag_count_, warn_above_;
  bool warned_ = false;
  mutable std::mutex mutex_;
  std::unordered_map<cudaStream_t, Memory> memory_;
};

}  // namespace fp8gemm
