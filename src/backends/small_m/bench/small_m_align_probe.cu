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
};

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}

template <int kStages>
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
  int per_sm = 0;  // > 0: shared memory padded so that at most this many blocks fit an SM
  int grid = 0;    // > 0: ragged consecutive rows over this many blocks
  cudaGraphExec_t exec = nullptr;
  std::vector<float> us;
};

int gcd128(int k) { return std::gcd(k, 128); }

void capture(Config& c, uint8_t* pool, size_t pool_bytes, uint32_t* sink, cudaStream_t st) {
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
  switch (c.stages) {
    case 2: kern = stream_rows<2>; break;
    case 3: kern = stream_rows<3>; break;
    case 4: kern = stream_rows<4>; break;
    case 5: kern = stream_rows<5>; break;
    case 6: kern = stream_rows<6>; break;
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
  std::snprintf(buf, sizeof buf, "%dx%d|%s|rows=%d,chunk=%d,stages=%d,smem=%zuK|%s|blocks=%d,per_sm=%d", c.n, c.k,
                c.grid ? "ragged" : c.by_class ? "class" : "consec", c.rows, c.chunk, c.stages, smem >> 10,
                c.dep ? "wait+read" : c.wait ? "wait" : "free", blocks, per_sm);
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
  fill<<<1024, 256, 0, st>>>(pool, pool_bytes);
  CHECK(cudaStreamSynchronize(st));

  // --set align (session 25 call 1): K alignment. --set sweep (call 2): the chain's ring shape.
  // --set dep (session 32): the best chained shapes with a dependent read after the wait and without.
  const std::string set = argc > 1 ? argv[1] : "align";
  std::vector<Config> cs;
  auto add = [&](int n, int k, int rows, int chunk, int by_class, int stages, int wait, int per_sm = 0, int grid = 0,
                 int dep = 0) {
    if (size_t(stages) * rows * chunk > size_t(220) * 1024) return;
    cs.push_back({"", n, k, rows, chunk, by_class, stages, wait, dep, per_sm, grid});
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
  } else {
    std::fprintf(stderr, "usage: small_m_align_probe [align|sweep|dep]\n");
    return 2;
  }
  for (Config& c : cs) capture(c, pool, pool_bytes, sink, st);
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
