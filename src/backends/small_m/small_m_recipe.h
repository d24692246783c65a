// A small_m Recipe: a config described by how its parameters follow from the problem and the
// device, so that one recipe names the same kind of kernel on every shape (the default rules,
// core/decision_tables.h: small_m, store recipes). config_for() turns a recipe into the config for
// one problem; recipe_of() finds the recipe of a config, and config_for(p, recipe_of(p, c)) == c
// for every candidate c of every problem. Host-only, so the CPU tests cover it.
//
// The quantities the candidate rules (small_m_candidates.cpp) are built on live here too, so that
// a recipe and a candidate compute rows, split-K and ring depth in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/small_m/small_m_config.h"

namespace fp8gemm::small_m {

// Row tiles of the grid (all batches) at `rows` rows per block.
int64_t row_tiles(const Problem& p, int rows);
// Split-K that gives the grid at least `target` blocks (rounded up), keeping >= 4 K blocks (512
// bytes of K per row) per split; 1..kMaxSplitK.
int fill_splitk(const Problem& p, int rows, int64_t target);
// Split-K that gives the grid at most `waves` x SMs blocks (whole multiples of the row tiles,
// rounded down; at least 1), with fill_splitk's limits.
int within_splitk(const Problem& p, int rows, int waves, int sms);
// Fitted rows that spread n over `per_sm` blocks per SM (rounded up: at most that many blocks);
// 0 where that row count is not a fitted one.
int fitted_rows_at(const Problem& p, int per_sm, int sms);
// Persistent grids: the fraction of the persist * SMs block slots that do useful work over the
// rounds (1 = every slot busy until the end), and the splits (1..8, >= 4 K blocks each) ordered
// by it, best first.
double persist_utilization(const Problem& p, int rows, int splitk, int persist, int sms);
std::vector<int> persist_splits(const Problem& p, int rows, int persist, int sms);

struct Recipe {
  // The kernel and its options, as in Config (persist: blocks per SM of kPersistent).
  Family family = Family::kTmaRing;
  Pdl pdl = Pdl::kAtStart;
  int early = 0;
  int kblocks = 1;
  int persist = 0;
  // Rows: `rows` fixed (32, 64, 128 or a fitted count), or fitted_rows_at(rows_per_sm).
  enum class Rows { kFixed, kFitted } rows_rule = Rows::kFixed;
  int rows = 64;  // kFixed: the rows; kFitted: blocks per SM
  // Split-K: `split` fixed; kFill: fill_splitk to split x SMs blocks (at least that many);
  // kWithin: at most split x SMs blocks (rounded down, at least 1); kUtilized: the persistent
  // grid's split of that rank in persist_splits (0 = best utilized).
  enum class Split { kFixed, kFill, kWithin, kUtilized } split_rule = Split::kFixed;
  int split = 1;
  // Ring: `ring` stages fixed, or the deepest ring with which `ring` blocks share an SM
  // (deepest_ring) less `less` stages.
  enum class Ring { kFixed, kPerSm } ring_rule = Ring::kPerSm;
  int ring = 2;
  int less = 0;

  // "<tma|cp|aonce|persist=P>,rows=<R|fitP>,split=<S|fillG|withinG|utilR>,ring=<S|Rsm[-L]>,pdl=D
  // [,early=E][,kblocks=B]", e.g. "cp,rows=fit1,split=1,ring=1sm-1,pdl=1,kblocks=4".
  std::string to_string() const;
  bool operator==(const Recipe& o) const;
};

// Parses what to_string() prints; throws Error(kInvalidArgument) naming the rule otherwise.
Recipe parse_recipe(std::string_view text);

// The config `r` gives `p` on a device with `sms` SMs, or nullopt where it gives none (fitted rows
// that are not a fitted count, a ring of fewer than 4 stages, a config that does not exist).
// Whether the config runs `p` is can_implement's question.
std::optional<Config> config_for(const Problem& p, const Recipe& r, int sms);

// Every recipe that gives `c` on `p` (config_for(p, r, sms) == c), the one recipe_of() returns
// first: rows and split-K as multiples of the SMs before fixed ones, the ring per SM before a
// fixed depth. Never empty (fixed rows, split and ring give any config).
std::vector<Recipe> recipes_of(const Problem& p, const Config& c, int sms);
Recipe recipe_of(const Problem& p, const Config& c, int sms);

}  // namespace fp8gemm::small_m
