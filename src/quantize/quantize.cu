#include "quantize/quantize.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "fp8gemm/check.h"
#include "core/quantize_rule.h"

namespace fp8gemm::quantize {

namespace {

constexpr int kThreads = 256;  // the static and two-kernel paths' blocks
// The one-kernel path: one block of many threads, each holding 1, 2 or 4 vectors (the
// quantization's arithmetic spread wide) in few enough registers to share an SM with the GEMM
// blocks that PDL keeps resident around it. Clusters of several such blocks (amax through
// distributed shared memory) measured slower than the two kernels: a cluster waits for room on
// several SMs of one GPC at once.
constexpr int kBlockThreads = 1024;
constexpr int kMaxBlockVectors = 4;
constexpr int kMaxPartials = 1024;  // the two-kernel path's partial maxima

// Programmatic dependent launch (sm_90+): the next kernel may launch now; this one waits for the
// previous kernel's writes before reading anything.
__device__ __forceinline__ void pdl_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// |v| of 8 packed bf16/fp16 values as bits: for non-negative values of both types (NaN included,
// above infinity) the unsigned order of the bits is the order of the values, so the largest bits
// are amax, and a NaN wins.
__device__ __forceinline__ unsigned abs_max_bits(const uint4 v) {
  const unsigned words[4] = {v.x, v.y, v.z, v.w};
  unsigned m = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) m = max(m, max(words[i] & 0x7FFFu, (words[i] >> 16) & 0x7FFFu));
  return m;
}

template <class T>
__device__ __forceinline__ float to_float(unsigned short bits);
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(unsigned short bits) {
  return __uint_as_float(unsigned(bits) << 16);
}
template <>
__device__ __forceinline__ float to_float<__half>(unsigned short bits) {
  return __half2float(__ushort_as_half(bits));
}

// core/quantize_rule.cpp scale_of_amax, from amax's bits.
template <class T>
__device__ __forceinline__ float scale_of_bits(unsigned bits) {
  const float amax = to_float<T>((unsigned short)bits);
  const float clamped = isnan(amax) || amax > kMinAmax ? amax : kMinAmax;
  return __fdiv_rn(clamped, kE4M3Max);
}

// x / scale rounded to nearest in float32 wherever that rounding can change the e4m3 result, in
// three operations instead of a division: q = x * RN(1/scale), then one correction by the exact
// remainder (Markstein), which rounds q correctly for a normal scale, remainder and quotient. Below
// 2^-12 the quotient becomes +-0 in e4m3 and at 1024 or above +-448 either way, so q is kept
// there; NaN and infinities pass through. Scales outside [2^-90, 2^90] divide. Checked against the
// division on every bf16 and fp16 value for 12,932 scales (e4m3 codes identical), and by the tests.
struct Divider {
  float s, r;
  bool fast;
  __device__ __forceinline__ explicit Divider(float scale) {
    s = scale;
    r = __frcp_rn(scale);
    fast = scale >= 0x1p-90f && scale <= 0x1p90f;
  }
  __device__ __forceinline__ float operator()(float x) const {
    if (!fast) return __fdiv_rn(x, s);
    float q = x * r;
    const float a = fabsf(q);
    if (a >= 0x1p-12f && a < 1024.0f) q = fmaf(fmaf(-q, s, x), r, q);
    return q;
  }
};

// 8 values / scale in e4m3: the quotient rounded as float32's division rounds it (Divider), then
// the conversion rounds to nearest even and saturates at +-448 (satfinite), NaN staying NaN:
// clamp-then-cast exactly.
template <class T>
__device__ __forceinline__ uint2 quantize8(const uint4 v, const Divider& div) {
  const unsigned words[4] = {v.x, v.y, v.z, v.w};
  unsigned packed[2] = {0, 0};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f;
    f.x = div(to_float<T>((unsigned short)(words[i] & 0xFFFFu)));
    f.y = div(to_float<T>((unsigned short)(words[i] >> 16)));
    const unsigned pair = __nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, __NV_E4M3);
    packed[i / 2] |= pair << (16 * (i % 2));
  }
  return make_uint2(packed[0], packed[1]);
}

