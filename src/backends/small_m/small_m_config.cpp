#include "backends/small_m/small_m_config.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "core/cuda_check.h"

namespace fp8gemm::small_m {

std::string Config::to_string() const {
  std::ostringstream os;
  os << "rows=" << rows << ",splitk=" << splitk << ",warps=" << warps << ",stages=" << stages
     << ",pdl=" << (pdl ? 1 : 0);
  return os.str();
}

namespace {

// Reads "<key>=<int>" at the front of `text` and the ',' after it (unless `last`).
int take_field(std::string_view& text, std::string_view key, bool last, std::string_view whole) {
  const auto fail = [&](const char* why) {
    FP8GEMM_FAIL(kInvalidArgument, "small_m tactic '", whole, "': ", why, " (expected ",
                 "rows=R,splitk=S,warps=W,stages=P,pdl=0|1)");
  };
  if (text.substr(0, key.size()) != key || text.size() <= key.size() || text[key.size()] != '=')
    fail("fields must be rows, splitk, warps, stages, pdl in this order");
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
  c.rows = take_field(rest, "rows", false, text);
  c.splitk = take_field(rest, "splitk", false, text);
  c.warps = take_field(rest, "warps", false, text);
  c.stages = take_field(rest, "stages", false, text);
  const int pdl = take_field(rest, "pdl", true, text);
  FP8GEMM_REQUIRE(pdl == 0 || pdl == 1, kInvalidArgument, "small_m tactic '", text, "': pdl must be 0 or 1");
  c.pdl = pdl == 1;
  const Verdict v = config_exists(c);
  FP8GEMM_REQUIRE(v.ok, kInvalidArgument, "small_m tactic '", text, "': ", v.reason);
  // Leading zeros or '+' would parse to the same numbers: only the canonical spelling names it.
  FP8GEMM_REQUIRE(c.to_string() == text, kInvalidArgument, "small_m tactic '", text,
                  "' is not canonical; did you mean '", c.to_string(), "'?");
  return c;
}

Verdict config_exists(const Config& c) {
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
  // Per thread R*MT*4 fp32 accumulators; one slab per warp, plus the block's partial sum that
  // the other blocks of the cluster read when K is split.
  const size_t per_slab = size_t(c.row_tiles()) * m_tiles(p.m) * 4 * 32 * sizeof(float);
  return per_slab * size_t(c.warps + (c.splitk > 1 ? 1 : 0));
}

Verdict can_implement(const Problem& p, const Config& c, int cc) {
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

}  // namespace

Config default_config(const Problem& p, int sm_count, int cc) {
  FP8GEMM_REQUIRE(sm_count > 0, kInternal, "small_m: sm_count must be known");
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
  const Verdict v = can_implement(p, c, cc);
  FP8GEMM_REQUIRE(v.ok, kUnsupported, "small_m cannot run ", p, ": ", v.reason);
  return c;
}

std::vector<Config> candidate_configs(const Problem& p, int sm_count, int cc) {
  std::vector<Config> out{default_config(p, sm_count, cc)};
  const auto add = [&](Config c) {
    if (!can_implement(p, c, cc)) return;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  Config other_pdl = out.front();
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
        c.splitk = fill_splitk(p, c, sm_count);
        add(c);
      }
  return out;
}

}  // namespace fp8gemm::small_m
