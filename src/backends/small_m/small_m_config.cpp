#include "backends/small_m/small_m_config.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <sstream>

#include "core/cuda_check.h"

namespace fp8gemm::small_m {

namespace {
// One SM's shared memory on sm_90 (228 KB), and per block beside its dynamic allocation: ~1 KB
// reserved by the system and the v3 kernels' 256 bytes of barriers.
constexpr int64_t kSmSharedBytes = 228 * 1024;
constexpr int64_t kBlockReservedSmem = 1024 + 256;

// Weights of at most 40 MB (the whole slice fits the L2): where the candidates for small weights
// (L2 lookahead, pdl=2 and early=4 twins, two K blocks a stage for fitted rows) are offered.
bool small_weights(const Problem& p) { return p.n * p.k * p.batch <= (int64_t(40) << 20); }

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
                 v3 ? "wgmma,rows=R,splitk=S,stages=P,l2pf=L,pdl=0|1|2[,early=E][,kblocks=B][,persist=B|,streamk=B]"
                          "[,wload=cp|reg])"
                    : "rows=R,splitk=S,warps=W,stages=P,pdl=0|1)");
  };
  if (text.substr(0, key.size()) != key || text.size() <= key.size() || text[key.size()] != '=')
    fail(v3 ? "fields must be wgmma, rows, splitk, stages, l2pf, pdl[, early][, kblocks][, persist or streamk][, wload] "
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
  std::string_view kblocks_field = split_off(",kblocks=");
  std::string_view early_field = split_off(",early=");
  const int pdl = take_field(rest, "pdl", true, text, v3);
  if (!early_field.empty()) c.early = take_field(early_field, "early", true, text, v3);
  if (!kblocks_field.empty()) c.kblocks = take_field(kblocks_field, "kblocks", true, text, v3);
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
                                     : "stages * (rows + 8 * ceil(m/8)) * 128 bytes (plus the split-K buffer when "
                                       "persistent) must fit 220 KB of shared memory");
  return Verdict::yes();
}

}  // namespace

