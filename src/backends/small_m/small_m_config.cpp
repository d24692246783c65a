#include "backends/small_m/small_m_config.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <sstream>

#include "core/cuda_check.h"

namespace fp8gemm::small_m {

namespace {
// Per block beside its dynamic allocation: ~1 KB reserved by the system and the v3 kernels' 256
// bytes of barriers.
constexpr int64_t kBlockReservedSmem = 1024 + 256;

// Stream-K: the (row tile, batch, K block) units the grid shares out.
int64_t streamk_units(const Problem& p, const Config& c) {
  return (p.n + c.rows - 1) / c.rows * p.batch * wgmma_kblocks(p);
}
// The weight paths' suffixes (cp.async, registers); TMA (the default) is not spelled.
constexpr std::string_view kWloadCpField = ",wload=cp";
constexpr std::string_view kWloadRegField = ",wload=reg";
}  // namespace

std::string Config::to_string() const {
  std::ostringstream os;
  if (wgmma) {
    os << "wgmma,rows=" << rows << ",splitk=" << splitk << ",stages=" << stages << ",l2pf=" << l2pf
       << ",pdl=" << (late_trigger ? 2 : pdl ? 1 : 0);
    if (early > 0) os << ",early=" << early;
    if (kblocks > 1) os << ",kblocks=" << kblocks;
    if (aonce > 0) os << ",aonce=" << aonce;
    if (persist > 0) os << ",persist=" << persist;
    if (streamk > 0) os << ",streamk=" << streamk;
    if (cp_weights) os << kWloadCpField;
    if (reg_weights) os << kWloadRegField;
    return os.str();
  }
  os << "rows=" << rows << ",splitk=" << splitk << ",warps=" << warps << ",stages=" << stages
     << ",pdl=" << (pdl ? 1 : 0);
  return os.str();
}

namespace {

// Reads "<key>=<int>" at the front of `text` and the ',' after it (unless `last`).
int take_field(std::string_view& text, std::string_view key, bool last, std::string_view whole, bool v3) {
  const auto fail = [&](const char* why) {
    FP8GEMM_FAIL(kInvalidArgument, "small_m tactic '", whole, "': ", why, " (expected ",
                 v3 ? "wgmma,rows=R,splitk=S,stages=P,l2pf=L,pdl=0|1|2[,early=E][,kblocks=B][,aonce=1][,persist=B|,streamk=B]"
                          "[,wload=cp|reg])"
                    : "rows=R,splitk=S,warps=W,stages=P,pdl=0|1)");
  };
  if (text.substr(0, key.size()) != key || text.size() <= key.size() || text[key.size()] != '=')
    fail(v3 ? "fields must be wgmma, rows, splitk, stages, l2pf, pdl[, early][, kblocks][, aonce][, persist or streamk][, wload] "
              "in this order"
            : "fields must be rows, splitk, warps, stages, pdl in this order");
  text.remove_prefix(key.size() + 1);
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) fail("a field's value is not an integer");
  text.remove_prefix(size_t(end - text.data()));
  if (last) {
    if (!text.empty()) fail("trailing characters");
  } else {
    if (text.empty() || text[0] != ',') fail("fields are separated by ','");
    text.remove_prefix(1);
  }
  return value;
}

}  // namespace

