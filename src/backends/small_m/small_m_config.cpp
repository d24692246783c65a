// small_m tactic names: printing, parsing (canonical spellings only) and which configs exist.
#include "backends/small_m/small_m_config.h"

#include <sstream>

#include "backends/small_m/small_m_layout.h"
#include "fp8gemm/check.h"
#include "core/tactic_fields.h"

namespace fp8gemm::small_m {

Block Config::block() const {
  if (rows == 32) return Block::kKPairs;
  return is_fitted_rows(rows) ? Block::kFitted : Block::kWarpgroups;
}

Config tma_ring(int rows, int splitk, int stages, Pdl pdl) {
  Config c;
  c.rows = rows;
  c.splitk = splitk;
  c.stages = stages;
  c.pdl = pdl;
  return c;
}

Config cp_async_ring(int rows, int splitk, int stages, Pdl pdl) {
  return with_cp_weights(tma_ring(rows, splitk, stages, pdl));
}

Config activation_once(int stages, Pdl pdl) {
  Config c = tma_ring(32, 1, stages, pdl);
  c.family = Family::kActivationOnce;
  c.kblocks = 2;
  return c;
}

Config persistent(int rows, int splitk, int stages, int per_sm, Pdl pdl) {
  Config c = tma_ring(rows, splitk, stages, pdl);
  c.family = Family::kPersistent;
  c.persist = per_sm;
  return c;
}

Config with_cp_weights(Config c) {
  if (c.family == Family::kTmaRing) c.family = Family::kCpAsyncRing;
  return c;
}

Config with_pdl(Config c, Pdl pdl) {
  c.pdl = pdl;
  return c;
}

Config with_early(Config c, int stages) {
  c.early = stages;
  return c;
}

Config with_kblocks(Config c, int kblocks) {
  c.kblocks = kblocks;
  return c;
}

std::string Config::to_string() const {
  std::ostringstream os;
  os << "wgmma,rows=" << rows << ",splitk=" << splitk << ",stages=" << stages << ",pdl=" << int(pdl);
  if (early > 0) os << ",early=" << early;
  if (kblocks > 1) os << ",kblocks=" << kblocks;
  if (family == Family::kActivationOnce) os << ",aonce=1";
  if (family == Family::kPersistent) os << ",persist=" << persist;
  if (family == Family::kCpAsyncRing) os << ",wload=cp";
  return os.str();
}

std::string Config::legacy_name() const {
  std::string name = to_string();
  return name.insert(name.find(",pdl="), ",l2pf=0");
}

namespace {

constexpr const char* kGrammar =
    "wgmma,rows=R,splitk=S,stages=P,pdl=0|1|2[,early=E][,kblocks=B][,aonce=1][,persist=P][,wload=cp]";

}  // namespace

Config parse_config(std::string_view text) {
  const auto fail = [&](const std::string& why) {
    FP8GEMM_FAIL(kInvalidArgument, "small_m tactic '", text, "': ", why);
  };
  constexpr std::string_view kPrefix = "wgmma,";
  if (text.substr(0, kPrefix.size()) != kPrefix) {
    if (text.find("warps=") != std::string_view::npos)
      fail("the mma.sync kernels (names without 'wgmma,') were removed; small_m runs wgmma tactics on sm_90a only");
    fail(std::string("expected ") + kGrammar);
  }
  Config c;
  c.pdl = Pdl::kOff;
  bool have[4] = {};  // rows, splitk, stages, pdl
  const auto set_family = [&](Family f) {
    if (c.family != Family::kTmaRing) fail("aonce=1, persist=P and wload=cp each name their own kernel: at most one");
    c.family = f;
  };
  for (const TacticField& f : split_tactic_fields(text.substr(kPrefix.size()), "small_m", text, kGrammar)) {
    if (f.key == "wload") {
      if (f.value == "reg") fail("wload=reg (weights in registers) was removed; wload is cp, or absent for TMA");
      if (f.value != "cp") fail("wload is cp (weights by cp.async), or absent for TMA");
      set_family(Family::kCpAsyncRing);
      continue;
    }
    if (f.key == "streamk") fail("streamk=B: the stream-K kernel was removed");
    const int v = tactic_field_int(f, "small_m", text);
    if (f.key == "rows") {
      c.rows = v;
      have[0] = true;
    } else if (f.key == "splitk") {
      c.splitk = v;
      have[1] = true;
    } else if (f.key == "stages") {
      c.stages = v;
      have[2] = true;
    } else if (f.key == "l2pf") {
      if (v != 0)
        fail("l2pf must be 0 or absent: the L2 prefetch lookahead (l2pf > 0) was removed; names written "
             "before the field was dropped still say l2pf=0");
    } else if (f.key == "pdl") {
      if (v < 0 || v > 2) fail("pdl must be 0, 1 or 2 (2: dependents launch after the K loop)");
      c.pdl = Pdl(v);
      have[3] = true;
    } else if (f.key == "early") {
      c.early = v;
    } else if (f.key == "kblocks") {
      c.kblocks = v;
    } else if (f.key == "aonce") {
      if (v != 1) fail("aonce must be 1 (absent = 0)");
      set_family(Family::kActivationOnce);
    } else if (f.key == "persist") {
      set_family(Family::kPersistent);
      c.persist = v;
    } else {
      fail("unknown field '" + std::string(f.key) + "' (expected " + kGrammar + ")");
    }
  }
  for (bool h : have)
    if (!h) fail(std::string("rows, splitk, stages and pdl are required (expected ") + kGrammar + ")");
  const Verdict v = config_exists(c);
  if (!v) fail(v.reason);
  // Another order, leading zeros or '+' name the same config: only the canonical spelling names it
  // (or the one caches written before l2pf was dropped hold).
  if (c.to_string() != text && c.legacy_name() != text) fail("not canonical; did you mean '" + c.to_string() + "'?");
  return c;
}

Verdict config_exists(const Config& c) {
  const bool ring = c.family == Family::kTmaRing || c.family == Family::kCpAsyncRing;
  if (c.rows < 32 || c.rows > 128)
    return Verdict::no("rows must be 32 (K pairs), 64 or 128 (one or two warpgroups), or fitted: 33..127 (one "
                       "warpgroup up to 64 rows, two above)");
  if (c.stages < kMinStages || c.stages > kMaxRingStages) return Verdict::no("stages must be in 2..32");
  if (c.splitk < 1 || c.splitk > kMaxSplitK) return Verdict::no("splitk must be in 1..8 (cluster size)");
  if (c.kblocks != 1 && c.kblocks != 2 && c.kblocks != 4)
    return Verdict::no("kblocks must be 2 or 4 (units per ring stage; absent = 1)");
  if (c.block() == Block::kKPairs && c.kblocks == 4)
    return Verdict::no("rows=32 (K pairs) takes kblocks=2 (two pairs, four K blocks, a stage) or none");
  if (c.persist != 0 && c.family != Family::kPersistent) return Verdict::no("persist is the persistent kernel's field");
  if (c.early != 0) {
    if (c.early < 1 || c.early >= c.stages)
      return Verdict::no("early must be in 1..stages-1 (stages requested before the wait; absent = the whole ring)");
    if (c.pdl == Pdl::kOff)
      return Verdict::no("early=E caps what is requested before waiting for the previous kernel: it needs pdl=1 or 2");
    if (c.family != Family::kTmaRing)
      return Verdict::no("early is for the one-shot kernel with TMA weights (not wload=cp, aonce or persist)");
  }
  if (ring) return Verdict::yes();
  if (c.family == Family::kActivationOnce) {
    if (c.rows != 32 || c.kblocks != 2 || c.splitk != 1)
      return Verdict::no("aonce=1 is for rows=32 (K pairs) with kblocks=2, splitk=1, TMA weights and no early");
    return Verdict::yes();
  }
  // kPersistent
  if (c.persist < 1 || c.persist > kMaxPersist) return Verdict::no("persist must be in 1..4 (blocks per SM)");
  if (c.block() != Block::kWarpgroups)
    return Verdict::no("persist=P has rows=64 or 128 (rows=32 K pairs and fitted rows are the one-shot rings' only)");
  if (c.stages > kMaxStages) return Verdict::no("persist=P rings hold at most 16 stages");
  if (c.pdl == Pdl::kAfterKLoop) return Verdict::no("pdl=2 is for the one-shot kernels (not persist)");
  if (c.kblocks != 1) return Verdict::no("kblocks=B is for the one-shot kernels (not persist)");
  return Verdict::yes();
}

}  // namespace fp8gemm::small_m
