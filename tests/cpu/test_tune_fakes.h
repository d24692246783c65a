// Fakes for the tuner's CPU tests: backends implementing the Backend interface, and a Timer
// whose timings (per tactic, per position, per sample) the test controls.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/measure.h"

namespace fp8gemm::testing {

class FakeBackend : public Backend {
 public:
  FakeBackend(std::string name, std::vector<std::string> configs, std::string default_config)
      : name_(std::move(name)), configs_(std::move(configs)), default_(std::move(default_config)) {}

  bool throw_on_list = false;   // FlashInfer fault 4: listing throws
  bool unavailable = false;
  std::set<std::string> cannot_implement;  // configs can_implement refuses
  // Configs listed only when M is at most the key (on top of the fixed list), like cuBLASLt's
  // heuristic, whose answers depend on M; can_implement accepts them at every M.
  std::map<int64_t, std::vector<std::string>> listed_up_to_m;

  std::string name() const override { return name_; }
  Verdict available() const override { return unavailable ? Verdict::no("fake: not loaded") : Verdict::yes(); }
  std::vector<Tactic> tactics(const Problem& p) override {
    if (throw_on_list) throw std::runtime_error("two copies of libcudart are loaded");
    std::vector<Tactic> out;
    for (auto& c : configs_) out.push_back({name_, c});
    for (auto& [max_m, list] : listed_up_to_m)
      if (p.m <= max_m)
        for (auto& c : list) out.push_back({name_, c});
    return out;
  }
  // The default per M (like cuBLASLt's heuristic, whose first changes with M); empty: default_.
  std::function<std::string(int64_t)> default_by_m;
  // The config of adaptive_default() (it runs default_tactic of each problem); empty: none.
  std::string adaptive;
  Tactic default_tactic(const Problem& p) override { return {name_, default_by_m ? default_by_m(p.m) : default_}; }
  std::optional<Tactic> adaptive_default() const override {
    if (adaptive.empty()) return std::nullopt;
    return Tactic{name_, adaptive};
  }
  Verdict can_implement(const Problem&, const Tactic& t) override {
    if (t.backend != name_) return Verdict::no("not mine");
    if (cannot_implement.count(t.config)) return Verdict::no("fake: refused");
    bool extra = false;
    for (auto& [max_m, list] : listed_up_to_m) extra |= std::find(list.begin(), list.end(), t.config) != list.end();
    if (std::find(configs_.begin(), configs_.end(), t.config) == configs_.end() && t.config != default_ && !extra &&
        (adaptive.empty() || t.config != adaptive))
      return Verdict::no("fake: unknown config " + t.config);
    return Verdict::yes();
  }
  size_t workspace_bytes(const Problem&, const Tactic&) override { return 0; }
  std::map<std::string, int64_t> tile_height;  // config -> M tile height (same_tiles_up_to)
  int64_t same_tiles_up_to(const Problem& p, const Tactic& t) override {
    auto it = tile_height.find(t.config);
    return it == tile_height.end() ? p.m : (p.m + it->second - 1) / it->second * it->second;
  }
  void run(const Problem&, const Tactic&, const GemmArgs&, Workspace, cudaStream_t) override {}

 private:
  std::string name_;
  std::vector<std::string> configs_;
  std::string default_;
};

// Each tactic (full name) has a true per-call time. Every timing is the median of its samples,
// as the GPU timer's is; `sample` may distort individual samples (warm first replays, outliers)
// and `scale_at` the time of a candidate at a position of one measure() call (e.g. the
// reference's second timing, to create noise). A fake clock advances by the simulated cost.
class FakeTimer : public Timer {
 public:
  std::map<std::string, double> true_us;
  std::set<std::string> failing;
  std::map<std::string, double> output_diff;  // default 0
  std::function<double(const std::string&, int64_t m)> output_diff_at;  // if set: per M, over output_diff
  // (tactic, replay index, value) -> distorted value
  std::function<double(const std::string&, int, double)> sample;
  double reference_repeat_scale = 1.0;  // the last entry of a candidate list that repeats the first
  // If set: that scale per measure() call, by its options (e.g. noise in some rounds only).
  std::function<double(const MeasureOptions&)> repeat_scale_for;
  double* clock_ms = nullptr;           // advanced by replays * calls * time
  int measure_calls = 0, compare_calls = 0;
  std::vector<std::vector<Tactic>> measured;
  std::vector<int64_t> measured_m;  // the M of each measure() call
  std::vector<std::vector<Tactic>> compared;

  // (tactic, options) -> a factor on its time in a measure() call with those options (e.g. only
  // in longer replays); default 1.
  std::function<double(const std::string&, const MeasureOptions&)> scale_for;
  // (tactic, m, time) -> time at that M (default: the same at every M)
  std::function<double(const std::string&, int64_t, double)> at_m;

  std::vector<Timing> measure(const Problem& p, const std::vector<Tactic>& c, const MeasureOptions& o) override {
    ++measure_calls;
    measured.push_back(c);
    measured_m.push_back(p.m);
    std::vector<Timing> out(c.size());
    const int calls = o.calls_per_replay > 0 ? o.calls_per_replay : 20;
    for (size_t i = 0; i < c.size(); ++i) {
      Timing& t = out[i];
      t.tactic = c[i];
      const std::string name = c[i].name();
      if (failing.count(name) || !true_us.count(name)) {
        t.error = "fake: launch failed";
        continue;
      }
      t.ok = true;
      double base = true_us.at(name);
      if (at_m) base = at_m(name, p.m, base);
      if (scale_for) base *= scale_for(name, o);
      if (i + 1 == c.size() && c.size() > 1 && c[i] == c[0])
        base *= repeat_scale_for ? repeat_scale_for(o) : reference_repeat_scale;
      for (int r = 0; r < o.replays; ++r) t.samples_us.push_back(sample ? sample(name, r, base) : base);
      std::vector<double> s = t.samples_us;
      std::sort(s.begin(), s.end());
      t.median_us = s[s.size() / 2];
      const double cost_ms = (o.replays + o.warmup_replays) * calls * base / 1000.0;
      if (clock_ms) *clock_ms += cost_ms;
      replays_ms += cost_ms;
    }
    return out;
  }

  // spent_ms(): "replays" grows by the simulated cost of each measure() call (as the clock does).
  double replays_ms = 0;
  std::map<std::string, double> spent_ms() const override { return {{"replays", replays_ms}}; }

  std::vector<Tactic> compared_with;  // the reference of each compare_outputs() call
  std::vector<double> compare_outputs(const Problem& p, const Tactic& reference, const std::vector<Tactic>& c) override {
    ++compare_calls;
    compared.push_back(c);
    compared_with.push_back(reference);
    std::vector<double> out;
    for (auto& t : c)
      out.push_back(output_diff_at ? output_diff_at(t.name(), p.m)
                    : output_diff.count(t.name()) ? output_diff.at(t.name())
                                                  : 0.0);
    return out;
  }
};

inline Problem problem(int64_t m, int64_t n = 4096, int64_t k = 4096) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

}  // namespace fp8gemm::testing