Config parse_config(std::string_view text) {
  std::string_view rest = text;
  Config c;
  constexpr std::string_view kV3 = "wgmma,";
  const bool v3 = rest.substr(0, kV3.size()) == kV3;
  if (v3) rest.remove_prefix(kV3.size());
  c.wgmma = v3;
  c.rows = take_field(rest, "rows", false, text, v3);
  c.splitk = take_field(rest, "splitk", false, text, v3);
  c.warps = v3 ? c.rows / 16 : take_field(rest, "warps", false, text, v3);
  c.stages = take_field(rest, "stages", false, text, v3);
  if (v3) {
    c.l2pf = take_field(rest, "l2pf", false, text, v3);
  }
  // v3 names may end with ",wload=cp" (weights through cp.async) or ",wload=reg" (registers).
  constexpr std::string_view kWload = ",wload=";
  const auto ends_with = [&](std::string_view field) {
    return rest.size() >= field.size() && rest.substr(rest.size() - field.size()) == field;
  };
  if (v3 && ends_with(kWloadCpField)) {
    c.cp_weights = true;
    rest.remove_suffix(kWloadCpField.size());
  } else if (v3 && ends_with(kWloadRegField)) {
    c.reg_weights = true;
    rest.remove_suffix(kWloadRegField.size());
  }
  FP8GEMM_REQUIRE(!v3 || rest.find(kWload) == std::string_view::npos, kInvalidArgument, "small_m tactic '", text,
                  "': wload must be the last field and its values are cp (weights through cp.async) and reg "
                  "(weights in registers); TMA is the default and is not spelled");
  // v3 names may end with ",early=E", ",kblocks=B", ",persist=P" or ",streamk=B" (before wload);
  // pdl is then not the last field.
  const auto split_off = [&](std::string_view key) {
    const size_t at = v3 ? rest.find(key) : std::string_view::npos;
    if (at == std::string_view::npos) return std::string_view{};
    const std::string_view field = rest.substr(at + 1);
    rest = rest.substr(0, at);
    return field;
  };
  std::string_view streamk_field = split_off(",streamk=");
  std::string_view persist_field = split_off(",persist=");
  std::string_view aonce_field = split_off(",aonce=");
  std::string_view kblocks_field = split_off(",kblocks=");
  std::string_view early_field = split_off(",early=");
  const int pdl = take_field(rest, "pdl", true, text, v3);
  if (!early_field.empty()) c.early = take_field(early_field, "early", true, text, v3);
  if (!kblocks_field.empty()) c.kblocks = take_field(kblocks_field, "kblocks", true, text, v3);
  if (!aonce_field.empty()) c.aonce = take_field(aonce_field, "aonce", true, text, v3);
  if (!persist_field.empty()) c.persist = take_field(persist_field, "persist", true, text, v3);
  if (!streamk_field.empty()) c.streamk = take_field(streamk_field, "streamk", true, text, v3);
  FP8GEMM_REQUIRE(pdl == 0 || pdl == 1 || (v3 && pdl == 2), kInvalidArgument, "small_m tactic '", text, "': pdl must be ",
                  v3 ? "0, 1 or 2 (2: dependents launch after the K loop)" : "0 or 1");
  c.pdl = pdl >= 1;
  c.late_trigger = pdl == 2;
  const Verdict v = config_exists(c);
  FP8GEMM_REQUIRE(v.ok, kInvalidArgument, "small_m tactic '", text, "': ", v.reason);
  // Leading zeros or '+' would parse to the same numbers: only the canonical spelling names it.
  FP8GEMM_REQUIRE(c.to_string() == text, kInvalidArgument, "small_m tactic '", text,
                  "' is not canonical; did you mean '", c.to_string(), "'?");
  return c;
}

