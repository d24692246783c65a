// small_m recipes: names, the config a recipe gives a problem, and the recipes of a config.
#include "backends/small_m/small_m_recipe.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "backends/small_m/small_m_layout.h"
#include "fp8gemm/check.h"

namespace fp8gemm::small_m {

int64_t row_tiles(const Problem& p, int rows) { return (p.n + rows - 1) / rows * p.batch; }

int fill_splitk(const Problem& p, int rows, int64_t target) {
  const int64_t t = row_tiles(p, rows);
  const int64_t s = std::min<int64_t>((target + t - 1) / t, std::max<int64_t>(1, k_blocks(p) / 4));
  return int(std::clamp<int64_t>(s, 1, kMaxSplitK));
}

int fitted_rows_at(const Problem& p, int per_sm, int sms) {
  const int64_t per_batch = int64_t(per_sm) * sms / p.batch;
  if (per_batch < 1) return 0;
  const int64_t rows = (p.n + per_batch - 1) / per_batch;
  return is_fitted_rows(int(std::min<int64_t>(rows, 1024))) ? int(rows) : 0;
}

double persist_utilization(const Problem& p, int rows, int splitk, int persist, int sms) {
  const int64_t units = row_tiles(p, rows);
  const int64_t grid = std::min<int64_t>(units, std::max<int64_t>(1, int64_t(persist) * sms / splitk));
  const int64_t rounds = (units + grid - 1) / grid;
  return double(units * splitk) / double(rounds * std::max<int64_t>(int64_t(persist) * sms, splitk));
}

std::vector<int> persist_splits(const Problem& p, int rows, int persist, int sms) {
  std::vector<int> out;
  for (int sk = 1; sk <= kMaxSplitK && (sk == 1 || sk * 4 <= k_blocks(p)); ++sk) out.push_back(sk);
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
    return persist_utilization(p, rows, a, persist, sms) > persist_utilization(p, rows, b, persist, sms) + 1e-9;
  });
  return out;
}

int within_splitk(const Problem& p, int rows, int waves, int sms) {
  const int64_t tiles = row_tiles(p, rows);
  return fill_splitk(p, rows, int64_t(waves) * sms / tiles * tiles);
}

namespace {

constexpr int kMaxWaves = 4;       // fill / within: 1..4 x the SMs
constexpr int kMaxRingPerSm = 5;   // ring: the depth 1..5 blocks per SM fit
constexpr int kMaxRingLess = 3;    // ... less 0..3 stages
constexpr int kMinRecipeRing = 4;  // a per-SM ring shallower than this is no ring

Config base_config(const Recipe& r, int rows) {
  Config c;
  c.family = r.family;
  c.rows = rows;
  c.pdl = r.pdl;
  c.early = r.early;
  c.kblocks = r.kblocks;
  c.persist = r.persist;
  return c;
}

std::optional<int> split_for(const Problem& p, const Recipe& r, int rows, int sms) {
  switch (r.split_rule) {
    case Recipe::Split::kFixed:
      return r.split;
    case Recipe::Split::kFill:
      return fill_splitk(p, rows, int64_t(r.split) * sms);
    case Recipe::Split::kWithin:
      return within_splitk(p, rows, r.split, sms);
    case Recipe::Split::kUtilized: {
      const std::vector<int> splits = persist_splits(p, rows, std::max(1, r.persist), sms);
      if (r.split < 0 || size_t(r.split) >= splits.size()) return std::nullopt;
      return splits[size_t(r.split)];
    }
  }
  return std::nullopt;
}

const char* family_word(Family f) {
  switch (f) {
    case Family::kTmaRing: return "tma";
    case Family::kCpAsyncRing: return "cp";
    case Family::kActivationOnce: return "aonce";
    case Family::kPersistent: return "persist";
  }
  return "?";
}

}  // namespace

