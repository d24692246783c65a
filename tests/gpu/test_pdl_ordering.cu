// PDL ordering. Kernels launched with programmatic dependent launch (every CUTLASS tactic,
// small_m's PDL tactics) may start before the previous kernel on the stream has finished.
// What that kernel writes -- the activations, and the activation scale when it quantizes them
// dynamically -- must still be what the GEMM reads. The writer below lets its dependents launch
// at once, then waits ~30 us before it writes A and a_scale: a GEMM that read either before its
// griddepcontrol.wait computes with the stale values, which differ by O(1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/device_buffer.h"
#include "core/fp8_codec.h"
#include "gpu_test_util.h"

namespace fp8gemm {
namespace {

__global__ void late_writer(uint8_t* a, const uint8_t* a_final, size_t n, float* a_scale, float scale,
                            unsigned long long delay_ns) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");  // dependents may start now
#endif
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < delay_ns);
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) a[i] = a_final[i];
  if (threadIdx.x == 0) *a_scale = scale;
}

std::vector<uint8_t> random_fp8(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = fp8_encode(dist(rng), DType::kE4M3);
  return v;
}

std::vector<float> download_bf16(const DeviceBuffer& buf, size_t n) {
  std::vector<uint16_t> bits(n);
  buf.download(bits.data(), n * sizeof(uint16_t));
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = bf16_to_float(bits[i]);
  return out;
}

// max |x - ref| / max |ref| (NaN -> infinity).
double relative_diff(const std::vector<float>& x, const std::vector<float>& ref) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = std::fabs(double(x[i]) - double(ref[i]));
    diff = std::isnan(d) ? INFINITY : std::max(diff, d);
    scale = std::max(scale, std::fabs(double(ref[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

TEST(PdlOrdering, ScalesAndActivationsWrittenByThePreviousKernelAreSeen) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  Context& ctx = testing::test_context();
  const Problem p = testing::problem(16, 1024, 2048);
  const size_t a_n = size_t(p.m * p.k), b_n = size_t(p.n * p.k), out_n = size_t(p.m * p.n);
  const std::vector<uint8_t> a_stale = random_fp8(a_n, 1), a_final = random_fp8(a_n, 2), b = random_fp8(b_n, 3);
  const float stale_scale = 1.f, final_scale = 0.5f, one = 1.f;

  DeviceBuffer d_a(a_n), d_a_final(a_n), d_b(b_n), d_out(out_n * 2), d_scales(2 * sizeof(float));
  d_a_final.upload(a_final.data(), a_n);
  d_b.upload(b.data(), b_n);
  float* a_scale = d_scales.as<float>();
  float* b_scale = a_scale + 1;
  FP8GEMM_CUDA_CHECK(cudaMemcpy(b_scale, &one, sizeof(float), cudaMemcpyHostToDevice));
  const GemmArgs args{d_a.get(), d_b.get(), a_scale, b_scale, d_out.get()};
  cudaStream_t stream;
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  int tested = 0;
  for (const std::string backend : {"cutlass", "small_m"}) {
    Backend* be = ctx.backend(backend);
    if (!be || !be->available().ok) continue;
    for (const Tactic& t : be->tactics(p)) {
      // Reference: the same tactic on the final inputs, with nothing running before it.
      d_a.upload(a_final.data(), a_n);
      FP8GEMM_CUDA_CHECK(cudaMemcpy(a_scale, &final_scale, sizeof(float), cudaMemcpyHostToDevice));
      FP8GEMM_CUDA_CHECK(cudaMemset(d_out.get(), 0xff, out_n * 2));  // NaN
      ctx.run_tactic(p, t, args, stream);
      FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
      const std::vector<float> ref = download_bf16(d_out, out_n);

      // The same call behind a writer that publishes A and a_scale ~30 us after letting it start.
      d_a.upload(a_stale.data(), a_n);
      FP8GEMM_CUDA_CHECK(cudaMemcpy(a_scale, &stale_scale, sizeof(float), cudaMemcpyHostToDevice));
      FP8GEMM_CUDA_CHECK(cudaMemset(d_out.get(), 0xff, out_n * 2));
      late_writer<<<1, 256, 0, stream>>>(d_a.as<uint8_t>(), d_a_final.as<uint8_t>(), a_n, a_scale, final_scale,
                                         30000ull);
      FP8GEMM_CUDA_CHECK(cudaGetLastError());
      ctx.run_tactic(p, t, args, stream);
      FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
      const double diff = relative_diff(download_bf16(d_out, out_n), ref);
      // Same kernel, same final inputs: only a split-K/stream-K reduction order may differ
      // (< 1 bf16 ulp of the largest element, 0.4%); stale A or a 2x scale is off by O(1).
      EXPECT_LE(diff, 0.01) << t.name() << " read a value the previous kernel had not written yet";
      ++tested;
    }
  }
  FP8GEMM_CUDA_CHECK(cudaStreamDestroy(stream));
  if (tested == 0) GTEST_SKIP() << "neither the cutlass nor the small_m backend is built and available";
  std::printf("[pdl] %d tactics checked\n", tested);
}

}  // namespace
}  // namespace fp8gemm