namespace {

Verdict wgmma_config_exists(const Config& c) {
  if (c.rows < 32 || c.rows > 128)
    return Verdict::no("wgmma rows must be 32 (one warpgroup, two K blocks per stage), 64 or 128 (one or two "
                       "warpgroups), or fitted: 33..127 (one warpgroup up to 64 rows, two above)");
  // rows=32 (K pairs) and fitted rows exist in the one-shot TMA and cp.async kernels only.
  if (c.rows != 64 && c.rows != 128 && (c.persist > 0 || c.streamk > 0 || c.reg_weights || c.l2pf != 0))
    return Verdict::no("wgmma rows=" + std::to_string(c.rows) + " (32: K pairs; 33..127 but 64: fitted rows) is the "
                       "one-shot kernel with TMA or cp.async weights and l2pf=0 (not persist, streamk or wload=reg)");
  if (c.warps != c.rows / 16) return Verdict::no("wgmma configs have warps = rows / 16 (the consumer warps)");
  if (c.stages < kWgmmaMinStages || c.stages > kWgmmaMaxRingStages) return Verdict::no("wgmma stages must be in 2..32");
  if (c.stages > kWgmmaMaxStages && (c.persist > 0 || c.streamk > 0 || c.reg_weights))
    return Verdict::no("stages 17..32 are for the one-shot kernel with TMA or cp.async weights (persist, streamk and "
                       "wload=reg rings hold at most 16)");
  if (c.splitk < 1 || c.splitk > kMaxSplitK) return Verdict::no("splitk must be in 1..8 (cluster size)");
  if (c.l2pf < 0 || c.l2pf > kWgmmaMaxL2Prefetch) return Verdict::no("l2pf must be in 0..64 (K blocks)");
  if (c.persist < 0 || c.persist > kWgmmaMaxPersist) return Verdict::no("persist must be in 0..4 (blocks per SM)");
  if (c.persist > 0 && c.l2pf != 0) return Verdict::no("persistent wgmma tactics have l2pf=0");
  if (c.cp_weights && c.persist > 0)
    return Verdict::no("wload=cp is the one-shot kernel only (persist=0): the persistent kernel's ring is TMA-fed");
  if (c.cp_weights && c.l2pf != 0)
    return Verdict::no("wload=cp tactics have l2pf=0 (the L2 lookahead goes through the weight tensor map)");
  if (c.reg_weights && c.cp_weights) return Verdict::no("wload is either cp or reg");
  if (c.reg_weights && c.persist > 0)
    return Verdict::no("wload=reg is the one-shot kernel only (persist=0): the persistent kernel's ring is TMA-fed");
  if (c.reg_weights && c.l2pf != 0)
    return Verdict::no("wload=reg tactics have l2pf=0 (the L2 lookahead goes through the weight tensor map)");
  if (c.reg_weights && c.rows != 64)
    return Verdict::no("wload=reg tactics have rows=64 (two warpgroups of 32 rows; four spill their registers)");
  if (c.late_trigger && !c.pdl) return Verdict::no("the late trigger (pdl=2) is a form of programmatic dependent launch");
  if (c.late_trigger && (c.persist > 0 || c.reg_weights))
    return Verdict::no("pdl=2 is for the one-shot kernels with TMA or cp.async weights (not persist, not wload=reg)");
  if (c.streamk != 0) {
    const int most = c.rows == 64 ? kWgmmaMaxStreamK64 : kWgmmaMaxStreamK128;
    if (c.streamk < 0 || c.streamk > most)
      return Verdict::no("streamk must be in 1..4 blocks per SM at rows=64, 1..2 at rows=128 (the kernel's occupancy)");
    if (!c.cp_weights) return Verdict::no("streamk tactics load their weights by cp.async (wload=cp)");
    if (c.splitk != 1) return Verdict::no("streamk tactics have splitk=1 (the units are split over the grid instead)");
    if (c.late_trigger) return Verdict::no("streamk tactics have pdl=0 or 1");
  }
  if (c.aonce != 0) {
    if (c.aonce != 1) return Verdict::no("aonce must be 1 (absent = 0)");
    if (c.rows != 32 || c.kblocks != 2 || c.splitk != 1 || c.cp_weights || c.reg_weights || c.persist > 0 ||
        c.streamk > 0 || c.l2pf != 0 || c.early != 0)
      return Verdict::no("aonce=1 is for rows=32 (K pairs) with kblocks=2, splitk=1, TMA weights, l2pf=0 and no early");
  }
  if (c.kblocks != 1) {
    if (c.kblocks != 2 && c.kblocks != 4)
      return Verdict::no("kblocks must be 2 or 4 (K blocks per ring stage; absent = 1)");
    if (c.reg_weights || c.persist > 0 || c.streamk > 0 || c.l2pf != 0)
      return Verdict::no("kblocks=B is for the one-shot kernel with TMA or cp.async weights and l2pf=0 (not "
                         "wload=reg, persist or streamk)");
    if (c.rows == 32 && c.kblocks != 2)
      return Verdict::no("rows=32 (K pairs) takes kblocks=2 (two pairs, four K blocks, a stage) or none");
  }
  if (c.early != 0) {
    if (c.early < 1 || c.early >= c.stages)
      return Verdict::no("early must be in 1..stages-1 (stages requested before the wait; absent = the whole ring)");
    if (!c.pdl) return Verdict::no("early=E caps what is requested before waiting for the previous kernel: it needs pdl=1 or 2");
    if (c.cp_weights || c.reg_weights || c.persist > 0)
      return Verdict::no("early is for the one-shot kernel with TMA weights (not wload=cp or reg, not persist)");
    if (c.l2pf != 0) return Verdict::no("early tactics have l2pf=0 (the L2 lookahead is requested before the wait too)");
  }
  return Verdict::yes();
}

Verdict wgmma_can_implement(const Problem& p, const Config& c, int cc) {
  if (Verdict v = wgmma_config_exists(c); !v) return v;
  if (cc != 90)
    return Verdict::no("wgmma tactics need compute capability 9.0 (sm_90a wgmma and TMA); device is " +
                       std::to_string(cc));
  if (p.m < 1 || p.m > kMaxM) return Verdict::no("m must be in 1..32 (small_m is a decode kernel)");
  if (p.n < 16 || p.n % 16) return Verdict::no("n must be a positive multiple of 16");
  if (p.k < 16 || p.k % 16)
    return Verdict::no(c.cp_weights    ? "k must be a positive multiple of 16 (16-byte cp.async chunks of a weight row, "
                                           "TMA of the activations: 16-byte aligned global row strides)"
                       : c.reg_weights ? "k must be a positive multiple of 16 (16-byte loads of a weight row)"
                                       : "k must be a positive multiple of 16 (TMA: 16-byte aligned global row strides)");
  if (p.k > (int64_t(1) << 30)) return Verdict::no("k must be <= 2^30");
  if (p.n > (int64_t(1) << 30)) return Verdict::no("n must be <= 2^30");
  if (p.batch < 1 || p.batch > 65535) return Verdict::no("batch must be in 1..65535 (grid z)");
  if (!is_fp8(p.a_type) || !is_fp8(p.b_type)) return Verdict::no("A and B must be FP8");
  if (p.a_type == DType::kE5M2 && p.b_type == DType::kE5M2) return Verdict::no("e5m2 x e5m2 is not supported");
  if (p.out_type != DType::kBF16 && p.out_type != DType::kFP16) return Verdict::no("out must be bf16 or fp16");
  if (p.alignment < 16)
    return Verdict::no(c.cp_weights    ? "A, B and out must be 16-byte aligned (TMA and 16-byte cp.async addresses)"
                       : c.reg_weights ? "A, B and out must be 16-byte aligned (16-byte weight loads)"
                                       : "A, B and out must be 16-byte aligned (TMA global addresses)");
  const int64_t kblocks = wgmma_kblocks(p);
  if (c.splitk > kblocks) return Verdict::no("splitk must be <= ceil(k/128): every split needs K to read");
  if (c.aonce && p.m != 1)
    return Verdict::no("aonce=1 needs m = 1 (the activation row copied once, whole; at m = 2-4 the compact copy of "
                       "several rows was slower than the in-stage tiles)");
  if (c.rows == 32 && p.m > 16)
    return Verdict::no("rows=32 (K pairs) needs m <= 16: two K blocks' activation rows share the MMA's N (<= 32)");
  if (c.rows == 32 && c.splitk > (kblocks + 1) / 2)
    return Verdict::no("rows=32 (K pairs): splitk must be <= ceil(k/256): every split needs a pair of K blocks");
  if (c.reg_weights && c.splitk > (p.k + kRegSlotK - 1) / kRegSlotK)
    return Verdict::no("wload=reg: splitk must be <= ceil(k/512): K is split in whole activation slots");
  if (c.persist > 0 && (p.n + c.rows - 1) / c.rows * p.batch > int64_t(INT32_MAX))
    return Verdict::no("persistent: ceil(n/rows) * batch must fit a 32-bit int");
  if (c.streamk > 0) {
    // Every block of the grid must be resident at once: the last block of a cut tile waits for
    // the partial sums of the blocks before it.
    if (int64_t(c.streamk) * int64_t(shared_bytes(p, c) + kBlockReservedSmem) > kSmSharedBytes)
      return Verdict::no("streamk=B: B blocks of stages * (rows + 8 * ceil(m/8)) * 128 bytes (+2.3 KB each) must fit "
                         "one SM's 228 KB of shared memory");
    if ((p.n + c.rows - 1) / c.rows * p.batch > int64_t(INT32_MAX))
      return Verdict::no("streamk: ceil(n/rows) * batch must fit a 32-bit int");
    if (streamk_units(p, c) >= (int64_t(1) << 48))
      return Verdict::no("streamk: ceil(n/rows) * batch * ceil(k/128) must be < 2^48");
  }
  if (shared_bytes(p, c) > kWgmmaMaxSharedBytes)
    return Verdict::no(c.reg_weights ? "stages * 8 * ceil(m/8) * 512 bytes of activation slots must fit 220 KB of "
                                       "shared memory"
                       : c.aonce     ? "aonce=1: stages * 16 KB of weights and the activation row (k rounded up to "
                                       "256, plus 256 bytes) must fit 220 KB of shared memory"
                                     : "stages * (rows + 8 * ceil(m/8)) * 128 bytes (plus the split-K buffer when "
                                       "persistent) must fit 220 KB of shared memory");
  return Verdict::yes();
}

}  // namespace

