// Does a weight row's alignment to 128 bytes set small_m's stream rate? (issue 4, session 25)
//
// nano9b.down (N=4480, K=15680) is the one suite weight whose K is not a multiple of 128
// (15680 = 122.5 x 128), so every other row starts 64 bytes into a 128-byte line, and it is the
// one >= 64 MB weight that no small_m tactic streams at 0.90 of 4.5 TB/s (0.79-0.86; without any
// MMA 0.89, session 17). This probe streams a weight the way the cp.async kernels do (a block owns
// `rows` rows; each stage copies `chunk` bytes of every row with 16-byte cp.async.cg into a ring of
// `stages` slots) and times it at K = 15616 / 15680 / 15744 (and 4096 / 4128 / 4160 at N=4096):
// if the misaligned K alone streams slower, the rows' alignment is (part of) the gap.
//
// Row order "class" groups rows of one offset (r*K mod 128) in a block and shifts that block's K
// frame by the offset, so every chunk it copies starts on a 128-byte line: the layout a kernel
// could use at such K (its activations shifted alike; the head and tail chunks zero-filled).
//
// Later sets (usage at the end of main): `sweep` (session 25: the ring's shape in a PDL chain),
// `dep` (session 32: a dependent read after the wait), `areg`, `areg16`, `areg16d` (session 33:
// the activations read into registers as an un-swapped wgmma's A fragments would be, with 4- or
// 16-byte loads, 1-4 stages ahead, beside a ring that then holds weights only).
//
// Timing as DESIGN.md says: a CUDA graph of 20 back-to-back calls (PDL; with `wait` each call
// waits for the previous one after its first stages are requested, as the library's kernels do;
// `free` never waits: the stream's throughput), weights rotating through >= 512 MB of copies,
// round-robin replays across configurations, median of 9 replays / 20.
//
// Build (here, no GPU needed):
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//     src/backends/small_m/bench/small_m_align_probe.cu -o small_m_align_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

namespace {

constexpr int kThreads = 128;
constexpr int kCalls = 20;
constexpr int kReplays = 9;
constexpr size_t kRotateBytes = size_t(512) << 20;

struct Args {
  const uint8_t* w;
  int n, k;
  int rows;       // rows per block
  int chunk;      // bytes of each row per stage (multiple of 16)
  int by_class;   // 0: consecutive rows; 1: rows of one 128-byte offset class, K frame shifted
  int classes;    // 128 / gcd(K, 128)
  int blocks_per_class;
  int wait;       // griddepcontrol.wait after the first stages are requested
  int dep;        // after the wait, read a word the previous call stored before consuming a stage
  int ragged;     // consecutive rows split as evenly as the grid allows (n / gridDim.x, +1 for some)
  uint32_t* sink;
  uint32_t* out;  // a word per row, stored at the end (the output a dependent kernel waits for)
  const uint8_t* act;  // --set areg: [m, k] activations, read into registers after the wait
  int m;               // --set areg: activation rows (<= 16)
};

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}

// --set areg (session 33): the activations read into registers by warp 0, as the A fragments of an
// un-swapped wgmma (activation rows on the MMA's M side) would be: per 32 bytes of K, lane (g, t)
// loads 4 bytes of rows g and g + 8 at K offsets 4t and 16 + 4t (rows < m only). Stage c's words
// are requested kD stages ahead of its consumption (registers, no shared memory), so the ring
// holds weights alone. kD = 0: no activation reads.
// --set areg16: the same fragments from 16-byte loads. Lane (g, t) loads bytes [16t, 16t + 16) of
// each 64-byte window of rows g and g + 8 (so a warp instruction asks for whole 64-byte pieces of
// 8 rows, not one 16-byte sector of each), and the four lanes of a row trade words (a 4 x 4
// transpose, four shuffles) so that lane t ends up with word t of each 16-byte quarter, as the
// fragment wants. Why: every block reads the same activation lines at about the same time, and
// the 4-byte loads above made 8x the requests of a line-wise copy (session 33).
// kRows = 1 (m <= 8): row g only, half the registers.
template <int kRows>
__device__ __forceinline__ void load_act_stage16(const Args& a, int c, uint4 (&v)[8 * kRows]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int x = 0; x < 8 * kRows; ++x) {
    const int row = g + 8 * (x % kRows), kk = c * a.chunk + 64 * (x / kRows) + 16 * t;
    uint4 r = make_uint4(0, 0, 0, 0);
    if (64 * (x >> 1) < a.chunk && row < a.m && kk < a.k)
      r = __ldcg(reinterpret_cast<const uint4*>(a.act + int64_t(row) * a.k + kk));
    v[x] = r;
  }
}