WgmmaStageLayout wgmma_stage_layout(int64_t m, int rows, bool cp_weights) {
  WgmmaStageLayout l;
  const int mma_n = rows == 32 ? 2 * wgmma_n(m) : wgmma_n(m);  // K pairs: two K blocks' activations
  const bool compact = cp_weights && cp_compact_tile(m, rows);
  const int tile_rows = rows == 32   ? 64
                        : compact    ? cp_compact_tile_rows(m, rows)
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

namespace {

// Split-K that brings the warps in flight close to what the SMs hold (~16 warps per SM at
// <= 128 registers), without giving a warp less than one load batch of K.
int fill_splitk(const Problem& p, const Config& c, int sm_count) {
  const int64_t blocks = (p.n / 16 + c.row_tiles() - 1) / c.row_tiles() * p.batch;
  const int64_t target_warps = int64_t(sm_count) * 16;
  const int64_t have = blocks * c.warps;
  int64_t s = (target_warps + have / 2) / have;  // nearest
  const int64_t chunks = (p.k + kChunkK - 1) / kChunkK;
  s = std::min<int64_t>(s, chunks / (int64_t(c.warps) * c.stages));
  return int(std::clamp<int64_t>(s, 1, kMaxSplitK));
}

// v3: split-K that gives the grid at least `target` blocks (rounded up), keeping >= 4 K blocks
// (512 bytes of K per row) per split.
int wgmma_fill_splitk(const Problem& p, int rows, int64_t target) {
  const int64_t tiles = (p.n + rows - 1) / rows * p.batch;
  int64_t s = (target + tiles - 1) / tiles;
  const int64_t kblocks = wgmma_kblocks(p);
  s = std::min<int64_t>(s, std::max<int64_t>(1, kblocks / 4));
  return int(std::clamp<int64_t>(s, 1, kMaxSplitK));
}

// v3: the deepest ring, up to 16 stages of `kblocks` K blocks, with which `occ` blocks fit one
// SM's shared memory (228 KB; per block ~1 KB reserved by the system, `static_bytes` of barriers,
// up to 1 KB of alignment and `extra_bytes` beside the ring); 0 if < 4.
int wgmma_ring_stages(const Problem& p, int rows, int occ, int64_t static_bytes, int64_t extra_bytes,
                      bool cp_weights = false, int kblocks = 1) {
  const WgmmaStageLayout l = wgmma_stage_layout(p.m, rows, cp_weights);
  const int64_t per_block = std::min<int64_t>(kSmSharedBytes / occ - 1024 - static_bytes, int64_t(kWgmmaMaxSharedBytes)) -
                            1024 - extra_bytes - l.tail_bytes;
  const int64_t stage = int64_t(l.stage_bytes) * kblocks + l.stage_pad_bytes;
  const int64_t st = std::min<int64_t>(kWgmmaMaxStages, per_block / stage);
  return st >= 4 ? int(st) : 0;
}

// v3 one-shot kernels: 512 bytes of barriers per block (two arrays of kWgmmaMaxRingStages);
// rings of at most 16 stages (deeper ones run only when named), of `kblocks` K blocks each.
int wgmma_stages_for(const Problem& p, int rows, int occ, bool cp_weights = false, int kblocks = 1) {
  return wgmma_ring_stages(p, rows, occ, 512, 0, cp_weights, kblocks);
}

// Fitted rows (33..127 but 64) that spread n over `per_sm` blocks per SM (rounded up: at most that
// many blocks); 0 where that row count is not a fitted one.
int fitted_rows_at(const Problem& p, int sm_count, int per_sm) {
  const int64_t per_batch = int64_t(per_sm) * sm_count / p.batch;
  if (per_batch < 1) return 0;
  const int64_t rows = (p.n + per_batch - 1) / per_batch;
  return fitted_rows(int(std::min<int64_t>(rows, 1024))) ? int(rows) : 0;
}

// v3 persistent: <= 512 bytes of barriers, and the split-K receive buffer beside the ring.
int wgmma_persist_stages(const Problem& p, int rows, int splitk, int occ) {
  const Config probe = wgmma_config(rows, splitk, 2, true, 0, 1);
  return wgmma_ring_stages(p, rows, occ, 512, int64_t(wgmma_reduce_bytes(p, probe)));
}

// v3 persistent: the grid holds min(units, persist * SMs / splitk) clusters and each walks
// units (row tile, batch) in steps of the grid; the fraction of the persist * SMs block slots
// that do useful work over the rounds (1 = every slot busy until the end).
double wgmma_persist_utilization(const Problem& p, int rows, int splitk, int persist, int sm_count) {
  const int64_t units = (p.n + rows - 1) / rows * p.batch;
  const int64_t grid = std::min<int64_t>(units, std::max<int64_t>(1, int64_t(persist) * sm_count / splitk));
  const int64_t rounds = (units + grid - 1) / grid;
  return double(units * splitk) / double(rounds * std::max<int64_t>(int64_t(persist) * sm_count, splitk));
}

// v3 persistent: the splits (1..8, >= 4 K blocks each) ordered by utilization, best first.
std::vector<int> wgmma_persist_splits(const Problem& p, int rows, int persist, int sm_count) {
  const int64_t kblocks = wgmma_kblocks(p);
  std::vector<int> s;
  for (int sk = 1; sk <= kMaxSplitK && (sk == 1 || sk * 4 <= kblocks); ++sk) s.push_back(sk);
  std::stable_sort(s.begin(), s.end(), [&](int a, int b) {
    return wgmma_persist_utilization(p, rows, a, persist, sm_count) >
           wgmma_persist_utilization(p, rows, b, persist, sm_count) + 1e-9;
  });
  return s;
}

// The v2 rule (any architecture with FP8 conversion).
Config v2_default_config(const Problem& p, int sm_count) {
  // Measured on the H200 (docs/perf/small_m.md, v2 bench over the DESIGN suite, m 1..32): at
  // m <= 8 one row tile per block, 2-chunk batches, 8 warps and PDL was the most frequent best
  // (geomean regret 1.06 against the best tactic per point); at m > 8 the activation conversion
  // dominates and two row tiles per block with 1-chunk batches share it (regret 1.06-1.10).
  // Split-K only to fill the SMs.
  Config c;
  const int64_t chunks = (p.k + kChunkK - 1) / kChunkK;
  if (p.m <= 8) {
    c.rows = 16;
    c.stages = 2;
    c.pdl = true;
  } else {
    c.rows = 32;
    c.stages = 1;
    c.pdl = false;
  }
  // A block's warps split its K range; a warp without a whole batch of K would idle.
  c.warps = 8;
  while (c.warps > 1 && (shared_bytes(p, c) > 48 * 1024 || int64_t(c.warps) * c.stages > chunks)) c.warps /= 2;
  c.splitk = fill_splitk(p, c, sm_count);
  return c;
}

// The v3 rule (sm_90): 64-row blocks, the deepest ring with which two blocks share an SM,
// split-K up to about one block per SM, PDL on (docs/perf/small_m.md, Version 3).
Config v3_default_config(const Problem& p, int sm_count) {
  const int rows = 64;
  return wgmma_config(rows, wgmma_fill_splitk(p, rows, sm_count), std::max(4, wgmma_stages_for(p, rows, 2)), true, 0);
}

}  // namespace

Config default_config(const Problem& p, int sm_count, int cc) {
  FP8GEMM_REQUIRE(sm_count > 0, kInternal, "small_m: sm_count must be known");
  Config c = v2_default_config(p, sm_count);
  if (cc == 90) {
    // Measured on the H200 (docs/perf/small_m.md, Version 3): v3 wins wherever K is longer
    // than 1 KB; at k <= 1024 (llama70b_tp8.o, k = 1024) the v2 kernel with 1-chunk batches and
    // PDL was faster at every M (3.8 us against 4.3 for the best v3 tactic at M = 1).
    if (p.k > 1024) {
      const Config v3 = v3_default_config(p, sm_count);
      if (can_implement(p, v3, cc)) return v3;
    } else {
      // k <= 1024: 64-row tiles, no split, the ring of the persistent kernel (room for the next
      // kernel's block), cp.async weights, one-shot. The persistent kernel itself was the default
      // (llama70b_tp8.o, docs/perf/small_m.md Version 4: 2.9-3.8 us at M = 1..32 against 3.7-3.9
      // for v2) until its cp.async twin beat it: H200 session 20, the whole acceptance, at all 7
      // suite points where both ran (1.4-15% faster), and by 1.16x timed again head to head at
      // M=32, where a tune had taken the persistent kernel on a tie (as the first small_m candidate).
      if (const int st = wgmma_persist_stages(p, 64, 1, 2); st > 0) {
        const Config one_shot = with_cp_weights(wgmma_config(64, 1, st, true, 0));
        if (can_implement(p, one_shot, cc)) return one_shot;
        const Config v4 = wgmma_config(64, 1, st, true, 0, 1);
        if (can_implement(p, v4, cc)) return v4;
      }
      c.rows = p.m <= 8 ? 16 : 32;
      c.stages = 1;
      c.warps = 8;
      c.pdl = true;
      c.splitk = fill_splitk(p, c, sm_count);
      if (!can_implement(p, c, cc)) c = v2_default_config(p, sm_count);
    }
  }
  const Verdict v = can_implement(p, c, cc);
  FP8GEMM_REQUIRE(v.ok, kUnsupported, "small_m cannot run ", p, ": ", v.reason);
  return c;
}

namespace {

// The cp.async-weight candidates (sm_90), from the v3 TMA candidates offered so far (`tma`, the
// default first), in the order they are offered; the caller drops what cannot run or repeats.
// - Twins of the split-K one-shot PDL ones, at most 8: the first H200 run of this path
//   (small_m_fixed_cost --set s6a, docs/perf/small_m.md Session 5) won 6 of 7 shapes with
//   split-K >= 2 and lost without it.
// - Twins of the split-1 ones; at about one block per SM (split-K of floor or ceil(SMs / row
//   tiles), rings for 1 or 2 blocks per SM); and the split that fills 2, 3 or 4 blocks per SM in
//   one wave (rounded down, where the TMA rule rounds up into a second wave). Session 8, H200,
//   M <= 16 over the suite: the first two made cp.async the best small_m tactic at 72 of 115
//   points (+3.2% geomean; >= 64 MB weights: median HBM fraction 0.85 -> 0.91), the one-wave
//   splits added 0.15% (docs/perf/small_m.md, Session 8).
std::vector<Config> cp_weight_candidates(const Problem& p, int sm_count, const std::vector<Config>& tma) {
  const auto one_shot_pdl = [](const Config& c) {
    return c.wgmma && c.persist == 0 && c.l2pf == 0 && c.pdl && !c.cp_weights && !c.reg_weights && !c.late_trigger;
  };
  std::vector<Config> out;
  constexpr size_t kCpTwins = 8;
  for (const Config& c : tma)
    if (one_shot_pdl(c) && c.splitk >= 2 && out.size() < kCpTwins) out.push_back(with_cp_weights(c));
  for (const Config& c : tma)
    if (one_shot_pdl(c) && c.splitk == 1) out.push_back(with_cp_weights(c));
  for (int rows : {64, 128}) {
    const int64_t tiles = (p.n + rows - 1) / rows * p.batch;
    for (int64_t per_sm : {int64_t(sm_count) / tiles, (int64_t(sm_count) + tiles - 1) / tiles})
      for (int occ : {1, 2})
        if (const int st = wgmma_stages_for(p, rows, occ); st > 0)
          out.push_back(with_cp_weights(wgmma_config(rows, wgmma_fill_splitk(p, rows, per_sm * tiles), st, true, 0)));
    for (int occ : {2, 3, 4})
      if (const int64_t per_wave = int64_t(occ) * sm_count / tiles; per_wave >= 1)
        if (const int st = wgmma_stages_for(p, rows, occ); st > 0)
          out.push_back(with_cp_weights(wgmma_config(rows, wgmma_fill_splitk(p, rows, per_wave * tiles), st, true, 0)));
  }
  return out;
}

}  // namespace

// Stream-K configs worth timing (sm_90): 64- and 128-row blocks, 1 or 2 blocks per SM, each with
// the deepest ring that fits that many blocks and with the one that leaves room for one more (the
// next kernel's block, which then streams its first weights while this one ends). Not offered by
// candidate_configs: on the H200 (session 9, docs/perf/small_m.md) they were the best small_m
// tactic at no suite point at M <= 16; they run when named.
std::vector<Config> streamk_candidates(const Problem& p) {
  std::vector<Config> out;
  for (int rows : {64, 128})
    for (int per_sm : {1, 2})
      for (int room : {0, 1})
        if (const int st = wgmma_stages_for(p, rows, per_sm + room); st > 0)
          out.push_back(streamk_config(rows, st, true, per_sm));
  return out;
}

std::vector<Config> candidate_configs(const Problem& p, int sm_count, int cc) {
  std::vector<Config> out{default_config(p, sm_count, cc)};
  const auto add = [&](Config c) {
    if (!can_implement(p, c, cc)) return;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  if (cc == 90) {
    // v3: 64- and 128-row blocks, rings as deep as 1, 2, 3 or 4 blocks per SM allow, split-K to
    // about one block per SM or to every block slot, PDL on; a few PDL-off and L2-prefetch ones.
    // (4 blocks per SM: the first v4 measurement had llama8b.o fastest with the ring that leaves
    // the most room to the next kernel's blocks.)
    for (int rows : {64, 128})
      for (int occ : {1, 2, 3, 4}) {
        const int stages = wgmma_stages_for(p, rows, occ);
        if (stages == 0) continue;
        for (int64_t target : {int64_t(sm_count), int64_t(sm_count) * 2, int64_t(sm_count) * occ})
          add(wgmma_config(rows, wgmma_fill_splitk(p, rows, target), stages, true, 0));
      }
    for (const Config& c : cp_weight_candidates(p, sm_count, out)) add(c);
    // rows=32 (K pairs, M <= 16): the split that gives each SM at most one block in one wave (none
    // where ceil(n/32) row tiles reach the SMs), rings for 1, 2 and 3 blocks per SM, TMA and
    // cp.async weights. Why (H200, session 13, docs/perf/small_m.md): at equal bytes per block a
    // grid of ~128 blocks without split-K ran 10-18% faster than with split-K 2 on 16-22 MB
    // weights; the 3-per-SM ring was the best tactic at 30 of 115 suite points when timed by name
    // (llama70b.qkv 0.87 -> 0.90-0.91 of the HBM floor with cp.async weights).
    if (p.m <= 16) {
      const int64_t tiles = (p.n + 31) / 32 * p.batch;
      const int split = wgmma_fill_splitk(p, 32, int64_t(sm_count) / tiles * tiles);
      for (int occ : {1, 2, 3})
        if (const int st = wgmma_stages_for(p, 32, occ); st > 0) {
          add(wgmma_config(32, split, st, true, 0));
          add(with_cp_weights(wgmma_config(32, split, st, true, 0)));
        }
      // Two pairs a stage (kblocks=2, TMA weights) where K >= 8192 and the grid is one wave of one
      // block per SM, with the deepest ring one block fits and two stages less. H200, session 28
      // (docs/perf/small_m.md): 4096 x 21504 in 21.41 us at M=1 (the best listed tactic 21.66),
      // 4096 x 8192 in 9.29 (9.59); at K <= 5376 they lost (4096 x 4096 5.70 against 5.68), with
      // cp.async weights they were slower, and in two waves far slower (8192 x 8192, 256 blocks:
      // 18.21 against 15.39).
      if (p.k >= 8192 && tiles * split <= sm_count)
        if (const int st = wgmma_stages_for(p, 32, 1, false, 2); st > 0)
          for (int less : {0, 2})
            if (st - less >= 4) add(with_kblocks(wgmma_config(32, split, st - less, true, 0), 2));
    }
    // Fitted rows: the rows per block that make the grid as many blocks as 2, 3 or 4 per SM
    // (rounded up: at most that many), where that is 33..127 rows but 64; no split-K; the ring
    // for that occupancy; TMA and cp.async. Why these (H200, session 14, docs/perf/small_m.md):
    // of 1..4 blocks per SM with rings for that occupancy and one more, only 2-3 blocks per SM with
    // the ring for that occupancy ever won; one block per SM (nano9b.down: 132 blocks of 34 rows)
    // never did. With cp.async on the whole tile they are the best small_m tactic at 20 of the 30
    // suite points at M <= 16 where they are offered, by up to 9.5% (nemoH8b.in_proj: 47 rows).
    for (int per_sm = 2; per_sm <= 4; ++per_sm) {
      const int rows = fitted_rows_at(p, sm_count, per_sm);
      if (rows == 0) continue;
      if (const int st = wgmma_stages_for(p, rows, per_sm); st > 0) add(wgmma_config(rows, 1, st, true, 0));
      if (const int st = wgmma_stages_for(p, rows, per_sm, true); st > 0)
        add(with_cp_weights(wgmma_config(rows, 1, st, true, 0)));
    }
    // Fitted rows at one block per SM (the rows that spread n over the SMs) with four K blocks per
    // stage (kblocks=4, TMA weights) and the deepest ring one block fits. Why (H200, session 15,
    // docs/perf/small_m.md): with one K block per stage such a block streams at ~25 GB/s, bound by
    // its single producer lane's work per stage; four per stage took nano9b.down (132 blocks of 34
    // rows) from 22.1 to 18.5 us, past the best other tactic (19.6), and llama70b.o (131 of 63) to
    // the K pairs' 16.4. Rings deeper than 16 stages of one K block (kWgmmaMaxRingStages) won
    // nowhere (session 15 call 2) and run only when named.
    // With cp.async weights (session 16, call 2, H200): four K blocks a stage with the deepest ring
    // and one stage less (the better of the two changed with the shape and M) for one warpgroup;
    // two K blocks a stage for two (four leave them < 4 stages). llama70b.o 16.0 us against 16.5
    // for the K pairs, llama70b.qkv (78 rows) 19.8 against 21.2, nano9b.qkv 8.4 against 8.5.
    if (const int rows = fitted_rows_at(p, sm_count, 1); rows > 0 && wgmma_kblocks(p) >= 2 * 4) {
      if (const int st = wgmma_stages_for(p, rows, 1, false, 4); st > 0)
        add(with_kblocks(wgmma_config(rows, 1, st, true, 0), 4));
      const int cp_kblocks = wgmma_warpgroups(rows) == 1 ? 4 : 2;
      if (const int st = wgmma_stages_for(p, rows, 1, true, cp_kblocks); st > 0) {
        add(with_kblocks(with_cp_weights(wgmma_config(rows, 1, st, true, 0)), cp_kblocks));
        if (cp_kblocks == 4 && st > 4) add(with_kblocks(with_cp_weights(wgmma_config(rows, 1, st - 1, true, 0)), 4));
      }
      // Weights <= 40 MB: two K blocks a stage (TMA) with the ring two blocks per SM fit and one
      // stage less, so that the next kernel's block fits beside this one (their pdl=2 and early=4
      // twins come below). H200, session 28 (docs/perf/small_m.md): nemotron3super.qkv (132
      // blocks of 35 rows) at M=1 in 5.85 us with 8 stages and early=4, the best listed 6.10.
      if (small_weights(p))
        if (const int st = wgmma_stages_for(p, rows, 2, false, 2); st > 0)
          for (int less : {0, 1})
            if (st - less >= 4) add(with_kblocks(wgmma_config(rows, 1, st - less, true, 0), 2));
    }
    // Weights in registers (",wload=reg") are not offered: on the H200 they lost to the best
    // other small_m tactic at every suite point at M = 1 and 16 (docs/perf/small_m.md, Session 6).
    // They run when named.
    if (const int st3 = wgmma_stages_for(p, 64, 3); st3 > 0) {
      add(wgmma_config(64, wgmma_fill_splitk(p, 64, sm_count), st3, false, 0));
      add(wgmma_config(64, wgmma_fill_splitk(p, 64, int64_t(sm_count) * 3), st3, false, 0));
    }
    // Persistent v3: 1 or 2 blocks per SM with a ring that leaves one block's room for the next
    // kernel (PDL: its blocks become resident and stream their first weights while this one
    // finishes). Measured on the H200 (docs/perf/small_m.md, Version 4): without split-K it won
    // llama70b.gate_up and llama70b_tp8.o; with split-K it is 1.5-2.5x slower as soon as a
    // cluster walks more than one unit (not understood), so split-K only where one round of
    // clusters covers every unit, and only at 1 block per SM (2 never won with split-K).
    for (int rows : {64, 128})
      for (int persist : {1, 2}) {
        const int64_t units = (p.n + rows - 1) / rows * p.batch;
        const std::vector<int> splits = wgmma_persist_splits(p, rows, persist, sm_count);
        int added = 0;
        for (int sk : splits) {
          if (added == 2) break;
          if (sk > 1 && (persist > 1 || int64_t(persist) * sm_count / sk < units)) continue;
          if (const int st = wgmma_persist_stages(p, rows, sk, persist + 1); st > 0) {
            add(wgmma_config(rows, sk, st, true, 0, persist));
            ++added;
          }
        }
      }
    if (small_weights(p)) {
      if (const int st = wgmma_stages_for(p, 128, 3); st > 0)
        add(wgmma_config(128, wgmma_fill_splitk(p, 128, int64_t(sm_count) * 2), st, true, 64));
      add(wgmma_config(64, wgmma_fill_splitk(p, 64, sm_count), std::max(4, wgmma_stages_for(p, 64, 2)), true, 8));
      // cp.async weights at split-K 2 with the two-blocks-per-SM ring: the fastest llama8b.o
      // configuration of the tool's first cp run (64,2,12: 6.16 us, the library's best 6.81),
      // which the split rule above (about one block per SM or per slot) does not reach.
      if (const int st = wgmma_stages_for(p, 64, 2); st > 0) add(with_cp_weights(wgmma_config(64, 2, st, true, 0)));
      // Late-trigger twins (pdl=2) of the one-shot PDL candidates: on the H200 (session 8) the
      // best small_m tactic got 2.5-3.5% faster with it at 8 of 40 points of 16-33.6 MB weights
      // (nano9b.qkv, llama8b.qkv, llama8b.o, nemotron3super.shared_down) and 1.5% slower in
      // geomean on weights >= 64 MB, where it is not offered.
      // Twins of every candidate offered so far (collected first: add grows `out`); the ones the
      // field's rules refuse (config_exists) are dropped by add.
      const auto add_twins = [&](auto twin_of) {
        std::vector<Config> twins;
        for (const Config& c : out) twins.push_back(twin_of(c));
        for (const Config& c : twins) add(c);
      };
      add_twins([](const Config& c) { return with_late_trigger(c); });
      // Twins with early=4 of the TMA one-shot PDL candidates (pdl=1 and 2) whose ring is deeper:
      // on the H200 (session 10, docs/perf/small_m.md) they made the best small_m tactic 2-5%
      // faster at about half of the 16-34 MB points (+0.6% geomean over the suite at M <= 16);
      // the same cap on the cp.async kernel gained nothing, and on weights > 40 MB it lost.
      add_twins([](const Config& c) { return c.early == 0 && c.stages > kEarlyStages ? with_early(c, kEarlyStages) : c; });
    }
  }
  // v2: its default (with and without PDL) and, where v3 cannot run, the other shapes of block.
  const Config v2 = v2_default_config(p, sm_count);
  add(v2);
  Config other_pdl = v2;
  other_pdl.pdl = !other_pdl.pdl;
  add(other_pdl);
  for (int rows : {16, 32, 64})
    for (int stages : {1, 2, 4})
      for (int warps : {4, 8}) {
        Config c;
        c.rows = rows;
        c.stages = stages;
        c.warps = warps;
        if (!config_exists(c)) continue;
        // On sm_90 only the v2 shapes that still won a point against v3 (docs/perf/small_m.md).
        if (cc == 90 && !(warps == 8 && ((rows == 16 && stages <= 2) || (rows == 32 && stages == 1)))) continue;
        c.splitk = fill_splitk(p, c, sm_count);
        add(c);
        c.pdl = !c.pdl;
        if (cc == 90) add(c);
      }
  return out;
}

}  // namespace fp8gemm::small_m