WgmmaStageLayout wgmma_stage_layout(int64_t m, int rows, bool cp_weights) {
  WgmmaStageLayout l;
  const int mma_n = rows == 32 ? 2 * wgmma_n(m) : wgmma_n(m);  // K pairs: two K blocks' activations
  const bool compact = cp_weights && cp_compact_tile(rows);
  const int tile_rows = rows == 32   ? 64
                        : compact    ? cp_compact_tile_rows(rows)
                        : cp_weights ? 64 * wgmma_warpgroups(rows)
                                     : (rows + 7) / 8 * 8;  // 128-byte swizzle atoms of 8 rows
  l.w_bytes = tile_rows * kWgmmaKBlock;
  l.stage_bytes = l.w_bytes + mma_n * kWgmmaKBlock;
  l.tx_bytes = (rows == 32 ? 64 : rows) * kWgmmaKBlock + mma_n * kWgmmaKBlock;
  // The MMA's 64 W rows end past the tile: into the activation tile, then (TMA) the next stage and
  // after the last one the tail, or (compact cp.async) the next unit of the stage and after its
  // last one the stage's pad.
  const int overrun = std::max(0, 64 * wgmma_warpgroups(rows) - tile_rows - mma_n) * kWgmmaKBlock;
  (compact ? l.stage_pad_bytes : l.tail_bytes) = overrun;
  return l;
}