__device__ __forceinline__ uint32_t pick(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Lane t of each quad gets word t of the four lanes' vectors (the transpose), XORed into x.
__device__ __forceinline__ uint32_t transpose_quad_xor(const uint4& v) {
  const int t = threadIdx.x & 3;
  uint32_t x = pick(v, t);
#pragma unroll
  for (int r = 1; r < 4; ++r) x ^= __shfl_sync(0xffffffffu, pick(v, (t - r) & 3), (threadIdx.x & ~3) | ((t + r) & 3));
  return x;
}

__device__ __forceinline__ void load_act_stage(const Args& a, int c, uint32_t (&w)[64]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int steps = a.chunk / 32;  // k32 steps a stage (<= 16)
#pragma unroll
  for (int s = 0; s < 16; ++s) {
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      const int row = g + 8 * (h & 1), kk = c * a.chunk + 32 * s + 16 * (h >> 1) + 4 * t;
      uint32_t v = 0;
      if (s < steps && row < a.m && kk < a.k)
        v = __ldcg(reinterpret_cast<const unsigned int*>(a.act + int64_t(row) * a.k + kk));
      w[4 * s + h] = v;
    }
  }
}

// One stage of activations in registers: requested by load, waited for and consumed by take
// (their XOR). NarrowSlot: the 4-byte words (--set areg); WideSlot: the 16-byte loads and the quad
// transpose, kRows rows a lane (--set areg16, areg16d).
struct NarrowSlot {
  uint32_t w[64];
  __device__ __forceinline__ void load(const Args& a, int c) { load_act_stage(a, c, w); }
  __device__ __forceinline__ uint32_t take() const {
    uint32_t x = 0;
#pragma unroll
    for (int i = 0; i < 64; ++i) x ^= w[i];
    return x;
  }
};
template <int kRows>
struct WideSlot {
  uint4 v[8 * kRows];
  __device__ __forceinline__ void load(const Args& a, int c) { load_act_stage16<kRows>(a, c, v); }
  __device__ __forceinline__ uint32_t take() const {
    uint32_t x = 0;
#pragma unroll
    for (int i = 0; i < 8 * kRows; ++i) x ^= transpose_quad_xor(v[i]);
    return x;
  }
};

