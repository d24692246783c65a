// Shared helpers for GPU tests: skip visibly without a GPU, one Context for the binary.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "fp8gemm/check.h"
#include "core/device_buffer.h"
#include "fp8gemm/verify.h"
#include "fp8gemm/fp8gemm.h"

namespace fp8gemm::testing {

// Returns true (after GTEST_SKIP's message is recorded) when there is no usable GPU.
inline bool no_gpu() { return device_count() == 0; }

#define FP8GEMM_SKIP_WITHOUT_GPU()                                                \
  do {                                                                            \
    if (::fp8gemm::testing::no_gpu())                                             \
      GTEST_SKIP() << "no GPU: " << ::fp8gemm::no_device_reason();                \
  } while (0)

inline Context& test_context() { return default_context(); }

// Any types and batch.
inline Problem make_problem(int64_t batch, int64_t m, int64_t n, int64_t k, DType a, DType b, DType out) {
  Problem p;
  p.batch = batch, p.m = m, p.n = n, p.k = k;
  p.a_type = a, p.b_type = b, p.out_type = out;
  return p;
}

// The input and output types of a parameterized numerics test, and its name ("e4m3_e5m2_bf16").
struct TypeCase { DType a, b, out; };
inline std::string type_case_name(const ::testing::TestParamInfo<TypeCase>& info) {
  return std::string(to_string(info.param.a)) + "_" + to_string(info.param.b) + "_" + to_string(info.param.out);
}

// Checks every tactic `backend` lists for `p` against the float64 reference (fresh inputs per
// tactic, seeds counting up from `seed`); counts each tactic's runs and the failures.
inline void verify_listed_tactics(Context& ctx, Backend& backend, const Problem& p, uint64_t& seed,
                                  std::map<std::string, int>& runs, int& failures) {
  for (const Tactic& t : backend.tactics(p)) {
    ++runs[t.config];
    CheckResult r;
    try {
      r = verify_tactic(ctx, p, t, seed++);
    } catch (const std::exception& e) {
      ADD_FAILURE() << t.name() << " on " << p << " threw: " << e.what();
      ++failures;
      continue;
    }
    if (!r.ok) ++failures;
    EXPECT_TRUE(r.ok) << t.name() << " on " << p << ": " << r.to_string();
  }
}

// e4m3 x e4m3 -> bf16, batch 1.
inline Problem problem(int64_t m, int64_t n, int64_t k) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

// Runs `t` captured in a CUDA graph (run() must neither allocate nor synchronize) and checks
// the replayed output against the reference.
inline void check_in_graph(Context& ctx, const Problem& p, const Tactic& t) {
  const HostInputs in = random_inputs(p, 7);
  const Reference ref = reference_gemm(p, in);
  const size_t out_elems = size_t(p.batch * p.m * p.n);
  DeviceBuffer a(in.a.size()), b(in.b.size()), scales(8 * sizeof(float)), out(out_elems * 2);
  a.upload(in.a.data(), in.a.size());
  b.upload(in.b.data(), in.b.size());
  const float s[8] = {in.a_scale, 0, 0, 0, in.b_scale, 0, 0, 0};  // 16-byte aligned scalars
  scales.upload(s, sizeof s);
  cudaStream_t stream;
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ctx.workspace(stream);  // the Context allocates a stream's workspace on first use: not in capture
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), stream));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  GemmArgs args{a.get(), b.get(), scales.as<float>(), scales.as<float>() + 4, out.get()};
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  FP8GEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  try {
    ctx.run_tactic(p, t, args, stream);
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
    throw;
  }
  FP8GEMM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  FP8GEMM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) FP8GEMM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  std::vector<uint16_t> host(out_elems);
  out.download(host.data(), out.bytes());
  const CheckResult r = check_output(p, host, ref, Tolerance::for_problem(p, tactic_uses_fast_accum(t)));
  EXPECT_TRUE(r.ok) << t.name() << " replayed from a graph on " << p << ": " << r.to_string();
}

}  // namespace fp8gemm::testing
