#include "quantize/quantize.h"

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "core/cuda_check.h"
#include "core/quantize_rule.h"

namespace fp8gemm::quantize {

namespace {

constexpr int kThreads = 256;             // the static and two-kernel paths' blocks
constexpr int kClusterThreads = 1024;     // the one-kernel path's blocks
constexpr int kClusterVectors = 8;        // vectors each of its threads holds in registers
constexpr int kMaxClusterBlocks = 8;      // the portable cluster size
constexpr int kMaxPartials = 1024;        // the two-kernel path's partial maxima
constexpr int64_t kClusterBlockElements = int64_t(kClusterThreads) * kClusterVectors * kVector;

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

// 8 values / scale in e4m3: float32 division rounded to nearest, then the conversion rounds to
// nearest even and saturates at +-448 (satfinite), NaN staying NaN: clamp-then-cast exactly.
template <class T>
__device__ __forceinline__ uint2 quantize8(const uint4 v, float scale) {
  const unsigned words[4] = {v.x, v.y, v.z, v.w};
  unsigned packed[2] = {0, 0};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f;
    f.x = __fdiv_rn(to_float<T>((unsigned short)(words[i] & 0xFFFFu)), scale);
    f.y = __fdiv_rn(to_float<T>((unsigned short)(words[i] >> 16)), scale);
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
  const float s = *scale;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride)
    out[i] = quantize8<T>(x[i], s);
}

// One cluster of blocks: each thread loads its vectors into registers, the cluster agrees on
// amax through distributed shared memory, and each thread quantizes what it holds.
template <class T>
__global__ void __launch_bounds__(kClusterThreads) cluster_kernel(const uint4* x, int64_t vectors, float* scale,
                                                                  uint2* out) {
  namespace cg = cooperative_groups;
  __shared__ unsigned warp_max[32];
  __shared__ unsigned mine;
  pdl_start();
  const int64_t threads = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uint4 held[kClusterVectors];
  unsigned m = 0;
#pragma unroll
  for (int i = 0; i < kClusterVectors; ++i) {
    const int64_t v = first + i * threads;
    held[i] = v < vectors ? x[v] : make_uint4(0, 0, 0, 0);
    m = max(m, abs_max_bits(held[i]));
  }
  m = block_max(m, warp_max);
  if (threadIdx.x == 0) mine = m;
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every block's maximum is written
  for (unsigned b = 0; b < cluster.num_blocks(); ++b) m = max(m, *cluster.map_shared_rank(&mine, b));
  cluster.sync();  // and read: no block leaves while another reads its shared memory
  const float s = scale_of_bits<T>(m);
  if (first == 0) *scale = s;
#pragma unroll
  for (int i = 0; i < kClusterVectors; ++i) {
    const int64_t v = first + i * threads;
    if (v < vectors) out[v] = quantize8<T>(held[i], s);
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
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride)
    out[i] = quantize8<T>(x[i], s);
}

// A launch with programmatic dependent launch, and a cluster of `cluster` blocks along x if > 0.
template <class Kernel, class... Args>
void launch(Kernel kernel, int blocks, int threads, int cluster, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attrs[2];
  cfg.gridDim = dim3(unsigned(blocks));
  cfg.blockDim = dim3(unsigned(threads));
  cfg.stream = stream;
  cfg.attrs = attrs;
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.numAttrs = 1;
  if (cluster > 0) {
    attrs[1].id = cudaLaunchAttributeClusterDimension;
    attrs[1].val.clusterDim.x = unsigned(cluster);
    attrs[1].val.clusterDim.y = 1;
    attrs[1].val.clusterDim.z = 1;
    cfg.numAttrs = 2;
  }
  FP8GEMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

// Blocks of kThreads for a grid-stride pass over `vectors`: enough to cover it once, at most a
// few waves of the device.
int grid_for(int64_t vectors, int sm_count, int per_sm) {
  const int64_t cover = (vectors + kThreads - 1) / kThreads;
  return int(std::max<int64_t>(1, std::min<int64_t>(cover, int64_t(std::max(sm_count, 1)) * per_sm)));
}

void require_layout(const void* x, DType x_type, int64_t count, const void* out) {
  FP8GEMM_REQUIRE(x_type == DType::kBF16 || x_type == DType::kFP16, kInvalidArgument,
                  "quantize: x must be bf16 or fp16, got ", x_type);
  FP8GEMM_REQUIRE(count >= 0 && count % kVector == 0, kInvalidArgument, "quantize: count must be a multiple of ",
                  kVector, ", got ", count);
  FP8GEMM_REQUIRE(reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 8 == 0,
                  kInvalidArgument, "quantize: x must be 16-byte and out 8-byte aligned");
}

}  // namespace

DynamicPlan dynamic_plan(int64_t count, int sm_count) {
  const int64_t cluster_blocks = (count + kClusterBlockElements - 1) / kClusterBlockElements;
  if (cluster_blocks <= kMaxClusterBlocks) return {true, int(std::max<int64_t>(1, cluster_blocks))};
  return {false, std::min(grid_for(count / kVector, sm_count, 2), kMaxPartials)};
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
  if (x_type == DType::kBF16) launch(static_kernel<__nv_bfloat16>, blocks, kThreads, 0, stream, xv, vectors, scale, ov);
  else launch(static_kernel<__half>, blocks, kThreads, 0, stream, xv, vectors, scale, ov);
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
    if (bf16) launch(cluster_kernel<__nv_bfloat16>, plan.blocks, kClusterThreads, plan.blocks, stream, xv, vectors, scale, ov);
    else launch(cluster_kernel<__half>, plan.blocks, kClusterThreads, plan.blocks, stream, xv, vectors, scale, ov);
    return;
  }
  FP8GEMM_REQUIRE(scratch && reinterpret_cast<uintptr_t>(scratch) % 16 == 0, kInvalidArgument,
                  "quantize: the dynamic path needs ", dynamic_scratch_bytes(count, sm_count),
                  " bytes of 16-byte aligned scratch");
  auto* partials = static_cast<unsigned*>(scratch);
  const int blocks = grid_for(vectors, sm_count, 8);
  if (bf16) {
    launch(partial_max_kernel<__nv_bfloat16>, plan.blocks, kThreads, 0, stream, xv, vectors, partials);
    launch(quantize_partials_kernel<__nv_bfloat16>, blocks, kThreads, 0, stream, xv, vectors,
           static_cast<const unsigned*>(partials), plan.blocks, scale, ov);
  } else {
    launch(partial_max_kernel<__half>, plan.blocks, kThreads, 0, stream, xv, vectors, partials);
    launch(quantize_partials_kernel<__half>, blocks, kThreads, 0, stream, xv, vectors,
           static_cast<const unsigned*>(partials), plan.blocks, scale, ov);
  }
}

}  // namespace fp8gemm::quantize
