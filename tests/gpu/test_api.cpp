// The public bmm_fp8 call: validation on real pointers, empty calls, CUDA-graph capture and
// replay, and concurrent calls from several threads on several streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "core/device_buffer.h"
#include "core/fp8_codec.h"
#include "fp8gemm/verify.h"
#include "gpu_test_util.h"

namespace fp8gemm {
namespace {

// A problem's device buffers filled from random_inputs, with the reference to compare against.
struct Fixture {
  Problem p;
  HostInputs in;
  Reference ref;
  DeviceBuffer a, b, scales, out;

  Fixture(int64_t batch, int64_t m, int64_t n, int64_t k, uint64_t seed) {
    p.batch = batch, p.m = m, p.n = n, p.k = k;
    in = random_inputs(p, seed);
    ref = reference_gemm(p, in);
    a = DeviceBuffer(in.a.size());
    b = DeviceBuffer(in.b.size());
    scales = DeviceBuffer(32);
    out = DeviceBuffer(size_t(batch * m * n) * 2);
    a.upload(in.a.data(), in.a.size());
    b.upload(in.b.data(), in.b.size());
    const float s[8] = {in.a_scale, 0, 0, 0, in.b_scale, 0, 0, 0};  // 16 bytes apart
    scales.upload(s, sizeof s);
    poison();
  }
  void poison() { FP8GEMM_CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes())); }
  BmmFp8Args args() const {
    BmmFp8Args x;
    x.a = a.get(), x.b = b.get(), x.a_scale = scales.as<float>(), x.b_scale = scales.as<float>() + 4;
    x.out = out.get(), x.batch = p.batch, x.m = p.m, x.n = p.n, x.k = p.k;
    return x;
  }
  CheckResult check() const {
    std::vector<uint16_t> host(out.bytes() / 2);
    out.download(host.data(), out.bytes());
    return check_output(p, host, ref, Tolerance::for_problem(p, true));
  }
};

// Captures `enqueue` on `s` (global mode), then replays the graph three times, checking f's
// poisoned-then-written output after each replay.
template <class Enqueue>
void capture_and_replay(Fixture& f, cudaStream_t s, Enqueue enqueue) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  FP8GEMM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  enqueue();
  FP8GEMM_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  FP8GEMM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    f.poison();
    FP8GEMM_CUDA_CHECK(cudaGraphLaunch(exec, s));
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(s));
    const CheckResult r = f.check();
    EXPECT_TRUE(r.ok) << "replay " << replay << ": " << r.to_string();
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

void expect_context_clean() {
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(Api, AutoAndEveryBackendSpelling) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Fixture f(2, 17, 512, 1024, 1);
  for (const char* backend : {"auto", "cublas", "cublaslt", "CUBLASLT"}) {
    f.poison();
    bmm_fp8(f.args(), nullptr, backend);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(f.check().ok) << backend << ": " << f.check().to_string();
  }
  expect_context_clean();
}

TEST(Api, RealPointerErrorsBeforeAnyGpuWork) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Fixture f(1, 16, 256, 256, 2);
  std::vector<uint8_t> host(1 << 16);
  auto expect_error = [&](BmmFp8Args x, const char* part) {
    try {
      bmm_fp8(x);
      ADD_FAILURE() << "no error for " << part;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  BmmFp8Args x = f.args();
  x.a = host.data();
  expect_error(x, "a points to unregistered host memory");
  x = f.args();
  x.out = const_cast<void*>(f.a.get());
  expect_error(x, "out overlaps a");
  x = f.args();
  x.k = 250;
  expect_error(x, "k must be a multiple of 16");
  try {
    bmm_fp8(f.args(), nullptr, "no_such_backend");
    ADD_FAILURE() << "unknown backend accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("backend 'no_such_backend' is unknown"), std::string::npos) << e.what();
  }
  try {
    bmm_fp8(f.args(), nullptr, "cublaslt:algo=99999,tile=undefined,stages=undefined,splitk=1,red=0,swizzle=0,custom=0,inner=0,cluster=auto,fast_accum=1");
    ADD_FAILURE() << "bogus tactic accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
  }
  expect_context_clean();
  // The poisoned output was never touched by any failed call.
  std::vector<uint16_t> out(f.out.bytes() / 2);
  f.out.download(out.data(), f.out.bytes());
  for (uint16_t v : out) ASSERT_EQ(v, 0xFFFF);
}

TEST(Api, EmptyCallsAreNoOps) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  BmmFp8Args x;
  x.batch = 0, x.m = 16, x.n = 256, x.k = 256;
  EXPECT_NO_THROW(bmm_fp8(x));
  x.batch = 3, x.m = 0;
  EXPECT_NO_THROW(bmm_fp8(x));
  expect_context_clean();
}

TEST(Api, CapturedInCudaGraphAndReplayed) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Fixture f(2, 33, 768, 1536, 3);
  cudaStream_t stream;
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  bmm_fp8(f.args(), stream);  // first use of the stream outside capture
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  f.poison();
  // A second, never-seen stream: its first call (workspace allocation) happens inside capture.
  cudaStream_t fresh;
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&fresh, cudaStreamNonBlocking));
  for (cudaStream_t s : {stream, fresh}) {
    capture_and_replay(f, s, [&] { bmm_fp8(f.args(), s); });
  }
  cudaStreamDestroy(stream);
  cudaStreamDestroy(fresh);
  expect_context_clean();
}

