#include "fp8gemm/context.h"

#include <iostream>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "fp8gemm/check.h"
#include "core/validate.h"
#include "runtime/floor.h"
#include "runtime/registry.h"
#include "runtime/stream_workspaces.h"

namespace fp8gemm {

namespace {

// Looks (problem, backend) keys up by reference, so that a call copies no string.
struct ResolvedKeyRef {
  const Problem& problem;
  const std::string& backend;
};
struct ResolvedKeyLess {
  using is_transparent = void;
  using Key = std::pair<Problem, std::string>;
  static bool less(const Problem& p, const std::string& b, const Problem& q, const std::string& c) {
    if (p < q) return true;
    if (q < p) return false;
    return b < c;
  }
  bool operator()(const Key& x, const Key& y) const { return less(x.first, x.second, y.first, y.second); }
  bool operator()(const Key& x, const ResolvedKeyRef& y) const { return less(x.first, x.second, y.problem, y.backend); }
  bool operator()(const ResolvedKeyRef& x, const Key& y) const { return less(x.problem, x.backend, y.first, y.second); }
};

// Runs `f` with this thread's capture mode relaxed. While a capture in global mode is under way
// (this thread's or another's), "potentially unsafe" calls such as cudaMalloc and cudaFree are
// refused, though they are no operation of the captured stream; relaxed mode makes them legal.
template <typename F>
cudaError_t relaxed(F f) {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  FP8GEMM_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  const cudaError_t err = f();
  cudaThreadExchangeStreamCaptureMode(&mode);
  return err;
}

// Device memory for a stream's first call (legal inside stream capture). zero: cleared before
// returning, through a private stream (the caller's may be capturing).
void* allocate_for_stream(size_t bytes, bool zero) {
  void* ptr = nullptr;
  FP8GEMM_CUDA_CHECK(relaxed([&] {
    cudaError_t err = cudaMalloc(&ptr, bytes);
    if (err == cudaSuccess && zero) {
      cudaStream_t s = nullptr;
      err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      if (err == cudaSuccess) {
        err = cudaMemsetAsync(ptr, 0, bytes, s);
        const cudaError_t sync = cudaStreamSynchronize(s);
        if (err == cudaSuccess) err = sync;
        cudaStreamDestroy(s);
      }
      if (err != cudaSuccess) {
        cudaFree(ptr);
        ptr = nullptr;
      }
    }
    return err;
  }));
  return ptr;
}

StreamWorkspaces::DeviceCalls stream_device_calls(const ContextOptions& options) {
  StreamWorkspaces::DeviceCalls c;
  c.allocate = allocate_for_stream;
  c.free = [](void* p) {  // never throws: it also runs at exit, maybe after the runtime has gone
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    const bool exchanged = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
    cudaFree(p);
    if (exchanged) cudaThreadExchangeStreamCaptureMode(&mode);
  };
  c.synchronize = [](cudaStream_t s) { FP8GEMM_CUDA_CHECK(relaxed([s] { return cudaStreamSynchronize(s); })); };
  c.is_capturing = [](cudaStream_t s) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &status) != cudaSuccess) {
      cudaGetLastError();  // e.g. the legacy stream while another stream captures
      return true;
    }
    return status != cudaStreamCaptureStatusNone;
  };
  c.warn_many = [device = options.device, bytes = options.workspace_bytes](size_t streams) {
    std::cerr << "fp8gemm: warning: the Context on device " << device << " holds workspaces for " << streams
              << " streams (" << (bytes >> 20) << " MiB of scratch each); call Context::release_stream(stream) "
              << "before destroying a stream that ran its calls\n";
  };
  return c;
}

}  // namespace

using Resolved = Context::Resolved;

struct Context::Impl {
  ContextOptions options;
  DeviceInfo device;
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<Backend*> backend_list;  // the same, in the same order

  std::unique_ptr<StreamWorkspaces> workspaces;  // per stream, until release_stream or the end

  mutable std::shared_mutex selector_mutex;
  std::shared_ptr<Selector> selector;

  std::shared_mutex memo_mutex;
  std::map<std::pair<Problem, std::string>, Tactic> default_memo;

  // Context::run's memo: cleared when the selector is replaced; an entry is stale when the
  // selector's generation moved on.
  std::shared_mutex resolved_mutex;
  std::map<std::pair<Problem, std::string>, std::shared_ptr<const Resolved>, ResolvedKeyLess> resolved;

  std::shared_ptr<const Resolved> find_resolved(const Problem& p, const std::string& backend, uint64_t generation) {
    std::shared_lock lock(resolved_mutex);
    auto it = resolved.find(ResolvedKeyRef{p, backend});
    if (it == resolved.end() || it->second->generation != generation) return nullptr;
    return it->second;  // a shared_ptr copy: no allocation
  }

  Backend* find(const std::string& name) const { return find_backend(backend_list, name); }

  // What runs without a selector's choice: the named backend's own default, or for "auto" the
  // floor (runtime/floor.h). Memoized per (problem, backend).
  Tactic default_choice(const Problem& p, const std::string& backend) {
    {
      std::shared_lock lock(memo_mutex);
      auto it = default_memo.find({p, backend});
      if (it != default_memo.end()) return it->second;
    }
    Tactic t;
    if (backend != "auto") {
      Backend* b = find(backend);
      FP8GEMM_REQUIRE(b, kUnsupported, "backend ", backend, " is not part of this build");
      Verdict v = b->available();
      FP8GEMM_REQUIRE(v.ok, kUnsupported, "backend ", backend, " is not available: ", v.reason);
      t = b->default_tactic(p);
    } else {
      t = floor_choice(backend_list, p);
    }
    std::unique_lock lock(memo_mutex);
    default_memo.emplace(std::make_pair(p, backend), t);
    return t;
  }
};