bool Recipe::operator==(const Recipe& o) const {
  return family == o.family && pdl == o.pdl && early == o.early && kblocks == o.kblocks && persist == o.persist &&
         rows_rule == o.rows_rule && rows == o.rows && split_rule == o.split_rule && split == o.split &&
         ring_rule == o.ring_rule && ring == o.ring && less == o.less;
}

std::string Recipe::to_string() const {
  std::ostringstream os;
  os << family_word(family);
  if (family == Family::kPersistent) os << "=" << persist;
  os << ",rows=" << (rows_rule == Rows::kFitted ? "fit" : "") << rows << ",split=";
  switch (split_rule) {
    case Split::kFixed: os << split; break;
    case Split::kFill: os << "fill" << split; break;
    case Split::kWithin: os << "within" << split; break;
    case Split::kUtilized: os << "util" << split; break;
  }
  os << ",ring=" << ring;
  if (ring_rule == Ring::kPerSm) os << "sm" << (less ? "-" + std::to_string(less) : "");
  os << ",pdl=" << int(pdl);
  if (early) os << ",early=" << early;
  if (kblocks > 1) os << ",kblocks=" << kblocks;
  return os.str();
}

Recipe parse_recipe(std::string_view text) {
  const auto fail = [&](const char* why) {
    FP8GEMM_FAIL(kInvalidArgument, "small_m recipe '", text, "': ", why,
                 " (expected <tma|cp|aonce|persist=P>,rows=<R|fitP>,split=<S|fillG|withinG|utilR>,"
                 "ring=<S|Rsm[-L]>,pdl=D[,early=E][,kblocks=B])");
  };
  const auto number = [&](std::string_view s) {
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) fail("a field's value is not an integer");
    return v;
  };
  const auto strip = [](std::string_view& s, std::string_view prefix) {
    if (s.substr(0, prefix.size()) != prefix) return false;
    s.remove_prefix(prefix.size());
    return true;
  };
  Recipe r;
  bool first = true;
  std::string_view rest = text;
  while (!rest.empty() || first) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (first) {
      first = false;
      if (item == "tma") r.family = Family::kTmaRing;
      else if (item == "cp") r.family = Family::kCpAsyncRing;
      else if (item == "aonce") r.family = Family::kActivationOnce;
      else if (strip(item, "persist=")) r.family = Family::kPersistent, r.persist = number(item);
      else fail("the first field names the kernel");
      continue;
    }
    if (strip(item, "rows=")) {
      r.rows_rule = strip(item, "fit") ? Recipe::Rows::kFitted : Recipe::Rows::kFixed;
      r.rows = number(item);
    } else if (strip(item, "split=")) {
      r.split_rule = strip(item, "fill")     ? Recipe::Split::kFill
                     : strip(item, "within") ? Recipe::Split::kWithin
                     : strip(item, "util")   ? Recipe::Split::kUtilized
                                             : Recipe::Split::kFixed;
      r.split = number(item);
    } else if (strip(item, "ring=")) {
      const size_t sm = item.find("sm");
      r.ring_rule = sm == std::string_view::npos ? Recipe::Ring::kFixed : Recipe::Ring::kPerSm;
      r.ring = number(item.substr(0, sm));
      r.less = 0;
      if (sm != std::string_view::npos) {
        std::string_view tail = item.substr(sm + 2);
        if (!tail.empty() && !strip(tail, "-")) fail("ring=Rsm-L");
        if (!tail.empty()) r.less = number(tail);
      }
    } else if (strip(item, "pdl=")) {
      const int v = number(item);
      if (v < 0 || v > 2) fail("pdl must be 0, 1 or 2");
      r.pdl = Pdl(v);
    } else if (strip(item, "early=")) {
      r.early = number(item);
    } else if (strip(item, "kblocks=")) {
      r.kblocks = number(item);
    } else {
      fail("unknown field");
    }
  }
  if (r.to_string() != text) fail("not canonical (fields in the order above, each once)");
  return r;
}

