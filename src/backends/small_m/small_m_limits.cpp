// Which problems a small_m config runs (can_implement), each limit with its reason.
#include <climits>

#include "backends/small_m/small_m_config.h"
#include "backends/small_m/small_m_layout.h"

namespace fp8gemm::small_m {

Verdict can_implement(const Problem& p, const Config& c, int cc) {
  if (Verdict v = config_exists(c); !v) return v;
  if (cc != 90)
    return Verdict::no("wgmma tactics need compute capability 9.0 (sm_90a wgmma and TMA); device is " +
                       std::to_string(cc));
  const bool cp = c.family == Family::kCpAsyncRing;
  if (p.m < 1 || p.m > kMaxM) return Verdict::no("m must be in 1..32 (small_m is a decode kernel)");
  if (p.n < 16 || p.n % 16) return Verdict::no("n must be a positive multiple of 16");
  if (p.k < 16 || p.k % 16)
    return Verdict::no(cp ? "k must be a positive multiple of 16 (16-byte cp.async chunks of a weight row, TMA of "
                            "the activations: 16-byte aligned global row strides)"
                          : "k must be a positive multiple of 16 (TMA: 16-byte aligned global row strides)");
  if (p.k > (int64_t(1) << 30)) return Verdict::no("k must be <= 2^30");
  if (p.n > (int64_t(1) << 30)) return Verdict::no("n must be <= 2^30");
  if (p.batch < 1 || p.batch > 65535) return Verdict::no("batch must be in 1..65535 (grid z)");
  if (!is_fp8(p.a_type) || !is_fp8(p.b_type)) return Verdict::no("A and B must be FP8");
  if (p.a_type == DType::kE5M2 && p.b_type == DType::kE5M2) return Verdict::no("e5m2 x e5m2 is not supported");
  if (p.out_type != DType::kBF16 && p.out_type != DType::kFP16) return Verdict::no("out must be bf16 or fp16");
  if (p.bias && (p.a_type != DType::kE4M3 || p.b_type != DType::kE4M3))
    return Verdict::no("a bias needs e4m3 x e4m3 (the kernels with a bias epilogue are built for that pair)");
  if (p.alignment < 16)
    return Verdict::no(cp ? "A, B and out must be 16-byte aligned (TMA and 16-byte cp.async addresses)"
                          : "A, B and out must be 16-byte aligned (TMA global addresses)");
  const int64_t kblocks = k_blocks(p);
  if (c.splitk > kblocks) return Verdict::no("splitk must be <= ceil(k/128): every split needs K to read");
  if (c.family == Family::kActivationOnce && p.m != 1)
    return Verdict::no("aonce=1 needs m = 1 (the activation row is copied once, whole; for a few rows the in-stage "
                       "tiles are faster)");
  if (c.block() == Block::kKPairs && p.m > 16)
    return Verdict::no("rows=32 (K pairs) needs m <= 16: two K blocks' activation rows share the MMA's N (<= 32)");
  if (c.block() == Block::kKPairs && c.splitk > (kblocks + 1) / 2)
    return Verdict::no("rows=32 (K pairs): splitk must be <= ceil(k/256): every split needs a pair of K blocks");
  if (c.family == Family::kPersistent && (p.n + c.rows - 1) / c.rows * p.batch > int64_t(INT32_MAX))
    return Verdict::no("persistent: ceil(n/rows) * batch must fit a 32-bit int");
  if (shared_bytes(p, c) > kMaxSharedBytes)
    return Verdict::no(c.family == Family::kActivationOnce
                           ? "aonce=1: stages * 16 KB of weights and the activation row (k rounded up to 256, plus "
                             "256 bytes) must fit 220 KB of shared memory"
                           : "stages * (rows + 8 * ceil(m/8)) * 128 bytes (plus the split-K buffer when persistent) "
                             "must fit 220 KB of shared memory");
  return Verdict::yes();
}

}  // namespace fp8gemm::small_m