template <int kStages, int kD = 0, class Slot = NarrowSlot>
__global__ void __launch_bounds__(kThreads) stream_rows(Args a) {
  extern __shared__ __align__(128) uint8_t smem[];
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  // This block's rows: row(i) = first + step * i for i < count; K frame starts at -shift.
  int first, step, count, shift;
  if (a.by_class) {
    const int cls = blockIdx.x / a.blocks_per_class, j = blockIdx.x % a.blocks_per_class;
    step = a.classes;
    first = cls + step * (j * a.rows);
    const int in_class = (a.n - cls + step - 1) / step;
    count = min(a.rows, in_class - j * a.rows);
    shift = int((int64_t(cls) * a.k) % 128);
  } else if (a.ragged) {
    step = 1;
    first = int(int64_t(a.n) * blockIdx.x / gridDim.x);
    count = int(int64_t(a.n) * (blockIdx.x + 1) / gridDim.x) - first;
    shift = 0;
  } else {
    step = 1;
    first = blockIdx.x * a.rows;
    count = min(a.rows, a.n - first);
    shift = 0;
  }
  if (count <= 0) return;
  const int per_row = a.chunk / 16, pieces = count * per_row;
  const int chunks = (a.k + shift + a.chunk - 1) / a.chunk;
  const uint32_t base = uint32_t(__cvta_generic_to_shared(smem));
  const uint32_t slot_bytes = uint32_t(a.rows * a.chunk);
  auto issue = [&](int c) {
    const int k0 = c * a.chunk - shift;
    const uint32_t dst = base + uint32_t(c % kStages) * slot_bytes;
    for (int p = threadIdx.x; p < pieces; p += kThreads) {
      const int r = p / per_row, kk = k0 + (p % per_row) * 16;
      if (kk >= 0 && kk < a.k)
        cp_async_16(dst + uint32_t(p * 16), a.w + int64_t(first + step * r) * a.k + kk);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  uint32_t acc = 0;
  for (int c = 0; c < kStages - 1; ++c) {
    if (c < chunks) issue(c);
    else asm volatile("cp.async.commit_group;" ::: "memory");
  }
  if (a.wait) asm volatile("griddepcontrol.wait;" ::: "memory");
  // A GEMM reads its activations (the previous kernel's output) after the wait before its first
  // MMA: one dependent global round trip that the plain stream does not pay (--set dep).
  if (a.dep) acc = __ldcg(a.out + (blockIdx.x * kThreads + threadIdx.x) % a.n);
  if constexpr (kD == 0) {
    for (int c = 0; c < chunks; ++c) {
      if (c + kStages - 1 < chunks) issue(c + kStages - 1);
      else asm volatile("cp.async.commit_group;" ::: "memory");
      asm volatile("cp.async.wait_group %0;" ::"n"(kStages - 1) : "memory");
      __syncthreads();
      // Touch the slot (one word a thread) so the copies are consumed, as a kernel's MMA would.
      const uint32_t* s = reinterpret_cast<const uint32_t*>(smem + (c % kStages) * slot_bytes);
      acc ^= s[(threadIdx.x * 4) % (slot_bytes / 4)];
      __syncthreads();
    }
  } else {
    // Warp 0 holds kD stages of activations in registers; stage c's are consumed with the weights
    // of stage c (their XOR feeds acc), then stage c + kD's are requested into the slot.
    Slot r[kD];
    const bool loader = threadIdx.x < 32;
#pragma unroll
    for (int j = 0; j < kD; ++j)
      if (loader && j < chunks) r[j].load(a, j);
    for (int c0 = 0; c0 < chunks; c0 += kD) {
#pragma unroll
      for (int j = 0; j < kD; ++j) {
        const int c = c0 + j;
        if (c >= chunks) break;
        if (c + kStages - 1 < chunks) issue(c + kStages - 1);
        else asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group %0;" ::"n"(kStages - 1) : "memory");
        __syncthreads();
        const uint32_t* s = reinterpret_cast<const uint32_t*>(smem + (c % kStages) * slot_bytes);
        uint32_t x = s[(threadIdx.x * 4) % (slot_bytes / 4)];
        if (loader) {
          x ^= r[j].take();
          if (c + kD < chunks) r[j].load(a, c + kD);
        }
        acc ^= x;
        __syncthreads();
      }
    }
  }
  if (acc == 0x9E3779B9u) a.sink[blockIdx.x] = acc;  // never true in practice; keeps the reads
  for (int r = threadIdx.x; r < count; r += kThreads) a.out[first + step * r] = acc + r;
}

__global__ void fill(uint8_t* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = uint8_t((i * 0x9E3779B97F4A7C15ull) >> 56) | 1;
}

struct Config {
  std::string label;
  int n, k, rows, chunk, by_class, stages, wait;
  int dep = 0;     // 1: a dependent read after the wait (wait only)
  int areg = 0;    // > 0: activations into registers this many stages ahead (m rows)
  int wide = 0;    // areg with 16-byte loads and the quad transpose (--set areg16); 2: one row a lane (m <= 8)
  int m = 0;
  int per_sm = 0;  // > 0: shared memory padded so that at most this many blocks fit an SM
  int grid = 0;    // > 0: ragged consecutive rows over this many blocks
  cudaGraphExec_t exec = nullptr;
  std::vector<float> us;
};

int gcd128(int k) { return std::gcd(k, 128); }

void capture(Config& c, uint8_t* pool, size_t pool_bytes, uint32_t* sink, const uint8_t* act_buf, cudaStream_t st) {
  const size_t wbytes = size_t(c.n) * c.k;
  const size_t stride = (wbytes + 255) / 256 * 256;
  const int copies = int(std::max<size_t>(2, std::min<size_t>(pool_bytes / stride, (kRotateBytes + wbytes - 1) / wbytes + 1)));
  Args a{};
  a.n = c.n, a.k = c.k, a.rows = c.rows, a.chunk = c.chunk, a.by_class = c.by_class, a.wait = c.wait;
  a.dep = c.dep;
  a.classes = 128 / gcd128(c.k);
  a.sink = sink;
  a.out = sink + 4096;
  a.ragged = c.grid > 0;
  a.act = act_buf;
  a.m = c.m;
  int blocks;
  if (c.grid > 0) {
    blocks = c.grid;
  } else if (c.by_class) {
    const int in_class = (c.n + a.classes - 1) / a.classes;
    a.blocks_per_class = (in_class + c.rows - 1) / c.rows;
    blocks = a.blocks_per_class * a.classes;
  } else {
    a.blocks_per_class = 0;
    blocks = (c.n + c.rows - 1) / c.rows;
  }
  size_t smem = size_t(c.stages) * c.rows * c.chunk;
  if (c.per_sm > 0) smem = std::max(smem, size_t(227 * 1024) / c.per_sm - 1024);
  void (*kern)(Args) = nullptr;
  if (c.areg > 0 && c.wide == 2) {
    const int key = c.stages * 10 + c.areg;  // one row a lane: rings of up to 4 stages ahead
    switch (key) {
      case 71: kern = stream_rows<7, 1, WideSlot<1>>; break;
      case 72: kern = stream_rows<7, 2, WideSlot<1>>; break;
      case 73: kern = stream_rows<7, 3, WideSlot<1>>; break;
      case 74: kern = stream_rows<7, 4, WideSlot<1>>; break;
      default: std::fprintf(stderr, "stages=%d areg=%d wide m<=8 not built\n", c.stages, c.areg); std::exit(1);
    }
  } else if (c.areg > 0 && c.wide) {
    const int key = c.stages * 10 + c.areg;
    switch (key) {
      case 61: kern = stream_rows<6, 1, WideSlot<2>>; break;
      case 62: kern = stream_rows<6, 2, WideSlot<2>>; break;
      case 71: kern = stream_rows<7, 1, WideSlot<2>>; break;
      case 72: kern = stream_rows<7, 2, WideSlot<2>>; break;
      default: std::fprintf(stderr, "stages=%d areg=%d wide not built\n", c.stages, c.areg); std::exit(1);
    }
  } else if (c.areg > 0) {
    const int key = c.stages * 10 + c.areg;
    switch (key) {
      case 51: kern = stream_rows<5, 1>; break;
      case 52: kern = stream_rows<5, 2>; break;
      case 61: kern = stream_rows<6, 1>; break;
      case 62: kern = stream_rows<6, 2>; break;
      case 63: kern = stream_rows<6, 3>; break;
      case 71: kern = stream_rows<7, 1>; break;
      case 72: kern = stream_rows<7, 2>; break;
      case 73: kern = stream_rows<7, 3>; break;
      default: std::fprintf(stderr, "stages=%d areg=%d not built\n", c.stages, c.areg); std::exit(1);
    }
  } else switch (c.stages) {
    case 2: kern = stream_rows<2>; break;
    case 3: kern = stream_rows<3>; break;
    case 4: kern = stream_rows<4>; break;
    case 5: kern = stream_rows<5>; break;
    case 6: kern = stream_rows<6>; break;
    case 7: kern = stream_rows<7>; break;
    case 8: kern = stream_rows<8>; break;
    case 10: kern = stream_rows<10>; break;
    case 12: kern = stream_rows<12>; break;
    default: std::fprintf(stderr, "stages=%d not built\n", c.stages); std::exit(1);
  }
  CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks), cfg.blockDim = dim3(kThreads), cfg.dynamicSmemBytes = smem, cfg.stream = st;
  cfg.attrs = &attr, cfg.numAttrs = 1;
  cudaGraph_t g;
  CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kCalls; ++i) {
    a.w = pool + size_t(i % copies) * stride;
    CHECK(cudaLaunchKernelEx(&cfg, kern, a));
  }
  CHECK(cudaStreamEndCapture(st, &g));
  CHECK(cudaGraphInstantiate(&c.exec, g, 0));
  CHECK(cudaGraphDestroy(g));
  char buf[160];
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, kThreads, smem));
  char dep[48];
  if (c.areg > 0)
    std::snprintf(dep, sizeof dep, "wait+areg%s%d,m=%d", c.wide == 2 ? "16r1x" : c.wide ? "16x" : "", c.areg, c.m);
  else std::snprintf(dep, sizeof dep, "%s", c.dep ? "wait+read" : c.wait ? "wait" : "free");
  std::snprintf(buf, sizeof buf, "%dx%d|%s|rows=%d,chunk=%d,stages=%d,smem=%zuK|%s|blocks=%d,per_sm=%d", c.n, c.k,
                c.grid ? "ragged" : c.by_class ? "class" : "consec", c.rows, c.chunk, c.stages, smem >> 10, dep,
                blocks, per_sm);
  c.label = buf;
}

}  // namespace

