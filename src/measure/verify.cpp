#include "fp8gemm/verify.h"

#include <vector>

#include "core/device_buffer.h"
#include "fp8gemm/fp8gemm.h"

namespace fp8gemm {

bool tactic_uses_fast_accum(const Tactic& t) {
  const std::string& c = t.config;
  return c.find("fast_accum=0") == std::string::npos && c.find("acc32") == std::string::npos;
}

constexpr size_t kScaleStride = 16;  // bytes between a_scale and b_scale

struct VerifyCase::Buffers {
  DeviceBuffer a, b, scales, out, bias;
};

VerifyCase::VerifyCase(const Problem& p, uint64_t seed) : problem_(p), buffers_(std::make_unique<Buffers>()) {
  const HostInputs in = random_inputs(p, seed);
  reference_ = reference_gemm(p, in);
  Buffers& d = *buffers_;
  d.a = DeviceBuffer(in.a.size());
  d.b = DeviceBuffer(in.b.size());
  d.scales = DeviceBuffer(kScaleStride + sizeof(float));
  d.out = DeviceBuffer(size_t(p.batch * p.m * p.n) * dtype_bytes(p.out_type));
  d.a.upload(in.a.data(), in.a.size());
  d.b.upload(in.b.data(), in.b.size());
  // Separately allocated scalars (as torch passes them) are 16-byte aligned; so are these.
  float s[kScaleStride / sizeof(float) + 1] = {};
  s[0] = in.a_scale;
  s[kScaleStride / sizeof(float)] = in.b_scale;
  d.scales.upload(s, sizeof s);
  if (p.bias) {
    d.bias = DeviceBuffer(in.bias.size() * sizeof(uint16_t));
    d.bias.upload(in.bias.data(), d.bias.bytes());
  }
}

VerifyCase::~VerifyCase() = default;

CheckResult VerifyCase::run(Context& ctx, const Tactic& t, cudaStream_t stream) {
  Buffers& d = *buffers_;
  // All-ones bytes are NaN in bf16 and fp16: an element the kernel does not write fails.
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(d.out.get(), 0xFF, d.out.bytes(), stream));
  GemmArgs args{d.a.get(), d.b.get(), d.scales.as<float>(), d.scales.as<float>() + kScaleStride / sizeof(float),
                d.out.get(), d.bias.get()};
  ctx.run_tactic(problem_, t, args, stream);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<uint16_t> host(d.out.bytes() / 2);
  d.out.download(host.data(), d.out.bytes());
  return check_output(problem_, host, reference_, Tolerance::for_problem(problem_, tactic_uses_fast_accum(t)));
}

CheckResult verify_tactic(Context& ctx, const Problem& p, const Tactic& t, uint64_t seed, cudaStream_t stream) {
  return VerifyCase(p, seed).run(ctx, t, stream);
}

}  // namespace fp8gemm