// The maximum of `v` over the block (every thread gets it); `shared` holds 32 words.
__device__ __forceinline__ unsigned block_max(unsigned v, unsigned* shared) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = __reduce_max_sync(0xFFFFFFFFu, v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < int(blockDim.x / 32) ? shared[lane] : 0u;
  v = __reduce_max_sync(0xFFFFFFFFu, v);
  return v;
}

template <class T>
__global__ void __launch_bounds__(kThreads) static_kernel(const uint4* x, int64_t vectors, const float* scale,
                                                          uint2* out) {
  pdl_start();
  const Divider div(*scale);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride)
    out[i] = quantize8<T>(x[i], div);
}

// One block: each thread loads its V vectors into registers, the block agrees on amax, and each
// thread quantizes what it holds.
template <class T, int V>
__global__ void __launch_bounds__(kBlockThreads) one_block_kernel(const uint4* x, int64_t vectors, float* scale,
                                                                  uint2* out) {
  __shared__ unsigned warp_max[32];
  pdl_start();
  uint4 held[V];
  unsigned m = 0;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int64_t v = threadIdx.x + int64_t(i) * kBlockThreads;
    held[i] = v < vectors ? x[v] : make_uint4(0, 0, 0, 0);
    m = max(m, abs_max_bits(held[i]));
  }
  const float s = scale_of_bits<T>(block_max(m, warp_max));
  if (threadIdx.x == 0) *scale = s;
  const Divider div(s);
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int64_t v = threadIdx.x + int64_t(i) * kBlockThreads;
    if (v < vectors) out[v] = quantize8<T>(held[i], div);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) partial_max_kernel(const uint4* x, int64_t vectors, unsigned* partials) {
  __shared__ unsigned warp_max[32];
  pdl_start();
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  unsigned m = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride)
    m = max(m, abs_max_bits(x[i]));
  m = block_max(m, warp_max);
  if (threadIdx.x == 0) partials[blockIdx.x] = m;
}

// Every block reduces the partial maxima itself (a few hundred words from L2), so no block waits
// for another; block 0 writes the scale.
template <class T>
__global__ void __launch_bounds__(kThreads) quantize_partials_kernel(const uint4* x, int64_t vectors,
                                                                     const unsigned* partials, int count,
                                                                     float* scale, uint2* out) {
  __shared__ unsigned warp_max[32];
  pdl_start();
  unsigned m = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) m = max(m, partials[i]);
  const float s = scale_of_bits<T>(block_max(m, warp_max));
  if (blockIdx.x == 0 && threadIdx.x == 0) *scale = s;
  const Divider div(s);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride)
    out[i] = quantize8<T>(x[i], div);
}

// A launch with programmatic dependent launch.
template <class Kernel, class... Args>
void launch(Kernel kernel, int blocks, int threads, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr;
  cfg.gridDim = dim3(unsigned(blocks));
  cfg.blockDim = dim3(unsigned(threads));
  cfg.stream = stream;
  cfg.attrs = &attr;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.numAttrs = 1;
  FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

// Blocks of kThreads for a grid-stride pass over `vectors`: enough to cover it once, at most a
// few waves of the device.
int grid_for(int64_t vectors, int sm_count, int per_sm) {
  const int64_t cover = (vectors + kThreads - 1) / kThreads;
  return int(std::max<int64_t>(1, std::min<int64_t>(cover, int64_t(std::max(sm_count, 1)) * per_sm)));
}

}  // namespace

