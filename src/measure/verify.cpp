#include "measure/verify.h"

#include <vector>

#include "core/device_buffer.h"

namespace fp8gemm {

bool tactic_uses_fast_accum(const Tactic& t) {
  const std::string& c = t.config;
  return c.find("fast_accum=0") == std::string::npos && c.find("acc32") == std::string::npos;
}

CheckResult verify_tactic(Context& ctx, const Problem& p, const Tactic& t, uint64_t seed, cudaStream_t stream) {
  const HostInputs in = random_inputs(p, seed);
  const Reference ref = reference_gemm(p, in);
  const size_t out_elems = size_t(p.batch * p.m * p.n);
  DeviceBuffer a(in.a.size()), b(in.b.size()), scales(2 * sizeof(float)), out(out_elems * 2);
  a.upload(in.a.data(), in.a.size());
  b.upload(in.b.data(), in.b.size());
  const float s[2] = {in.a_scale, in.b_scale};
  scales.upload(s, sizeof s);
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), stream));
  GemmArgs args{a.get(), b.get(), scales.as<float>(), scales.as<float>() + 1, out.get()};
  ctx.run_tactic(p, t, args, stream);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<uint16_t> host(out_elems);
  out.download(host.data(), out.bytes());
  return check_output(p, host, ref, Tolerance::for_problem(p, tactic_uses_fast_accum(t)));
}

}  // namespace fp8gemm
