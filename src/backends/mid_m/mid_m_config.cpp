// mid_m tactic names: printing, parsing (canonical spellings only) and which configs exist.
#include "backends/mid_m/mid_m_config.h"

#include <sstream>

#include "fp8gemm/check.h"
#include "core/tactic_fields.h"

namespace fp8gemm::mid_m {

Config ring(int rows, int splitk, int stages, Pdl pdl) {
  Config c;
  c.rows = rows;
  c.splitk = splitk;
  c.stages = stages;
  c.pdl = pdl;
  return c;
}

Config with_msplit(Config c, int blocks) {
  c.msplit = blocks;
  return c;
}

Config with_kstage(Config c, int kblocks) {
  c.kstage = kblocks;
  return c;
}

Config with_mcast(Config c) {
  c.mcast = 2;
  return c;
}

Config with_persist(Config c, int per_sm) {
  c.persist = per_sm;
  return c;
}

Config with_pdl(Config c, Pdl pdl) {
  c.pdl = pdl;
  return c;
}

std::string Config::to_string() const {
  std::ostringstream os;
  os << "rows=" << rows << ",splitk=" << splitk << ",stages=" << stages << ",pdl=" << int(pdl);
  if (msplit > 1) os << ",msplit=" << msplit;
  if (mcast > 1) os << ",mcast=" << mcast;
  if (persist > 0) os << ",persist=" << persist;
  if (kstage > 1) os << ",kstage=" << kstage;
  return os.str();
}

namespace {

constexpr const char* kGrammar = "rows=R,splitk=S,stages=P,pdl=0|1|2[,msplit=T][,mcast=2][,persist=P][,kstage=2]";

}  // namespace

Config parse_config(std::string_view text) {
  const auto fail = [&](const std::string& why) {
    FP8GEMM_FAIL(kInvalidArgument, "mid_m tactic '", text, "': ", why);
  };
  Config c;
  bool have[4] = {};  // rows, splitk, stages, pdl
  for (const TacticField& f : split_tactic_fields(text, "mid_m", text, kGrammar)) {
    const std::string_view key = f.key;
    if (key != "rows" && key != "splitk" && key != "stages" && key != "pdl" && key != "msplit" && key != "mcast" &&
        key != "persist" && key != "kstage")
      fail("unknown field '" + std::string(key) + "' (expected " + kGrammar + ")");
    const int v = tactic_field_int(f, "mid_m", text);
    if (key == "rows") {
      c.rows = v;
      have[0] = true;
    } else if (key == "splitk") {
      c.splitk = v;
      have[1] = true;
    } else if (key == "stages") {
      c.stages = v;
      have[2] = true;
    } else if (key == "pdl") {
      if (v < 0 || v > 2) fail("pdl must be 0, 1 or 2 (2: dependents launch after the K loop)");
      c.pdl = Pdl(v);
      have[3] = true;
    } else if (key == "msplit") {
      c.msplit = v;
    } else if (key == "mcast") {
      c.mcast = v;
    } else if (key == "kstage") {
      c.kstage = v;
    } else {  // persist
      c.persist = v;
    }
  }
  for (bool h : have)
    if (!h) fail(std::string("rows, splitk, stages and pdl are required (expected ") + kGrammar + ")");
  const Verdict v = config_exists(c);
  if (!v) fail(v.reason);
  // Another order, leading zeros, '+', msplit=1, mcast=1 or kstage=1 name the same config: only the
  // canonical spelling does.
  if (c.to_string() != text) fail("not canonical; did you mean '" + c.to_string() + "'?");
  return c;
}

Verdict config_exists(const Config& c) {
  if (c.rows != 64 && c.rows != 128) return Verdict::no("rows must be 64 (one consumer warpgroup) or 128 (two)");
  if (c.splitk < 1 || c.splitk > kMaxSplitK) return Verdict::no("splitk must be in 1..8 (cluster size)");
  if (c.stages < kMinStages || c.stages > kMaxStages) return Verdict::no("stages must be in 2..32");
  if (c.msplit != 1 && c.msplit != 2 && c.msplit != kMaxMSplit)
    return Verdict::no("msplit must be 2 or 4 (blocks sharing a row tile's activation rows; absent = 1)");
  if (c.mcast != 1 && c.mcast != 2) return Verdict::no("mcast must be 2 (absent = 1: no multicast)");
  if (c.kstage != 1 && c.kstage != kMaxKStage)
    return Verdict::no("kstage must be 2 (K blocks a ring stage holds; absent = 1)");
  if (c.cluster_blocks() > kMaxClusterBlocks)
    return Verdict::no("mcast * splitk must be <= 8 (one cluster of at most 8 blocks)");
  if (c.persist < 0 || c.persist > kMaxPersist) return Verdict::no("persist must be 1 or 2 (blocks per SM; absent = 0)");
  if (c.persist > 0 && c.splitk > 1)
    return Verdict::no("persist=P needs splitk=1 (a persistent block's ring streams the next tile, so it cannot "
                       "hold the split-K partial sums)");
  return Verdict::yes();
}

}  // namespace fp8gemm::mid_m
