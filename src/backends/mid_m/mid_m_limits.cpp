// Which problems a mid_m config runs (can_implement), each limit with its reason.
#include <climits>
#include <string>

#include "backends/mid_m/mid_m_select.h"

namespace fp8gemm::mid_m {

Verdict can_implement(const Problem& p, const Config& c, const DeviceLimits& d) {
  if (Verdict v = config_exists(c); !v) return v;
  if (d.cc != 90)
    return Verdict::no("mid_m needs compute capability 9.0 (sm_90a wgmma, TMA multicast, clusters); device is " +
                       std::to_string(d.cc));
  if (p.m < kMinM || p.m > kMaxM)
    return Verdict::no("m must be in 33..256 (the wgmma's N holds the activation rows; m <= 32 is small_m's)");
  if (p.n < 16 || p.n % 16) return Verdict::no("n must be a positive multiple of 16");
  if (p.k < 16 || p.k % 16)
    return Verdict::no("k must be a positive multiple of 16 (TMA: 16-byte aligned global row strides)");
  if (p.k > (int64_t(1) << 30)) return Verdict::no("k must be <= 2^30");
  if (p.n > (int64_t(1) << 30)) return Verdict::no("n must be <= 2^30");
  if (p.batch < 1 || p.batch > 65535) return Verdict::no("batch must be in 1..65535 (the TMA box's batch coordinate)");
  if (!is_fp8(p.a_type) || !is_fp8(p.b_type)) return Verdict::no("A and B must be FP8");
  if (p.a_type == DType::kE5M2 && p.b_type == DType::kE5M2) return Verdict::no("e5m2 x e5m2 is not supported");
  if (p.out_type != DType::kBF16 && p.out_type != DType::kFP16) return Verdict::no("out must be bf16 or fp16");
  if (p.bias) return Verdict::no("mid_m has no bias epilogue");
  if (p.alignment < 16) return Verdict::no("A, B and out must be 16-byte aligned (TMA global addresses)");
  if (c.splitk > k_steps(p, c))
    return Verdict::no("splitk must be <= ceil(k / (128 * kstage)): every split needs a stage of K to read");
  if (padded_row_tiles(p, c) * c.msplit * p.batch > int64_t(INT32_MAX))
    return Verdict::no("ceil(n/rows) * msplit * batch must fit a 32-bit int (grid x walks the M blocks of the row "
                       "tiles of every batch)");
  if (layout(p, c).shared_bytes > max_dynamic_shared(d))
    return Verdict::no("stages * kstage * (rows + tile_n) * 128 bytes (tile_n: ceil(m/msplit) rounded up to a wgmma "
                       "N; with split-K at least the partial sums, rows * tile_n * 4 bytes) must fit the device's " +
                       std::to_string(max_dynamic_shared(d) / 1024) + " KB of shared memory a block");
  return Verdict::yes();
}

}  // namespace fp8gemm::mid_m
