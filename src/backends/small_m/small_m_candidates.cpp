// The configs worth timing for a problem (candidate_configs): a table of rules, each a condition on
// the problem and the configs it offers, applied in order; and small_m's own default
// (default_config): the generated default rules, which pick among those candidates by recipe, else
// the fill rule. Host-only, so the CPU tests cover it.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/small_m/small_m_config.h"
#include "backends/small_m/small_m_layout.h"
#include "backends/small_m/small_m_recipe.h"
#include "fp8gemm/check.h"  // FP8GEMM_REQUIRE
#include "core/decision_tables.h"

namespace fp8gemm::small_m {

namespace {

// What the rules read: the problem, the device's SM count, and the quantities they are built on
// (small_m_recipe.h: the same ones a recipe computes).
struct Setting {
  const Problem& p;
  int sms;

  int64_t tiles(int rows) const { return row_tiles(p, rows); }
  // Weights of at most 40 MB, which stay in the L2 across calls: where the twins that trade
  // streaming rate for a quieter kernel boundary (pdl=2, early=4) and a few more shapes pay off.
  bool small_weights() const { return p.n * p.k * p.batch <= (int64_t(40) << 20); }
  int fill_splitk(int rows, int64_t target) const { return small_m::fill_splitk(p, rows, target); }
  // The deepest ring (4..16 stages) with which `per_sm` blocks of `c` share an SM; 0 if none.
  int ring(const Config& c, int per_sm) const { return deepest_ring(p, c, per_sm); }
  int fitted_rows_at(int per_sm) const { return small_m::fitted_rows_at(p, per_sm, sms); }
  // K pairs: the split that gives each SM at most one block in one wave (1 where the row tiles of
  // 32 rows reach the SMs).
  int kpair_splitk() const { return within_splitk(p, 32, 1, sms); }
};

// The candidate list being built: what cannot run `p`, or is offered already, is dropped.
struct Candidates {
  const Problem& p;
  std::vector<Config> list;
  void add(const Config& c) {
    if (!can_implement(p, c, 90)) return;
    if (std::find(list.begin(), list.end(), c) == list.end()) list.push_back(c);
  }
};

// The TMA ring candidates with PDL at start and no other option: what the cp.async twins copy.
bool plain_tma(const Config& c) {
  return c.family == Family::kTmaRing && c.pdl == Pdl::kAtStart && c.early == 0 && c.kblocks == 1;
}

struct Rule {
  const char* offers;                         // what the rule adds, and why
  bool (*applies)(const Setting&);            // the condition on the problem
  void (*add)(const Setting&, Candidates&);   // the configs, in the order they are timed
};

bool always(const Setting&) { return true; }

// The rules, in order. A rule that offers twins reads the candidates of the rules above it.
const Rule kRules[] = {
    {"TMA ring, 64 and 128 rows: the rings 1..4 blocks per SM allow, split-K to about one block per "
     "SM, two, or one per block slot",
     always,
     [](const Setting& s, Candidates& out) {
       for (int rows : {64, 128})
         for (int occ : {1, 2, 3, 4})
           if (const int st = s.ring(tma_ring(rows, 1, 4), occ); st > 0)
             for (int64_t target : {int64_t(s.sms), int64_t(s.sms) * 2, int64_t(s.sms) * occ})
               out.add(tma_ring(rows, s.fill_splitk(rows, target), st));
     }},
    {"cp.async twins of the first 8 split-K TMA candidates and of every split-1 one: 16-byte copies "
     "in the kernel's own order stream faster than TMA where several blocks share a row tile's K",
     always,
     [](const Setting&, Candidates& out) {
       const std::vector<Config> tma = out.list;
       int split_twins = 0;
       for (const Config& c : tma)
         if (plain_tma(c) && c.splitk >= 2 && split_twins < 8) {
           ++split_twins;
           out.add(with_cp_weights(c));
         }
       for (const Config& c : tma)
         if (plain_tma(c) && c.splitk == 1) out.add(with_cp_weights(c));
     }},
    {"cp.async ring, 64 and 128 rows: about one block per SM (split-K of floor or ceil(SMs / row "
     "tiles), rings for 1 or 2 blocks per SM), and one wave of 2..4 blocks per SM (split rounded down)",
     always,
     [](const Setting& s, Candidates& out) {
       for (int rows : {64, 128}) {
         const int64_t tiles = s.tiles(rows);
         for (int64_t per_tile : {int64_t(s.sms) / tiles, (int64_t(s.sms) + tiles - 1) / tiles})
           for (int occ : {1, 2})
             if (const int st = s.ring(tma_ring(rows, 1, 4), occ); st > 0)
               out.add(cp_async_ring(rows, s.fill_splitk(rows, per_tile * tiles), st));
         for (int occ : {2, 3, 4})
           if (const int64_t per_tile = int64_t(occ) * s.sms / tiles; per_tile >= 1)
             if (const int st = s.ring(tma_ring(rows, 1, 4), occ); st > 0)
               out.add(cp_async_ring(rows, s.fill_splitk(rows, per_tile * tiles), st));
       }
     }},
    {"K pairs (m <= 16): at most one block per SM in one wave, rings for 1..3 blocks per SM, TMA and "
     "cp.async: small weights fill the SMs without the split-K reduction",
     [](const Setting& s) { return s.p.m <= 16; },
     [](const Setting& s, Candidates& out) {
       const int split = s.kpair_splitk();
       for (int occ : {1, 2, 3})
         if (const int st = s.ring(tma_ring(32, 1, 4), occ); st > 0) {
           out.add(tma_ring(32, split, st));
           out.add(cp_async_ring(32, split, st));
         }
     }},
    {"K pairs, two a stage (TMA), on long K in one wave of at most one block per SM: the deepest "
     "ring one block fits and two stages less",
     [](const Setting& s) { return s.p.m <= 16 && s.p.k >= 8192 && s.tiles(32) * s.kpair_splitk() <= s.sms; },
     [](const Setting& s, Candidates& out) {
       const int split = s.kpair_splitk();
       if (const int st = s.ring(with_kblocks(tma_ring(32, 1, 4), 2), 1); st > 0)
         for (int less : {0, 2})
           if (st - less >= 4) out.add(with_kblocks(tma_ring(32, split, st - less), 2));
     }},
    {"activation once (m = 1, small weights): the ring holds weights only, as deep as two blocks per "
     "SM fit",
     [](const Setting& s) { return s.p.m == 1 && s.small_weights(); },
     [](const Setting& s, Candidates& out) {
       if (const int st = s.ring(activation_once(4), 2); st > 0) out.add(activation_once(st));
     }},
    {"fitted rows that make the grid 2, 3 or 4 blocks per SM, no split-K, the ring for that "
     "occupancy, TMA and cp.async",
     always,
     [](const Setting& s, Candidates& out) {
       for (int per_sm = 2; per_sm <= 4; ++per_sm) {
         const int rows = s.fitted_rows_at(per_sm);
         if (rows == 0) continue;
         if (const int st = s.ring(tma_ring(rows, 1, 4), per_sm); st > 0) out.add(tma_ring(rows, 1, st));
         if (const int st = s.ring(cp_async_ring(rows, 1, 4), per_sm); st > 0) out.add(cp_async_ring(rows, 1, st));
       }
     }},
    {"fitted rows at one block per SM with several K blocks a stage (such a block's one-K-block "
     "stages are too small for its producer): TMA with four and the deepest ring; cp.async with four "
     "(one warpgroup: the deepest ring and one stage less) or two (two warpgroups)",
     [](const Setting& s) { return s.fitted_rows_at(1) > 0 && k_blocks(s.p) >= 8; },
     [](const Setting& s, Candidates& out) {
       const int rows = s.fitted_rows_at(1);
       if (const int st = s.ring(with_kblocks(tma_ring(rows, 1, 4), 4), 1); st > 0)
         out.add(with_kblocks(tma_ring(rows, 1, st), 4));
       const int cp_kblocks = warpgroups(rows) == 1 ? 4 : 2;
       if (const int st = s.ring(with_kblocks(cp_async_ring(rows, 1, 4), cp_kblocks), 1); st > 0) {
         out.add(with_kblocks(cp_async_ring(rows, 1, st), cp_kblocks));
         if (cp_kblocks == 4 && st > 4) out.add(with_kblocks(cp_async_ring(rows, 1, st - 1), 4));
       }
     }},
    {"the same fitted rows with two K blocks a stage (TMA, small weights): the ring two blocks per SM "
     "fit and one stage less, so that the next kernel's block fits beside this one",
     [](const Setting& s) { return s.fitted_rows_at(1) > 0 && k_blocks(s.p) >= 8 && s.small_weights(); },
     [](const Setting& s, Candidates& out) {
       const int rows = s.fitted_rows_at(1);
       if (const int st = s.ring(with_kblocks(tma_ring(rows, 1, 4), 2), 2); st > 0)
         for (int less : {0, 1})
           if (st - less >= 4) out.add(with_kblocks(tma_ring(rows, 1, st - less), 2));
     }},
    {"persistent, 64 and 128 rows, 1 or 2 blocks per SM, a ring that leaves one block's room for the "
     "next kernel; the two best-utilized splits, split-K only at 1 block per SM where one round of "
     "clusters covers every unit (a cluster walking several units with split-K is slow)",
     always,
     [](const Setting& s, Candidates& out) {
       for (int rows : {64, 128})
         for (int per_sm : {1, 2}) {
           int added = 0;
           for (int sk : persist_splits(s.p, rows, per_sm, s.sms)) {
             if (added == 2) break;
             if (sk > 1 && (per_sm > 1 || int64_t(per_sm) * s.sms / sk < s.tiles(rows))) continue;
             if (const int st = s.ring(persistent(rows, sk, 4, per_sm), per_sm + 1); st > 0) {
               out.add(persistent(rows, sk, st, per_sm));
               ++added;
             }
           }
         }
     }},
    {"cp.async ring, 64 rows, split-K 2, the ring two blocks per SM fit (small weights): a split the "
     "rules above do not reach",
     [](const Setting& s) { return s.small_weights(); },
     [](const Setting& s, Candidates& out) {
       if (const int st = s.ring(tma_ring(64, 1, 4), 2); st > 0) out.add(cp_async_ring(64, 2, st));
     }},
    {"pdl=2 twins of every candidate above with PDL at start (small weights; not persistent): the "
     "next kernel's blocks then do not compete with this one's weight stream",
     [](const Setting& s) { return s.small_weights(); },
     [](const Setting&, Candidates& out) {
       const std::vector<Config> above = out.list;
       for (const Config& c : above)
         if (c.pdl == Pdl::kAtStart) out.add(with_pdl(c, Pdl::kAfterKLoop));
     }},
    {"early=4 twins of every TMA ring candidate above deeper than 4 stages (small weights)",
     [](const Setting& s) { return s.small_weights(); },
     [](const Setting&, Candidates& out) {
       const std::vector<Config> above = out.list;
       for (const Config& c : above)
         if (c.family == Family::kTmaRing && c.early == 0 && c.stages > 4) out.add(with_early(c, 4));
     }},
};

}  // namespace

Config fill_config(const Problem& p, int sm_count, int cc) {
  FP8GEMM_REQUIRE(sm_count > 0, kInternal, "small_m: sm_count must be known");
  const Setting s{p, sm_count};
  // K > 1024: the TMA ring, 64-row blocks, split-K to about one block per SM, the deepest ring with
  // which two blocks share an SM. K <= 1024 (too little K to split): one block per 64-row tile
  // with cp.async weights, the same ring depth; it was the faster one-shot kernel there.
  const Config c = p.k > 1024 ? tma_ring(64, s.fill_splitk(64, sm_count), std::max(4, s.ring(tma_ring(64, 1, 4), 2)))
                              : cp_async_ring(64, 1, std::max(4, s.ring(cp_async_ring(64, 1, 4), 2)));
  const Verdict v = can_implement(p, c, cc);
  FP8GEMM_REQUIRE(v.ok, kUnsupported, "small_m cannot run ", p, ": ", v.reason);
  return c;
}

namespace {

// The generated default rules (core/decision_tables.h: small_m), each with its recipes, parsed once.
struct ParsedRule {
  const BoxRule* rule;
  std::vector<std::pair<std::string, Recipe>> recipes;
};

const std::vector<ParsedRule>& sm90_default_rules() {
  static const std::vector<BoxRule>& rules = decision_tables(90).small_m;
  static const std::vector<ParsedRule> parsed = [] {
    std::vector<ParsedRule> out;
    for (const BoxRule& r : rules) {
      ParsedRule pr{&r, {}};
      std::string_view rest = r.action;  // recipes, '|'-separated
      while (!rest.empty()) {
        const size_t bar = rest.find('|');
        const std::string text(rest.substr(0, bar));
        pr.recipes.emplace_back(text, parse_recipe(text));
        rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
      }
      out.push_back(std::move(pr));
    }
    return out;
  }();
  return parsed;
}

// The first rule that covers p (index into the rules, -1: none) and the config its first usable
// recipe gives (nullopt: no recipe gives one of small_m's candidates for p).
struct RuleChoice {
  int index = -1;
  std::string recipe;
  std::optional<Config> config;
};

RuleChoice rule_choice(const Problem& p, int sm_count, int cc) {
  RuleChoice out;
  if (cc != 90) return out;
  const std::vector<ParsedRule>& rules = sm90_default_rules();
  for (size_t i = 0; i < rules.size(); ++i) {
    if (!rules[i].rule->box.contains(p, sm_count)) continue;
    out.index = int(i);
    // Only configs the tuner would time: the rules were fitted on their measurements.
    const std::vector<Config> candidates = candidate_configs(p, sm_count, cc);
    for (const auto& [text, recipe] : rules[i].recipes) {
      const std::optional<Config> c = config_for(p, recipe, sm_count);
      if (c && std::find(candidates.begin(), candidates.end(), *c) != candidates.end()) {
        out.recipe = text;
        out.config = c;
        break;
      }
    }
    return out;  // the first rule that covers p decides, as the fit evaluated it
  }
  return out;
}

}  // namespace

Config default_config(const Problem& p, int sm_count, int cc) {
  FP8GEMM_REQUIRE(sm_count > 0, kInternal, "small_m: sm_count must be known");
  if (can_implement(p, tma_ring(64, 1, 2), cc))
    if (const RuleChoice r = rule_choice(p, sm_count, cc); r.config) return *r.config;
  return fill_config(p, sm_count, cc);
}

std::string default_rule(const Problem& p, int sm_count, int cc) {
  const RuleChoice r = can_implement(p, tma_ring(64, 1, 2), cc) ? rule_choice(p, sm_count, cc) : RuleChoice{};
  if (!r.config) return {};
  const BoxRule& rule = *sm90_default_rules()[size_t(r.index)].rule;
  return "small_m rule " + std::to_string(r.index) + " (" + rule.box.to_string() + ") -> " + r.recipe + " (" +
         rule.evidence + ")";
}

std::vector<Config> candidate_configs(const Problem& p, int sm_count, int cc) {
  if (cc != 90) return {};  // every small_m kernel is sm_90a's
  Candidates out{p, {fill_config(p, sm_count, cc)}};
  const Setting s{p, sm_count};
  for (const Rule& r : kRules)
    if (r.applies(s)) r.add(s, out);
  return out.list;
}

}  // namespace fp8gemm::small_m