void require_layout(const void* x, DType x_type, int64_t count, const void* out) {
  FP8GEMM_REQUIRE(x_type == DType::kBF16 || x_type == DType::kFP16, kInvalidArgument,
                  "quantize: x_type must be bf16 or fp16, got ", x_type);
  FP8GEMM_REQUIRE(count >= 0 && count % kVector == 0, kInvalidArgument,
                  "quantize: count must be a non-negative multiple of ", kVector, ", got ", count);
  FP8GEMM_REQUIRE(reinterpret_cast<uintptr_t>(x) % 16 == 0, kInvalidArgument, "quantize: x must be 16-byte aligned");
  FP8GEMM_REQUIRE(reinterpret_cast<uintptr_t>(out) % 8 == 0, kInvalidArgument, "quantize: out must be 8-byte aligned");
}

DynamicPlan dynamic_plan(int64_t count, int sm_count) {
  const int64_t vectors = count / kVector;
  for (int v = 1; v <= kMaxBlockVectors; v *= 2)
    if (vectors <= int64_t(kBlockThreads) * v) return {true, 1, v};
  return {false, std::min(grid_for(vectors, sm_count, 2), kMaxPartials), 0};
}

size_t dynamic_scratch_bytes(int64_t count, int sm_count) {
  const DynamicPlan plan = dynamic_plan(count, sm_count);
  return plan.one_kernel ? 0 : size_t(plan.blocks) * sizeof(unsigned);
}

void launch_static(const void* x, DType x_type, int64_t count, const float* scale, void* out, int sm_count,
                   cudaStream_t stream) {
  require_layout(x, x_type, count, out);
  if (count == 0) return;
  const int64_t vectors = count / kVector;
  const auto* xv = static_cast<const uint4*>(x);
  auto* ov = static_cast<uint2*>(out);
  const int blocks = grid_for(vectors, sm_count, 8);
  if (x_type == DType::kBF16) launch(static_kernel<__nv_bfloat16>, blocks, kThreads, stream, xv, vectors, scale, ov);
  else launch(static_kernel<__half>, blocks, kThreads, stream, xv, vectors, scale, ov);
}

void launch_dynamic(const void* x, DType x_type, int64_t count, float* scale, void* out, void* scratch,
                    int sm_count, cudaStream_t stream) {
  require_layout(x, x_type, count, out);
  const int64_t vectors = count / kVector;
  const auto* xv = static_cast<const uint4*>(x);
  auto* ov = static_cast<uint2*>(out);
  const DynamicPlan plan = dynamic_plan(count, sm_count);
  const bool bf16 = x_type == DType::kBF16;
  if (plan.one_kernel) {
    const auto kernel = plan.vectors == 1   ? (bf16 ? one_block_kernel<__nv_bfloat16, 1> : one_block_kernel<__half, 1>)
                        : plan.vectors == 2 ? (bf16 ? one_block_kernel<__nv_bfloat16, 2> : one_block_kernel<__half, 2>)
                                            : (bf16 ? one_block_kernel<__nv_bfloat16, 4> : one_block_kernel<__half, 4>);
    launch(kernel, 1, kBlockThreads, stream, xv, vectors, scale, ov);
    return;
  }
  FP8GEMM_REQUIRE(scratch && reinterpret_cast<uintptr_t>(scratch) % 16 == 0, kInvalidArgument,
                  "quantize: the dynamic path needs ", dynamic_scratch_bytes(count, sm_count),
                  " bytes of 16-byte aligned scratch");
  auto* partials = static_cast<unsigned*>(scratch);
  const int blocks = grid_for(vectors, sm_count, 8);
  if (bf16) {
    launch(partial_max_kernel<__nv_bfloat16>, plan.blocks, kThreads, stream, xv, vectors, partials);
    launch(quantize_partials_kernel<__nv_bfloat16>, blocks, kThreads, stream, xv, vectors,
           static_cast<const unsigned*>(partials), plan.blocks, scale, ov);
  } else {
    launch(partial_max_kernel<__half>, plan.blocks, kThreads, stream, xv, vectors, partials);
    launch(quantize_partials_kernel<__half>, blocks, kThreads, stream, xv, vectors,
           static_cast<const unsigned*>(partials), plan.blocks, scale, ov);
  }
}

}  // namespace fp8gemm::quantize