TEST(Api, FourThreadsOnFourStreams) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  constexpr int kThreads = 4;
  std::vector<std::unique_ptr<Fixture>> fx;
  for (int t = 0; t < kThreads; ++t) fx.push_back(std::make_unique<Fixture>(1 + t % 2, 1 + 37 * t, 1024, 2048, 10 + t));
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        cudaStream_t s;
        FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        for (int i = 0; i < 50; ++i) bmm_fp8(fx[size_t(t)]->args(), s);
        FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(s));
        cudaStreamDestroy(s);
      } catch (const std::exception& e) {
        errors[size_t(t)] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(errors[size_t(t)].empty()) << errors[size_t(t)];
    const CheckResult r = fx[size_t(t)]->check();
    EXPECT_TRUE(r.ok) << "thread " << t << ": " << r.to_string();
  }
  expect_context_clean();
}

}  // namespace
}  // namespace fp8gemm

namespace fp8gemm {
namespace {

// cuBLASLt refuses scale pointers that are not 16-byte aligned (NOT_SUPPORTED at launch). The
// problem carries the scale alignment: cuBLASLt says no up front, and `auto` runs another backend.
TEST(Api, MisalignedScalesAreRoutedAwayFromCublasLt) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Fixture f(1, 8, 1024, 2048, 21);
  DeviceBuffer packed(8);  // a_scale and b_scale adjacent: b_scale is only 4-byte aligned
  const float s[2] = {f.in.a_scale, f.in.b_scale};
  packed.upload(s, sizeof s);
  BmmFp8Args x = f.args();
  x.a_scale = packed.as<float>();
  x.b_scale = packed.as<float>() + 1;
  try {
    bmm_fp8(x, nullptr, "cublaslt");
    ADD_FAILURE() << "cuBLASLt accepted a 4-byte aligned scale";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("16-byte aligned a_scale and b_scale"), std::string::npos) << e.what();
  }
  expect_context_clean();
  const Problem p = validate(x, default_context().device());
  EXPECT_EQ(p.scale_alignment, 4);
  bool another_backend_can = false;
  for (Backend* b : default_context().backends())
    if (b->name() != "cublaslt" && b->available()) {
      try {
        b->default_tactic(p);
        another_backend_can = true;
      } catch (const Error&) {
      }
    }
  if (!another_backend_can) GTEST_SKIP() << "no backend other than cuBLASLt is built for this problem";
  f.poison();
  bmm_fp8(x, nullptr, "auto");
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(f.check().ok) << f.check().to_string();
}

}  // namespace
}  // namespace fp8gemm

namespace fp8gemm {
namespace {

size_t free_device_bytes() {
  size_t free = 0, total = 0;
  FP8GEMM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

// Issue 44: a stream's workspace (32 MiB of scratch and the flags) was never freed. It is freed
// by release_stream, never while the stream is being captured, and allocated again on the
// stream's next call.
TEST(Api, ReleaseStreamFreesItsWorkspace) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context ctx;
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  const size_t streams = ctx.stream_workspaces();
  const size_t free_before = free_device_bytes();
  const Workspace ws = ctx.workspace(s);
  ASSERT_NE(ws.ptr, nullptr);
  EXPECT_EQ(ctx.stream_workspaces(), streams + 1);
  const size_t free_with = free_device_bytes();
  EXPECT_GE(free_before, free_with + ctx.options().workspace_bytes);

  EXPECT_TRUE(ctx.release_stream(s));
  EXPECT_EQ(ctx.stream_workspaces(), streams);
  EXPECT_GE(free_device_bytes(), free_with + ctx.options().workspace_bytes);
  EXPECT_FALSE(ctx.release_stream(s)) << "nothing left to release";

  // A call after the release works, on a new workspace.
  Fixture f(1, 64, 4096, 4096, 11);
  const GemmArgs args{f.a.get(), f.b.get(), f.scales.as<float>(), f.scales.as<float>() + 4, f.out.get()};
  ctx.run(f.p, args, s);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_TRUE(f.check().ok);

  // Inside a capture the graph being built may hold the workspace: refused, and the capture
  // goes on unharmed.
  ctx.workspace(s);
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  try {
    ctx.release_stream(s);
    ADD_FAILURE() << "released inside a capture";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
  }
  ctx.run(f.p, args, s);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess) << "the capture was broken";
  cudaGraphDestroy(graph);  // no graph holds the workspace any more: it may go
  EXPECT_TRUE(ctx.release_stream(s));
  cudaStreamDestroy(s);
  expect_context_clean();
}

// A program that makes and destroys streams, releasing each first, does not grow.
TEST(Api, StreamChurnWithReleaseDoesNotGrow) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context ctx;
  Fixture f(1, 16, 4096, 4096, 12);
  const size_t streams = ctx.stream_workspaces();
  size_t free_after_first = 0;
  for (int i = 0; i < 100; ++i) {
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    ctx.workspace(s);
    bmm_fp8(f.args(), s, "auto", &ctx);
    ctx.release_stream(s);
    cudaStreamDestroy(s);
    if (i == 0) free_after_first = free_device_bytes();
  }
  EXPECT_EQ(ctx.stream_workspaces(), streams);
  EXPECT_GE(free_device_bytes() + (8ull << 20), free_after_first);
  EXPECT_TRUE(f.check().ok);
  expect_context_clean();
}

}  // namespace
}  // namespace fp8gemm
