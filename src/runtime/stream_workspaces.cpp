#include "runtime/stream_workspaces.h"

#include "fp8gemm/check.h"

namespace fp8gemm {

StreamWorkspaces::StreamWorkspaces(DeviceCalls calls, size_t flag_count, size_t warn_above)
    : calls_(std::move(calls)), flag_count_(flag_count), warn_above_(warn_above) {}

StreamWorkspaces::~StreamWorkspaces() {
  for (const auto& [stream, m] : memory_) free(m);
}

void StreamWorkspaces::free(const Memory& m) {
  if (m.scratch) calls_.free(m.scratch);
  if (m.flags) calls_.free(m.flags);
}

Workspace StreamWorkspaces::get(cudaStream_t stream, size_t scratch_bytes) {
  std::lock_guard lock(mutex_);
  Memory& m = memory_[stream];
  if (!m.flags) m.flags = static_cast<unsigned*>(calls_.allocate(flag_count_ * sizeof(unsigned), true));
  if (scratch_bytes && !m.scratch) m.scratch = calls_.allocate(scratch_bytes, false);
  if (!warned_ && memory_.size() > warn_above_) {
    warned_ = true;
    if (calls_.warn_many) calls_.warn_many(memory_.size());
  }
  Workspace ws;
  ws.ptr = scratch_bytes ? m.scratch : nullptr;
  ws.bytes = scratch_bytes;
  ws.flags = m.flags;
  ws.flag_count = flag_count_;
  return ws;
}

bool StreamWorkspaces::release(cudaStream_t stream) {
  // A free inside a capture would free memory the graph being captured still uses.
  FP8GEMM_REQUIRE(!calls_.is_capturing(stream), kInvalidArgument,
                  "release_stream: the stream is being captured (or its capture status cannot be read); "
                  "release its workspace after the capture, once no graph captured from it can replay");
  Memory m;
  {
    std::lock_guard lock(mutex_);
    auto it = memory_.find(stream);
    if (it == memory_.end()) return false;
    m = it->second;
    memory_.erase(it);
  }
  // Outside the lock: waiting for one stream must not hold up first calls on the others.
  try {
    calls_.synchronize(stream);
  } catch (...) {
    std::lock_guard lock(mutex_);
    memory_.emplace(stream, m);  // still in use as far as anyone can tell: kept
    throw;
  }
  free(m);
  return true;
}

size_t StreamWorkspaces::size() const {
  std::lock_guard lock(mutex_);
  return memory_.size();
}

}  // namespace fp8gemm
