// The linear layer (include/fp8gemm/linear.h) on the GPU: the quantization kernels bit for bit
// against the host rule (every bf16 and fp16 value), the dynamic scale, the layer's output against
// the float64 reference on the quantized activations for every scale mode, dtype, bias and backend,
// every bias-capable tactic, graph capture, and the errors raised before any GPU work.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/device_buffer.h"
#include "core/fp8_codec.h"
#include "core/quantize_rule.h"
#include "fp8gemm/quantize.h"
#include "fp8gemm/verify.h"
#include "gpu_test_util.h"
#include "quantize/quantize.h"

namespace fp8gemm {
namespace {

using testing::test_context;

uint16_t encode16(float v, DType t) { return t == DType::kBF16 ? float_to_bf16(v) : float_to_fp16(v); }

bool same_code(uint8_t got, uint8_t want) {
  const bool got_nan = std::isnan(fp8_decode(got, DType::kE4M3)), want_nan = std::isnan(fp8_decode(want, DType::kE4M3));
  return got_nan || want_nan ? got_nan && want_nan : got == want;
}

// Every 16-bit pattern of `t` (NaN and infinities included) through the static and dynamic kernels.
void check_every_value(DType t) {
  const int64_t count = 1 << 16;
  std::vector<uint16_t> x(count);
  for (int64_t i = 0; i < count; ++i) x[size_t(i)] = uint16_t(i);
  DeviceBuffer dx(count * 2), dq(count), ds(16);
  dx.upload(x.data(), dx.bytes());
  const int sms = test_context().device().sm_count;
  for (float scale : {1.0f, 3.0f, 0.0625f, 1e-3f, 7.0e4f, 1e-30f, 1e30f}) {  // the last two divide
    ds.upload(&scale, sizeof scale);
    FP8GEMM_CUDA_CHECK(cudaMemset(dq.get(), 0x55, dq.bytes()));
    quantize::launch_static(dx.get(), t, count, ds.as<float>(), dq.get(), sms, nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<uint8_t> got(count), want(count);
    dq.download(got.data(), got.size());
    quantize_reference(x.data(), t, size_t(count), scale, want.data());
    size_t bad = 0;
    for (int64_t i = 0; i < count; ++i) bad += !same_code(got[size_t(i)], want[size_t(i)]);
    EXPECT_EQ(bad, 0u) << to_string(t) << " scale " << scale;
  }
}

TEST(Quantize, StaticKernelMatchesTheRuleOnEveryBf16AndFp16Value) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  check_every_value(DType::kBF16);
  check_every_value(DType::kFP16);
}

// Random activations over many binades (and a few exact ties) of `count` values.
std::vector<uint16_t> random_x(size_t count, DType t, uint64_t seed, float spread = 4.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> binade(-6, 6);
  std::vector<uint16_t> x(count);
  for (auto& v : x) v = encode16(spread * normal(rng) * std::ldexp(1.0f, binade(rng)), t);
  return x;
}

TEST(Quantize, DynamicPathsMatchTheRule) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  const int sms = test_context().device().sm_count;
  // One block of 1, 2 and 4 vectors a thread, the two-kernel path; an all-zero x (the smallest
  // scale).
  for (int64_t count : {int64_t(4096), int64_t(3 * 4096), int64_t(8 * 4096), int64_t(16 * 4096), int64_t(300 * 4096),
                        int64_t(3 * 1024 * 1024)}) {
    for (DType t : {DType::kBF16, DType::kFP16}) {
      const std::vector<uint16_t> x = random_x(size_t(count), t, uint64_t(count) + int(t));
      DeviceBuffer dx(x.size() * 2), dq(x.size()), ds(16),
          scratch(std::max<size_t>(16, quantize_scratch_bytes(count, ActivationScale::kDynamic, sms)));
      dx.upload(x.data(), dx.bytes());
      FP8GEMM_CUDA_CHECK(cudaMemset(dq.get(), 0x55, dq.bytes()));
      FP8GEMM_CUDA_CHECK(cudaMemset(ds.get(), 0xFF, ds.bytes()));
      // Through the public entry point (fp8gemm/quantize.h), which the PyTorch op calls.
      QuantizeArgs q;
      q.x = dx.get();
      q.x_type = t;
      q.count = count;
      q.scale = ds.as<float>();
      q.out = dq.get();
      q.scratch = scratch.get();
      q.scale_kind = ActivationScale::kDynamic;
      quantize_fp8(q, nullptr, &test_context());
      FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      float scale = 0;
      ds.download(&scale, sizeof scale);
      const float want_scale = dynamic_scale_reference(x.data(), t, x.size());
      ASSERT_EQ(scale, want_scale) << count << " " << to_string(t);
      std::vector<uint8_t> got(x.size()), want(x.size());
      dq.download(got.data(), got.size());
      quantize_reference(x.data(), t, x.size(), want_scale, want.data());
      EXPECT_TRUE(got == want) << count << " " << to_string(t) << " plan one_kernel="
                               << quantize::dynamic_plan(count, sms).one_kernel;
    }
  }
  DeviceBuffer zeros(8192 * 2), dq(8192), ds(16);
  FP8GEMM_CUDA_CHECK(cudaMemset(zeros.get(), 0, zeros.bytes()));
  quantize::launch_dynamic(zeros.get(), DType::kBF16, 8192, ds.as<float>(), dq.get(), nullptr, sms, nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  float scale = 0;
  ds.download(&scale, sizeof scale);
  EXPECT_EQ(scale, kMinAmax / kE4M3Max);
}

// One layer call's buffers, inputs and references.
struct Layer {
  LinearArgs args;
  std::vector<uint16_t> x, bias;
  std::vector<uint8_t> w;
  float x_scale = 0, w_scale = 0;
  DeviceBuffer dx, dw, dbias, dout, dscratch, dscales;

