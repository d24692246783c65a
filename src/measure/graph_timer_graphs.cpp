// The GraphTimer's buffers, probes, graphs and launches (graph_timer_impl.h).
#include <algorithm>

#include "fp8gemm/check.h"
#include "fp8gemm/backend.h"
#include "fp8gemm/fp8gemm.h"
#include "measure/graph_timer_impl.h"
#include "measure/graph_timer_kernels.h"
#include "quantize/quantize.h"

namespace fp8gemm {

namespace {

constexpr size_t kCopyAlignment = 256;

size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

}  // namespace

void ensure_size(DeviceBuffer& buf, size_t bytes) {
  if (buf.bytes() >= bytes) return;
  buf = DeviceBuffer();  // free first: the old and the new one need not fit together
  buf = DeviceBuffer(bytes);
}

void GraphTimer::Impl::prepare(const Problem& p) {
  // The heater's graph reads the weights and activations and writes `out`: nothing it uses may
  // be freed while it runs.
  const size_t a_bytes = size_t(p.batch * p.m * p.k) * dtype_bytes(p.a_type);
  const size_t out_bytes = size_t(p.batch * p.m * p.n) * dtype_bytes(p.out_type);
  const size_t bias_bytes = p.bias ? size_t(p.n) * dtype_bytes(p.out_type) : 0;
  const size_t x_bytes = p.is_layer() ? size_t(p.batch * p.m * p.k) * dtype_bytes(p.x_type) : 0;
  const size_t partial_bytes = p.prologue == Problem::Prologue::kQuantizeDynamic
                                   ? std::max<size_t>(16, quantize::dynamic_scratch_bytes(p.batch * p.m * p.k, sm_count))
                                   : 0;
  const bool new_weights = !have_weights || !same_weights(weight_key, p);
  if (new_weights || a.bytes() < a_bytes || out.bytes() < out_bytes || bias.bytes() < bias_bytes ||
      x.bytes() < x_bytes || partials.bytes() < partial_bytes)
    drain_heater();
  if (new_weights) {
    weights = DeviceBuffer();
    have_weights = false;
    copy_bytes = size_t(p.batch * p.n * p.k) * dtype_bytes(p.b_type);
    copy_stride = round_up(copy_bytes, kCopyAlignment);
    copies = weight_copies_for(copy_bytes, l2_bytes);
    weights = DeviceBuffer(copy_stride * size_t(copies));
    measure_kernels::fill_random_fp8(weights.get(), weights.bytes(), p.b_type, options.seed, stream);
    weight_key = p;
    have_weights = true;
    ++weight_allocations;
  }
  ensure_size(a, a_bytes);
  measure_kernels::fill_random_fp8(a.get(), a_bytes, p.a_type, options.seed + 1 + ++draws, stream);
  ensure_size(out, out_bytes);
  // Random e4m3 codes read as bf16/fp16 pairs are finite: their exponent bits stay below all-ones.
  if (p.bias) {
    ensure_size(bias, bias_bytes);
    measure_kernels::fill_random_fp8(bias.get(), bias_bytes, DType::kE4M3, options.seed + 2, stream);
  }
  if (p.is_layer()) {
    ensure_size(x, x_bytes);
    measure_kernels::fill_random_fp8(x.get(), x_bytes, DType::kE4M3, options.seed + 3 + draws, stream);
    ensure_size(partials, partial_bytes);
  }
  if (!(memo_problem == p)) {
    memo_problem = p;
    calls_memo.clear();
  }
  // Workspace is allocated on first use of a stream, which must not happen inside capture.
  ctx.workspace(stream);
}

GemmArgs GraphTimer::Impl::args(int call, int first_copy, void* output) const {
  const int copy = (first_copy + call) % copies;
  const auto* w = static_cast<const uint8_t*>(weights.get()) + size_t(copy) * copy_stride;
  return GemmArgs{a.get(), w, scales.as<float>(), scales.as<float>() + 4, output, bias.get()};
}

void GraphTimer::Impl::run_call(const Problem& p, const Tactic& t, int call, int first_copy, void* output) {
  const GemmArgs g = args(call, first_copy, output);
  const int64_t count = p.batch * p.m * p.k;
  // The quantized activations overwrite `a`: the GEMM before has finished reading it by then (the
  // quantization waits for it before it writes).
  if (p.prologue == Problem::Prologue::kQuantizeStatic)
    quantize::launch_static(x.get(), p.x_type, count, g.a_scale, a.get(), sm_count, stream);
  else if (p.prologue == Problem::Prologue::kQuantizeDynamic)
    quantize::launch_dynamic(x.get(), p.x_type, count, const_cast<float*>(g.a_scale), a.get(), partials.get(), sm_count,
                             stream);
  ctx.run_tactic(p, t, g, stream);
}

float GraphTimer::Impl::elapsed_ms(cudaEvent_t start, cudaEvent_t stop) {
  float ms = 0;
  FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms;
}

std::vector<int> GraphTimer::Impl::calls_for_all(const Problem& p, const std::vector<Tactic>& candidates,
                                                 const MeasureOptions& o, std::vector<Timing>& timings) {
  std::vector<int> calls(candidates.size(), 0);
  std::vector<size_t> probed;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (o.calls_per_replay > 0) {
      calls[i] = o.calls_per_replay;
      continue;
    }
    auto it = calls_memo.find(candidates[i].name());
    if (it != calls_memo.end())
      calls[i] = it->second;
    else
      probed.push_back(i);
  }
  if (probed.empty()) return calls;
  ensure_events(2 * probed.size());
  std::vector<char> queued(probed.size(), 0);
  for (size_t j = 0; j < probed.size(); ++j) {
    const size_t i = probed[j];
    try {
      run_call(p, candidates[i], 0, 0, out.get());
      FP8GEMM_CUDA_CHECK(cudaEventRecord(events[2 * j], stream));
      run_call(p, candidates[i], 1, 0, out.get());
      FP8GEMM_CUDA_CHECK(cudaEventRecord(events[2 * j + 1], stream));
      queued[j] = 1;
    } catch (const std::exception& e) {
      cudaGetLastError();
      timings[i].error = e.what();
    }
  }
  // A kernel that faults leaves a sticky error: nothing after it can be trusted, so this throws.
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (size_t j = 0; j < probed.size(); ++j) {
    if (!queued[j]) continue;
    const size_t i = probed[j];
    calls[i] = calls_per_replay_for(1000.0 * elapsed_ms(events[2 * j], events[2 * j + 1]), options);
    calls_memo[candidates[i].name()] = calls[i];
  }
  return calls;
}