int main(int argc, char** argv) {
  cudaStream_t st;
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const size_t pool_bytes = kRotateBytes + (size_t(160) << 20);
  uint8_t* pool;
  uint32_t* sink;
  CHECK(cudaMalloc(&pool, pool_bytes));
  CHECK(cudaMalloc(&sink, (4096 + 65536) * sizeof(uint32_t)));
  uint8_t* act;  // 16 rows of up to 32768 bytes of K (--set areg)
  CHECK(cudaMalloc(&act, size_t(16) * 32768));
  CHECK(cudaMemset(act, 0x11, size_t(16) * 32768));
  fill<<<1024, 256, 0, st>>>(pool, pool_bytes);
  CHECK(cudaStreamSynchronize(st));

  // --set align (session 25 call 1): K alignment. --set sweep (call 2): the chain's ring shape.
  // --set dep (session 32): the best chained shapes with a dependent read after the wait and without.
  const std::string set = argc > 1 ? argv[1] : "align";
  std::vector<Config> cs;
  auto add = [&](int n, int k, int rows, int chunk, int by_class, int stages, int wait, int per_sm = 0, int grid = 0,
                 int dep = 0, int areg = 0, int m = 0, int wide = 0) {
    if (size_t(stages) * rows * chunk > size_t(220) * 1024) return;
    cs.push_back({"", n, k, rows, chunk, by_class, stages, wait, dep, areg, wide, m, per_sm, grid});
  };
  if (set == "align") {
    for (int stages : {4, 6}) {
      for (int wait : {0, 1}) {
        for (int k : {15616, 15680, 15744}) add(4480, k, 34, 512, 0, stages, wait);
        add(4480, 15680, 34, 512, 1, stages, wait);
        for (int k : {4096, 4128, 4160}) add(4096, k, 32, 512, 0, stages, wait);
        add(4096, 4128, 32, 512, 1, stages, wait);
        add(4096, 4160, 32, 512, 1, stages, wait);
        add(15680, 4480, 119, 256, 0, stages, wait);
      }
    }
  } else if (set == "sweep") {
    for (int chunk : {256, 512, 1024})
      for (int stages : {2, 3, 4, 5, 6, 8, 10, 12})
        for (int per_sm : {0, 1, 2}) add(4096, 4096, 32, chunk, 0, stages, 1, per_sm);
    for (int stages : {3, 4, 6, 8}) add(4096, 4096, 32, 512, 0, stages, 0);
    for (int stages : {3, 4, 5, 6, 8}) add(4096, 4096, 32, 512, 0, stages, 1, 0, 132);
    for (int chunk : {512, 1024})
      for (int stages : {2, 3, 4, 5, 6, 8, 10, 12})
        for (int per_sm : {0, 1, 2}) add(4480, 15680, 34, chunk, 0, stages, 1, per_sm);
    for (int stages : {3, 4, 6}) add(4480, 15680, 34, 512, 0, stages, 0);
    for (int stages : {3, 4, 5, 6, 8}) add(4608, 4096, 35, 512, 0, stages, 1);
    for (int stages : {3, 4, 5, 6, 8}) add(4096, 5376, 32, 512, 0, stages, 1, 0, 132);
    for (int stages : {3, 4, 5, 6, 8}) add(4096, 5376, 32, 512, 0, stages, 1);
  } else if (set == "dep") {
    // Session 32: session 25's best chained shapes with and without the dependent read.
    for (int dep : {0, 1}) {
      for (int stages : {5, 6, 8})
        for (int per_sm : {0, 2}) add(4096, 4096, 32, 512, 0, stages, 1, per_sm, 0, dep);
      for (int stages : {10, 12}) add(4096, 4096, 32, 256, 0, stages, 1, 2, 0, dep);
      for (int stages : {4, 5, 6}) add(4608, 4096, 35, 512, 0, stages, 1, 0, 0, dep);
      for (int stages : {4, 6, 8}) add(4096, 5376, 32, 512, 0, stages, 1, 0, 0, dep);
      for (int stages : {4, 6}) add(4480, 15680, 34, 512, 0, stages, 1, 0, 0, dep);
    }
    for (int stages : {3, 4}) add(4096, 4096, 32, 512, 0, stages, 0);
    for (int stages : {4, 6}) add(4480, 15680, 34, 512, 0, stages, 0);
  } else if (set == "areg") {
    // Session 33: a weights-only ring of 5-7 stages (80-112 KB at 32 rows x 512 bytes) at two
    // blocks per SM, with the activations read into registers 1-3 stages ahead (m = 1, 8, 16),
    // against the dependent read alone (dep) and the library's 80 KB ring.
    for (int stages : {5, 6, 7}) add(4096, 4096, 32, 512, 0, stages, 1, 2, 0, 1);
    for (int stages : {6, 7})
      for (int d : {1, 2, 3})
        for (int m : {1, 8, 16}) add(4096, 4096, 32, 512, 0, stages, 1, 2, 0, 1, d, m);
    for (int stages : {5, 6}) add(4608, 4096, 35, 512, 0, stages, 1, 2, 0, 1);
    for (int d : {1, 2})
      for (int m : {1, 16}) add(4608, 4096, 35, 512, 0, 6, 1, 2, 0, 1, d, m);
    for (int stages : {6, 7}) add(4096, 5376, 32, 512, 0, stages, 1, 2, 0, 1);
    for (int d : {1, 2})
      for (int m : {1, 16}) add(4096, 5376, 32, 512, 0, 6, 1, 2, 0, 1, d, m);
  } else if (set == "areg16") {
    // Session 33: the register activations from 16-byte loads (a quad transpose), beside the
    // 4-byte ones and the dependent read alone, at 6 and 7 weight stages.
    for (int stages : {6, 7}) {
      add(4096, 4096, 32, 512, 0, stages, 1, 2, 0, 1);
      for (int m : {1, 8, 16}) {
        add(4096, 4096, 32, 512, 0, stages, 1, 2, 0, 1, 1, m);
        for (int d : {1, 2}) add(4096, 4096, 32, 512, 0, stages, 1, 2, 0, 1, d, m, 1);
      }
    }
    add(4608, 4096, 35, 512, 0, 6, 1, 2, 0, 1);
    for (int m : {1, 16}) add(4608, 4096, 35, 512, 0, 6, 1, 2, 0, 1, 1, m, 1);
  } else if (set == "areg16d") {
    // Session 33: how far ahead the register activations must be requested (m <= 8: one row a
    // lane, 1-4 stages of 512 bytes), at 7 weight stages; and m = 16 at 2 stages ahead.
    add(4096, 4096, 32, 512, 0, 7, 1, 2, 0, 1);
    for (int m : {1, 8})
      for (int d : {1, 2, 3, 4}) add(4096, 4096, 32, 512, 0, 7, 1, 2, 0, 1, d, m, 2);
    add(4096, 4096, 32, 512, 0, 7, 1, 2, 0, 1, 2, 16, 1);
    add(4096, 4096, 32, 512, 0, 6, 1, 2, 0, 1);
  } else {
    std::fprintf(stderr, "usage: small_m_align_probe [align|sweep|dep|areg|areg16|areg16d]\n");
    return 2;
  }
  for (Config& c : cs) capture(c, pool, pool_bytes, sink, act, st);
  for (Config& c : cs) CHECK(cudaGraphLaunch(c.exec, st));  // warm-up
  CHECK(cudaStreamSynchronize(st));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  for (int r = 0; r < kReplays; ++r)
    for (Config& c : cs) {
      CHECK(cudaEventRecord(e0, st));
      CHECK(cudaGraphLaunch(c.exec, st));
      CHECK(cudaEventRecord(e1, st));
      CHECK(cudaEventSynchronize(e1));
      float ms;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      c.us.push_back(ms * 1000.f / kCalls);
    }
  CHECK(cudaGetLastError());
  std::printf("shape|rows|config|dependency|grid|us|TB/s|of 4.5\n");
  for (Config& c : cs) {
    std::sort(c.us.begin(), c.us.end());
    const double us = c.us[c.us.size() / 2], tbs = double(c.n) * c.k / us * 1e-6;
    std::printf("%s|%.3f|%.3f|%.3f\n", c.label.c_str(), us, tbs, tbs / 4.5);
  }
  return 0;
}