size_t wgmma_reduce_bytes(const Problem& p, const Config& c) {
  if (!c.wgmma || c.persist == 0 || c.splitk <= 1) return 0;
  const size_t consumers = size_t(c.rows) * 2;
  const size_t own = (consumers + size_t(c.splitk) - 1) / size_t(c.splitk);
  return size_t(c.splitk) * size_t(wgmma_n(p.m) / 2) * own * sizeof(float);
}

int64_t streamk_grid(const Problem& p, const Config& c, int sm_count) {
  if (c.streamk <= 0) return 0;
  return std::max<int64_t>(1, std::min<int64_t>(int64_t(c.streamk) * sm_count, streamk_units(p, c)));
}

size_t streamk_workspace_bytes(const Problem& p, const Config& c, int sm_count) {
  if (c.streamk <= 0) return 0;
  const size_t consumers = size_t(c.rows) * 2;
  return size_t(streamk_grid(p, c, sm_count)) * 2 * size_t(wgmma_n(p.m) / 2) * consumers * sizeof(float);
}

Verdict config_exists(const Config& c) {
  if (c.wgmma) return wgmma_config_exists(c);
  if (c.streamk != 0) return Verdict::no("streamk is a wgmma (v3) field");
  if (c.l2pf != 0) return Verdict::no("l2pf is a wgmma (v3) field");
  if (c.late_trigger) return Verdict::no("pdl=2 (the late trigger) is a wgmma (v3) field");
  if (c.early != 0) return Verdict::no("early is a wgmma (v3) field");
  if (c.persist != 0) return Verdict::no("persist is a wgmma (v3) field");
  if (c.cp_weights || c.reg_weights) return Verdict::no("wload is a wgmma (v3) field");
  if (c.rows != 16 && c.rows != 32 && c.rows != 64) return Verdict::no("rows must be 16, 32 or 64");
  if (c.stages != 1 && c.stages != 2 && c.stages != 4) return Verdict::no("stages must be 1, 2 or 4");
  // Two batches of rows/16 * stages * 32 weight bytes per lane are in flight; beyond 128 the
  // registers spill.
  if (c.row_tiles() * c.stages > 4) return Verdict::no("rows/16 * stages must be <= 4 (register budget)");
  if (c.warps != 1 && c.warps != 2 && c.warps != 4 && c.warps != 8)
    return Verdict::no("warps must be 1, 2, 4 or 8");
  if (c.splitk < 1 || c.splitk > kMaxSplitK) return Verdict::no("splitk must be in 1..8 (cluster size)");
  return Verdict::yes();
}