std::optional<Config> config_for(const Problem& p, const Recipe& r, int sms) {
  const int rows = r.rows_rule == Recipe::Rows::kFitted ? fitted_rows_at(p, r.rows, sms) : r.rows;
  if (rows <= 0) return std::nullopt;
  Config c = base_config(r, rows);
  const std::optional<int> split = split_for(p, r, rows, sms);
  if (!split) return std::nullopt;
  c.splitk = *split;
  if (r.ring_rule == Recipe::Ring::kFixed) {
    c.stages = r.ring;
  } else {
    const int deepest = deepest_ring(p, c, r.ring);
    if (deepest == 0 || deepest - r.less < kMinRecipeRing) return std::nullopt;
    c.stages = deepest - r.less;
  }
  if (!config_exists(c)) return std::nullopt;
  return c;
}

std::vector<Recipe> recipes_of(const Problem& p, const Config& c, int sms) {
  Recipe base;
  base.family = c.family;
  base.pdl = c.pdl;
  base.early = c.early;
  base.kblocks = c.kblocks;
  base.persist = c.persist;
  std::vector<std::pair<Recipe::Rows, int>> rows;
  if (is_fitted_rows(c.rows))
    for (int per_sm = 1; per_sm <= kMaxWaves; ++per_sm)
      if (fitted_rows_at(p, per_sm, sms) == c.rows) rows.push_back({Recipe::Rows::kFitted, per_sm});
  rows.push_back({Recipe::Rows::kFixed, c.rows});
  // No split reads as no split; a persistent grid's split as its utilization rank.
  std::vector<std::pair<Recipe::Split, int>> splits;
  if (c.splitk == 1) splits.push_back({Recipe::Split::kFixed, 1});
  if (c.family == Family::kPersistent) {
    const std::vector<int> ranked = persist_splits(p, c.rows, std::max(1, c.persist), sms);
    for (size_t i = 0; i < ranked.size() && i < 2; ++i)
      if (ranked[i] == c.splitk) splits.push_back({Recipe::Split::kUtilized, int(i)});
  }
  for (int w = 1; w <= kMaxWaves; ++w)
    if (fill_splitk(p, c.rows, int64_t(w) * sms) == c.splitk) splits.push_back({Recipe::Split::kFill, w});
  for (int w = 1; w <= kMaxWaves; ++w)
    if (within_splitk(p, c.rows, w, sms) == c.splitk) splits.push_back({Recipe::Split::kWithin, w});
  if (c.splitk != 1) splits.push_back({Recipe::Split::kFixed, c.splitk});
  std::vector<std::pair<int, int>> rings;  // (per SM, less); (0, stages) for a fixed depth
  for (int less = 0; less <= kMaxRingLess; ++less)
    for (int per_sm = 1; per_sm <= kMaxRingPerSm; ++per_sm) {
      const int deepest = deepest_ring(p, c, per_sm);
      if (deepest > 0 && deepest - less >= kMinRecipeRing && deepest - less == c.stages) rings.push_back({per_sm, less});
    }
  rings.push_back({0, c.stages});
  std::vector<Recipe> out;
  for (const auto& [rows_rule, rows_value] : rows)
    for (const auto& [split_rule, split_value] : splits)
      for (const auto& [per_sm, value] : rings) {
        Recipe r = base;
        r.rows_rule = rows_rule;
        r.rows = rows_value;
        r.split_rule = split_rule;
        r.split = split_value;
        r.ring_rule = per_sm ? Recipe::Ring::kPerSm : Recipe::Ring::kFixed;
        r.ring = per_sm ? per_sm : value;
        r.less = per_sm ? value : 0;
        const std::optional<Config> back = config_for(p, r, sms);
        if (back && *back == c) out.push_back(r);
      }
  return out;
}

Recipe recipe_of(const Problem& p, const Config& c, int sms) {
  const std::vector<Recipe> all = recipes_of(p, c, sms);
  FP8GEMM_REQUIRE(!all.empty(), kInternal, "small_m: no recipe gives ", c.to_string(), " on ", p);
  return all.front();
}

}  // namespace fp8gemm::small_m