GraphExec GraphTimer::Impl::capture(const Problem& p, const Tactic& t, int calls, int first_copy) {
  cudaGraph_t graph = nullptr;
  FP8GEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < calls; ++i) run_call(p, t, i, first_copy, out.get());
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    throw;
  }
  cudaError_t err = cudaStreamEndCapture(stream, &graph);
  if (err != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    FP8GEMM_FAIL(kCuda, "capturing ", t.name(), " failed: ", cudaGetErrorString(err));
  }
  GraphExec g;
  err = cudaGraphInstantiate(&g.exec, graph, 0);
  cudaGraphDestroy(graph);
  if (err != cudaSuccess) {
    g.exec = nullptr;
    cudaGetLastError();
    FP8GEMM_FAIL(kCuda, "instantiating the graph of ", t.name(), " failed: ", cudaGetErrorString(err));
  }
  FP8GEMM_CUDA_CHECK(cudaGraphUpload(g.exec, stream));
  g.calls = calls;
  g.flush_before_replay = double(calls) * double(copy_bytes) < 2.0 * double(l2_bytes);
  return g;
}

void GraphTimer::Impl::ensure_events(std::vector<cudaEvent_t>& pool, size_t n) {
  while (pool.size() < n) {
    cudaEvent_t e;
    FP8GEMM_CUDA_CHECK(cudaEventCreate(&e));
    pool.push_back(e);
  }
}

bool GraphTimer::Impl::launch(const GraphExec& g, Timing& t, cudaEvent_t start, cudaEvent_t end) {
  if (g.flush_before_replay) {
    ensure_size(flush, 2 * l2_bytes);
    measure_kernels::read_through(flush.get(), flush.bytes(), stream);
  }
  if (start) FP8GEMM_CUDA_CHECK(cudaEventRecord(start, stream));
  const cudaError_t err = cudaGraphLaunch(g.exec, stream);
  if (err != cudaSuccess) {
    cudaGetLastError();
    t.ok = false;
    t.error = detail::cat("launching the graph of ", t.tactic.name(), " failed: ", cudaGetErrorString(err));
    return false;
  }
  if (end) FP8GEMM_CUDA_CHECK(cudaEventRecord(end, stream));
  return true;
}

}  // namespace fp8gemm