size_t shared_bytes(const Problem& p, const Config& c) {
  // aonce=1: the weight ring, the activation row, the ring's barriers and the activation's (no
  // alignment slack).
  if (c.wgmma && c.aonce)
    return size_t(c.stages) * kAonceStageBytes + size_t(aonce_act_bytes(p.k)) + size_t(c.stages) * 16 + 8;
  // v3 with weights in registers: activation slots only (1024-aligned like the other kernels).
  if (c.wgmma && c.reg_weights) return size_t(c.stages) * size_t(wgmma_n(p.m)) * kRegSlotK + 1024;
  // v3: the ring plus 1 KB to align it to 1024 bytes (128-byte swizzle atoms); fitted rows: and
  // what the last stage's wgmma reads past it.
  if (c.wgmma) {
    const WgmmaStageLayout l = wgmma_stage_layout(p.m, c.rows, c.cp_weights);
    return size_t(c.stages) * (size_t(c.kblocks) * size_t(l.stage_bytes) + size_t(l.stage_pad_bytes)) +
           size_t(l.tail_bytes) + 1024 +
           wgmma_reduce_bytes(p, c);
  }
  // Per thread R*MT*4 fp32 accumulators; one slab per warp, plus the block's partial sum that
  // the other blocks of the cluster read when K is split.
  const size_t per_slab = size_t(c.row_tiles()) * m_tiles(p.m) * 4 * 32 * sizeof(float);
  return per_slab * size_t(c.warps + (c.splitk > 1 ? 1 : 0));
}

Verdict can_implement(const Problem& p, const Config& c, int cc) {
  if (c.wgmma) return wgmma_can_implement(p, c, cc);
  if (Verdict v = config_exists(c); !v) return v;
  if (cc < 89) return Verdict::no("FP8 conversion (cvt e4m3x2) needs compute capability >= 8.9");
  if (c.splitk > 1 && cc < 90) return Verdict::no("split-K uses thread-block clusters (compute capability >= 9.0)");
  if (p.m < 1 || p.m > kMaxM) return Verdict::no("m must be in 1..32 (small_m is a decode kernel)");
  if (p.n < 16 || p.n % 16) return Verdict::no("n must be a positive multiple of 16");
  if (p.k < 16 || p.k % 16) return Verdict::no("k must be a positive multiple of 16");
  if (p.k > (int64_t(1) << 30)) return Verdict::no("k must be <= 2^30");
  if (p.n / 16 > (int64_t(1) << 30)) return Verdict::no("n is too large for the grid");
  if (p.batch < 1 || p.batch > 65535) return Verdict::no("batch must be in 1..65535 (grid z)");
  if (!is_fp8(p.a_type) || !is_fp8(p.b_type)) return Verdict::no("A and B must be FP8");
  if (p.a_type == DType::kE5M2 && p.b_type == DType::kE5M2) return Verdict::no("e5m2 x e5m2 is not supported");
  if (p.out_type != DType::kBF16 && p.out_type != DType::kFP16) return Verdict::no("out must be bf16 or fp16");
  if (p.alignment < 16) return Verdict::no("A, B and out must be 16-byte aligned (16-byte loads)");
  const int64_t chunks = (p.k + kChunkK - 1) / kChunkK;
  if (c.splitk > chunks) return Verdict::no("splitk must be <= ceil(k/64): every split needs K to read");
  // Per lane: rows/16 * ceil(m/8) * 4 fp32 accumulators and two batches of stages * (2 * rows/16
  // + ceil(m/8)) 16-byte loads; beyond these the kernel spills (it has no instantiation).
  const int mt = m_tiles(p.m);
  if (c.row_tiles() * mt > 8) return Verdict::no("rows/16 * ceil(m/8) must be <= 8 (registers)");
  if (c.stages * (2 * c.row_tiles() + mt) > 16)
    return Verdict::no("stages * (2 * rows/16 + ceil(m/8)) must be <= 16 (registers)");
  if (shared_bytes(p, c) > 48 * 1024)
    return Verdict::no("warps * rows/16 * ceil(m/8) must be <= 64 (reduction buffer <= 48 KB)");
  return Verdict::yes();
}

}  // namespace fp8gemm::small_m