  Layer(int64_t m, int64_t n, int64_t k, DType x_type, DType out_type, ActivationScale mode, bool with_bias,
        uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    x = random_x(size_t(m * k), x_type, seed);
    w.resize(size_t(n * k));
    for (auto& v : w) v = fp8_encode(normal(rng), DType::kE4M3);
    w_scale = 0.75f;
    // Static: a calibrated scale a little under the dynamic one, so that some values saturate.
    x_scale = m > 0 ? 0.8f * dynamic_scale_reference(x.data(), x_type, x.size()) : 1.0f;
    args.m = m, args.n = n, args.k = k;
    args.x_type = x_type, args.out_type = out_type, args.scale = mode;
    dx = DeviceBuffer(std::max<size_t>(16, x.size() * 2));
    dw = DeviceBuffer(w.size());
    dout = DeviceBuffer(std::max<size_t>(16, size_t(m * n) * 2));
    dscratch = DeviceBuffer(std::max<size_t>(16, linear_scratch_bytes(m, k, mode, test_context().device().sm_count)));
    dscales = DeviceBuffer(64);
    if (!x.empty()) dx.upload(x.data(), x.size() * 2);
    dw.upload(w.data(), w.size());
    const float scales[8] = {w_scale, 0, 0, 0, x_scale, 0, 0, 0};
    dscales.upload(scales, sizeof scales);
    if (with_bias) {
      std::normal_distribution<float> b(0.0f, float(std::sqrt(double(k))));
      for (int64_t i = 0; i < n; ++i) bias.push_back(encode16(b(rng), out_type));
      dbias = DeviceBuffer(bias.size() * 2);
      dbias.upload(bias.data(), dbias.bytes());
    }
    args.x = dx.get(), args.w = dw.get(), args.out = dout.get(), args.scratch = dscratch.get();
    args.w_scale = dscales.as<float>();
    args.x_scale = dscales.as<float>() + 4;
    args.bias = with_bias ? dbias.get() : nullptr;
    poison();
  }

  // NaN bytes in the output and the quantized activations; a NaN dynamic scale.
  void poison() {
    FP8GEMM_CUDA_CHECK(cudaMemset(dout.get(), 0xFF, dout.bytes()));
    FP8GEMM_CUDA_CHECK(cudaMemset(dscratch.get(), 0xFF, dscratch.bytes()));
    if (args.scale == ActivationScale::kDynamic) FP8GEMM_CUDA_CHECK(cudaMemset(args.x_scale, 0xFF, 4));
  }