Context::Context(ContextOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->device = query_device(impl_->options.device);
  impl_->options.device = impl_->device.device;
  impl_->backends = make_backends(impl_->device, impl_->options);
  for (auto& b : impl_->backends) impl_->backend_list.push_back(b.get());
  impl_->workspaces = std::make_unique<StreamWorkspaces>(stream_device_calls(impl_->options), kStreamFlags,
                                                         kStreamWorkspaceWarning);
}

Context::~Context() {
  // First the selector: a tuning selector's timer runs through this Context, and gives back its
  // stream's workspace when it goes.
  std::shared_ptr<Selector> selector;
  {
    std::unique_lock lock(impl_->selector_mutex);
    selector = std::move(impl_->selector);
  }
}

const DeviceInfo& Context::device() const { return impl_->device; }
const ContextOptions& Context::options() const { return impl_->options; }

std::vector<Backend*> Context::backends() const { return impl_->backend_list; }

Backend* Context::backend(const std::string& name) const { return impl_->find(name); }

Tactic Context::choose(const Problem& p, const std::string& backend, cudaStream_t stream) {
  require_one_call(p);  // a backend sees at most max_call_rows rows (larger calls are split first)
  if (backend.find(':') != std::string::npos) {
    Tactic t = Tactic::parse(backend);
    t.backend = canonical_backend_name(t.backend);
    Backend* b = impl_->find(t.backend);
    FP8GEMM_REQUIRE(b, kUnsupported, "backend ", t.backend, " is not part of this build");
    Verdict v = b->can_implement(p, t);
    FP8GEMM_REQUIRE(v.ok, kUnsupported, "tactic ", t.name(), " cannot run ", p, ": ", v.reason);
    return t;
  }
  const std::string name = canonical_backend_name(backend);
  if (auto sel = selector()) {
    // A stale or broken selector entry must never fail a call: fall through to the default.
    try {
      if (auto t = sel->select(p, name, stream)) {
        Backend* b = impl_->find(t->backend);
        if (b && (name == "auto" || t->backend == name) && b->can_implement(p, *t)) return *t;
      }
    } catch (const std::exception&) {
    }
  }
  return impl_->default_choice(p, name);
}

std::shared_ptr<const Context::Resolved> Context::resolve(const Problem& p, const std::string& backend,
                                                          cudaStream_t stream) {
  // Steady state: the choice resolved for this (problem, backend) under the selector's current
  // generation; no selector query, no name parsing, no string copy, no allocation.
  const std::shared_ptr<Selector> sel = selector();
  const uint64_t generation = sel ? sel->generation() : 0;
  std::shared_ptr<const Resolved> r;
  if (generation != Selector::kVolatile) r = impl_->find_resolved(p, backend, generation);
  if (!r) {
    Tactic t = choose(p, backend, stream);
    Backend* b = impl_->find(t.backend);
    FP8GEMM_REQUIRE(b, kUnsupported, "backend ", t.backend, " is not part of this build");
    const size_t need = b->workspace_bytes(p, t);
    r = std::make_shared<const Resolved>(Resolved{generation, std::move(t), b, need});
    if (generation != Selector::kVolatile) {
      std::unique_lock lock(impl_->resolved_mutex);
      impl_->resolved[std::make_pair(p, backend)] = r;
    }
  }
  return r;
}

namespace {

// The last step of run() and run_tactic(): this stream's workspace, checked, then the launch.
void launch(Context& ctx, Backend& b, const Problem& p, const Tactic& t, size_t need, const GemmArgs& args,
            cudaStream_t stream) {
  Workspace ws = need ? ctx.workspace(stream) : Workspace{};
  FP8GEMM_REQUIRE(ws.bytes >= need, kUnsupported, "tactic ", t.name(), " needs ", need,
                  " bytes of workspace; the context has ", ws.bytes, " (raise ContextOptions::workspace_bytes)");
  b.run(p, t, args, ws, stream);
}

}  // namespace

void Context::run(const Problem& p, const GemmArgs& args, cudaStream_t stream, const std::string& backend) {
  if (p.empty()) return;
  const std::shared_ptr<const Resolved> r = resolve(p, backend, stream);
  launch(*this, *r->backend, p, r->tactic, r->workspace_bytes, args, stream);
}

void Context::run_tactic(const Problem& p, const Tactic& t, const GemmArgs& args, cudaStream_t stream) {
  if (p.empty()) return;
  require_one_call(p);
  Backend* b = impl_->find(t.backend);
  FP8GEMM_REQUIRE(b, kUnsupported, "backend ", t.backend, " is not part of this build");
  launch(*this, *b, p, t, b->workspace_bytes(p, t), args, stream);
}

Workspace Context::workspace(cudaStream_t stream) {
  const size_t bytes = impl_->options.workspace_bytes;
  if (bytes == 0) return {};
  return impl_->workspaces->get(stream, bytes);
}

Workspace Context::flags(cudaStream_t stream) { return impl_->workspaces->get(stream, 0); }

bool Context::release_stream(cudaStream_t stream) { return impl_->workspaces->release(stream); }

size_t Context::stream_workspaces() const { return impl_->workspaces->size(); }

void Context::set_selector(std::shared_ptr<Selector> selector) {
  std::unique_lock lock(impl_->selector_mutex);
  impl_->selector = std::move(selector);
  std::unique_lock memo(impl_->resolved_mutex);  // its generations mean nothing to the new one
  impl_->resolved.clear();
}

std::shared_ptr<Selector> Context::selector() const {
  std::shared_lock lock(impl_->selector_mutex);
  return impl_->selector;
}

}  // namespace fp8gemm
