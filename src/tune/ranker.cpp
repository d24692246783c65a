#include "tune/ranker.h"

#include <cmath>
#include <cstdio>

#include "tune/tuner.h"

namespace fp8gemm::tuning {

namespace {

// SMs a grid of clusters of `size` CTAs fills: clusters of more than 2 fill groups of 8 only.
int usable_sms(int sms, int size) { return size <= 2 ? sms : sms / 8 * 8; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::optional<TacticShape> shape_of(const std::vector<Backend*>& backends, const Problem& p, const Tactic& t) {
  Backend* b = find_backend(backends, t.backend);
  if (!b) return std::nullopt;
  try {
    std::optional<TacticShape> s = b->tactic_shape(p, t);
    if (s && s->tile_m > 0 && s->tile_n > 0 && s->tile_k > 0 && s->split_k > 0 && s->cluster_m > 0 && s->cluster_n > 0)
      return s;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

const RankerRange* range_of(const RankerModel& model, int64_t m) {
  for (const RankerRange& r : model.ranges)
    if (r.m_lo <= m && m <= r.m_hi) return &r;
  return nullptr;
}

}  // namespace

const RankerModel* ranker(int compute_capability) {
  if (compute_capability == 90) return &sm90_ranker();
  return nullptr;
}

RankerFeatures ranker_features(const Problem& p, const TacticShape& t, const std::string& backend,
                               const TacticShape& floor, bool is_floor, int sms) {
  const int cs = t.cluster_m * t.cluster_n;
  const int64_t tiles_m = ceil_div(p.m, t.tile_m), tiles_n = ceil_div(p.n, t.tile_n);
  const double waves = double(tiles_m * tiles_n * p.batch * t.split_k) / usable_sms(sms, cs);
  const double whole = std::max(1.0, std::ceil(waves - 1e-9));
  const int64_t k_steps = ceil_div(p.k, int64_t(t.split_k) * t.tile_k);
  const double ltm = std::log2(double(t.tile_m)), ltn = std::log2(double(t.tile_n));
  const double floor_ltm = std::log2(double(floor.tile_m)), floor_ltn = std::log2(double(floor.tile_n));
  // The order of kRankerFeatures.
  return {std::log2(double(p.m)), std::log2(double(p.n)), std::log2(double(p.k)), double(p.batch), ltm, ltn,
          double(t.tile_k), double(t.cluster_n), double(t.cluster_m), double(cs), double(t.split_k),
          double(t.reduction), t.fast_accum ? 1.0 : 0.0, double(t.fitted_parts), t.swap_ab ? 1.0 : 0.0,
          t.stream_k ? 1.0 : 0.0, double(t.custom), double(t.schedule), t.pdl ? 1.0 : 0.0,
          backend == "cutlass" ? 1.0 : 0.0, is_floor ? 1.0 : 0.0, double(p.m) / double(tiles_m * t.tile_m),
          double(p.n) / double(tiles_n * t.tile_n), whole, std::log2(waves), waves / whole, waves - (whole - 1),
          std::log2(double(k_steps)), floor_ltm, floor_ltn, double(floor.cluster_m * floor.cluster_n),
          double(floor.custom), ltm - floor_ltm, ltn - floor_ltn};
}

int32_t ranker_score(const RankerModel& model, const RankerFeatures& x) {
  int32_t score = model.base;
  for (uint32_t root : model.roots) {
    const RankerNode* n = model.nodes + root;
    while (n->feature >= 0) n = model.nodes + root + (x[size_t(n->feature)] <= n->threshold ? n->left : n->right);
    score += n->value;
  }
  return score;
}

std::optional<Tactic> ranker_choice(const std::vector<Backend*>& backends, const RankerModel& model,
                                    const Problem& p, int sms, std::string* why) {
  auto say = [&](std::string text) {
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  const RankerRange* range = range_of(model, p.m);
  if (!range) return say("no candidates at this M");
  Tactic floor;
  try {
    floor = floor_choice(backends, p);
  } catch (const std::exception&) {
    return say("no floor to rank against");
  }
  const std::optional<TacticShape> floor_shape = shape_of(backends, p, floor);
  if (!floor_shape) return say("the floor's geometry is unknown (" + floor.name() + ")");
  const int32_t floor_score = ranker_score(model, ranker_features(p, *floor_shape, floor.backend, *floor_shape, true, sms));
  std::string scores = "floor " + std::to_string(floor_score);
  std::optional<Tactic> best;
  int32_t best_score = floor_score;
  for (const char* name : range->tactics) {
    Tactic t;
    try {
      t = Tactic::parse(name);
    } catch (const std::exception&) {
      continue;
    }
    const std::optional<TacticShape> s = shape_of(backends, p, t);
    if (!s || !can_run(backends, p, t)) {
      scores += ", " + t.name() + " cannot run";
      continue;
    }
    const int32_t score = ranker_score(model, ranker_features(p, *s, t.backend, *floor_shape, false, sms));
    scores += ", " + t.name() + " " + std::to_string(score);
    if (score < best_score) {
      best = t;
      best_score = score;
    }
  }
  if (why) *why = "scores (log-time, 1e-4; lowest runs, the floor on a tie): " + scores;
  return best;
}

}  // namespace fp8gemm::tuning