  float scale_used() const {
    return args.scale == ActivationScale::kStatic ? x_scale : dynamic_scale_reference(x.data(), args.x_type, x.size());
  }

  // The device's quantized activations and scale bit for bit, then the output against the float64
  // reference of the GEMM on them (and the bias) under `tactic`'s accumulation.
  void check(const Tactic& tactic, const std::string& what) const {
    const float scale = scale_used();
    float got_scale = 0;
    FP8GEMM_CUDA_CHECK(cudaMemcpy(&got_scale, args.x_scale, 4, cudaMemcpyDeviceToHost));
    ASSERT_EQ(got_scale, scale) << what;
    std::vector<uint8_t> q(x.size()), want(x.size());
    dscratch.download(q.data(), q.size());
    quantize_reference(x.data(), args.x_type, x.size(), scale, want.data());
    ASSERT_TRUE(q == want) << what << ": the quantized activations differ from the rule";
    Problem p;
    p.m = args.m, p.n = args.n, p.k = args.k, p.out_type = args.out_type, p.bias = args.bias != nullptr;
    HostInputs in;
    in.a = q, in.b = w, in.a_scale = scale, in.b_scale = w_scale, in.bias = bias;
    const Reference ref = reference_gemm(p, in);
    std::vector<uint16_t> out(size_t(args.m * args.n));
    dout.download(out.data(), out.size() * 2);
    const CheckResult r = check_output(p, out, ref, Tolerance::for_problem(p, tactic_uses_fast_accum(tactic)));
    EXPECT_TRUE(r.ok) << what << " (" << tactic.name() << "): " << r.to_string();
  }
};

struct LayerCase {
  int64_t m, n, k;
  DType x_type, out_type;
  ActivationScale mode;
  bool bias;
  const char* backend;
};

std::string case_name(const ::testing::TestParamInfo<LayerCase>& info) {
  const LayerCase& c = info.param;
  return "m" + std::to_string(c.m) + "_n" + std::to_string(c.n) + "_k" + std::to_string(c.k) + "_" +
         to_string(c.x_type) + "_" + to_string(c.out_type) + "_" + to_string(c.mode) + (c.bias ? "_bias_" : "_") +
         c.backend;
}

class LinearLayer : public ::testing::TestWithParam<LayerCase> {};

TEST_P(LinearLayer, MatchesTheRuleAndTheReference) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  const LayerCase& c = GetParam();
  Context& ctx = test_context();
  Layer l(c.m, c.n, c.k, c.x_type, c.out_type, c.mode, c.bias, uint64_t(c.m * 131 + c.k));
  const Problem p = validate(l.args, ctx.device());
  const Tactic t = ctx.choose(p, c.backend);
  linear_fp8(l.args, nullptr, c.backend, &ctx);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  l.check(t, case_name(::testing::TestParamInfo<LayerCase>(c, 0)));
}

constexpr DType kBF = DType::kBF16, kFP = DType::kFP16;
constexpr ActivationScale kS = ActivationScale::kStatic, kD = ActivationScale::kDynamic;

INSTANTIATE_TEST_SUITE_P(
    Layers, LinearLayer,
    ::testing::Values(
        // decode on small_m, bias in its epilogue; the dynamic scale's one-kernel path (1 and 2 blocks)
        LayerCase{1, 1024, 4096, kBF, kBF, kS, false, "auto"}, LayerCase{1, 1024, 4096, kBF, kBF, kD, true, "auto"},
        LayerCase{3, 512, 8192, kFP, kFP, kD, true, "small_m"}, LayerCase{16, 1024, 8192, kBF, kBF, kD, false, "small_m"},
        LayerCase{16, 2048, 512, kBF, kFP, kS, true, "small_m"}, LayerCase{32, 256, 1024, kFP, kBF, kS, false, "auto"},
        // cuBLASLt with and without its bias epilogue; CUTLASS without a bias
        LayerCase{40, 768, 1536, kBF, kBF, kS, true, "cublaslt"}, LayerCase{40, 768, 1536, kBF, kBF, kD, false, "cutlass"},
        LayerCase{300, 1024, 4096, kBF, kBF, kD, true, "auto"},  // the dynamic scale's two-kernel path
        LayerCase{300, 1024, 4096, kFP, kFP, kS, false, "cutlass"}, LayerCase{1500, 512, 2048, kBF, kBF, kD, false, "auto"},
        LayerCase{1500, 512, 2048, kBF, kBF, kS, true, "cublaslt"}),
    case_name);

// Every tactic of the backends with a bias epilogue adds it (the layer's GEMM with a bias), on one
// set of inputs per problem (the float64 reference is the expensive part).
TEST(LinearBias, EveryBiasCapableTacticAddsIt) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = test_context();
  uint64_t seed = 11;
  std::set<std::string> ran;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1024, 2048}, {13, 2048, 1024}, {96, 1024, 1024}}) {
    for (DType out : {kBF, kFP}) {
      Problem p = testing::problem(m, n, k);
      p.out_type = out;
      p.bias = true;
      VerifyCase vcase(p, seed++);
      for (Backend* b : ctx.backends()) {
        if (!b->available()) continue;
        const std::vector<Tactic> tactics = b->tactics(p);
        const bool has_epilogue = b->name() == "cublaslt" || b->name() == "small_m";
        if (!has_epilogue) {
          EXPECT_TRUE(tactics.empty()) << b->name() << " lists tactics for a bias it cannot add";
          continue;
        }
        for (const Tactic& t : tactics) {
          const CheckResult r = vcase.run(ctx, t);
          EXPECT_TRUE(r.ok) << t.name() << " on " << p << ": " << r.to_string();
          ran.insert(t.name());
        }
      }
    }
  }
  EXPECT_GT(ran.size(), 20u);
}

// Captured once, replayed on new activations: the dynamic scale is computed again each replay.
TEST(LinearLayerGraph, ReplaysOnNewActivations) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = test_context();
  for (ActivationScale mode : {kS, kD}) {
    Layer l(8, 1024, 4096, kBF, kBF, mode, true, 5);
    cudaStream_t s;
    FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    linear_fp8(l.args, s, "auto", &ctx);  // first call: the stream's workspace, the choice
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(s));
    const Tactic t = ctx.choose(validate(l.args, ctx.device()), "auto", s);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    FP8GEMM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    linear_fp8(l.args, s, "auto", &ctx);
    FP8GEMM_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    FP8GEMM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 2; ++replay) {
      l.x = random_x(l.x.size(), kBF, 100 + replay, replay ? 50.0f : 1.0f);
      l.dx.upload(l.x.data(), l.x.size() * 2);
      l.poison();
      FP8GEMM_CUDA_CHECK(cudaGraphLaunch(exec, s));
      FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(s));
      l.check(t, std::string("graph replay ") + std::to_string(replay) + " " + to_string(mode));
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    ctx.release_stream(s);
    cudaStreamDestroy(s);
  }
}

TEST(LinearLayerErrors, RaisedBeforeAnyGpuWork) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = test_context();
  Layer l(16, 1024, 2048, kBF, kBF, kD, true, 3);
  try {
    linear_fp8(l.args, nullptr, "cutlass", &ctx);  // no bias epilogue
    FAIL() << "cutlass ran a bias";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("bias"), std::string::npos) << e.what();
  }
  l.args.x = static_cast<const char*>(l.args.x) + 8;
  EXPECT_THROW(linear_fp8(l.args, nullptr, "auto", &ctx), Error);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> scratch(l.dscratch.bytes());
  l.dscratch.download(scratch.data(), scratch.size());
  for (uint8_t b : scratch) ASSERT_EQ(b, 0xFF) << "the scratch was written by a call that failed";
  uint32_t scale_bits = 0;
  FP8GEMM_CUDA_CHECK(cudaMemcpy(&scale_bits, l.args.x_scale, 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(scale_bits, 0xFFFFFFFFu);
}

TEST(LinearLayerErrors, AnEmptyCallWritesTheDynamicScaleOnly) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = test_context();
  Layer l(0, 1024, 2048, kBF, kBF, kD, false, 3);
  linear_fp8(l.args, nullptr, "auto", &ctx);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  float scale = 0;
  FP8GEMM_CUDA_CHECK(cudaMemcpy(&scale, l.args.x_scale, 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(scale, kMinAmax / kE4M3Max);
}

}  // namespace
}  // namespace fp8gemm
