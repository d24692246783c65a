// What `fp8gemm bench` reports per point, and how: the table (us | TFLOP/s | GB/s | % of
// roofline | x vs the cuBLASLt default | tactic), geomeans per M range, CSV and JSON. The
// "cuBLASLt default" (cublaslt_default) is fp8gemm's floor: cuBLASLt's heuristic asked as
// torch._scaled_mm asks it (docs/cublaslt.md "The floor").
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "fp8gemm/types.h"
#include "fp8gemm/measure.h"

namespace fp8gemm {

// H200 ceilings (docs/design.md "Performance suite and ceilings").
constexpr double kRooflineBytesPerSecond = 4.5e12;
constexpr double kRooflineFlopsPerSecond = 1979e12;

// max(bytes / 4.5 TB/s, flops / 1979 TFLOP/s), in microseconds.
double roofline_us(double flops, double bytes);

// What the cublaslt_default column holds, printed above the table and the geomeans.
extern const char* const kDefaultColumnMeaning;

// One column group of a point: "cublaslt_default", "cublaslt_best", "<backend>_best", "auto".
struct BenchEntry {
  std::string label;
  bool ok = false;
  double us = 0;
  std::string tactic;  // canonical name of what ran
  std::string note;    // why not ok, or a remark ("pruned in the short round")
};

// `auto` against the fastest other tactic of the point, timed again head to head (confirm_auto,
// tools/common/confirm.h). The first pass's best is the fastest of many noisy medians, which is
// biased low; these rounds' are not. One round's values, or, after median_round, those of the
// round with the median auto / best over the point's rounds, with every round's ratio beside them.
struct AutoConfirm {
  bool ran = false;
  std::string best_tactic;         // the fastest of `opponents` in this round
  // The tactics timed against auto (confirm_opponents): the first pass's fastest other entry first.
  std::vector<std::string> opponents;
  double auto_us = 0, best_us = 0;  // this round's, each the mean of its two timings
  double noise = 0;                // the larger of the two tactics' paired noise in this round
  int calls_per_replay = 0, replays = 0;
  std::string note;                // why it did not run, when it did not
  // auto_us / best_us of every round, in the order they ran (NaN where a round failed); one entry
  // for a single round.
  std::vector<double> round_ratios;
  // Untuned auto's time in this round where it was one of the opponents (0: not timed), and auto /
  // untuned auto of every round (NaN where it was not timed): tuned_slower_points judges on these.
  double untuned_us = 0;
  std::vector<double> untuned_ratios;
  // The median of the timed untuned_ratios (for an even count the slower of the two middle ones);
  // NaN when none was timed.
  double untuned_ratio() const;
  // auto_us / min(auto_us, best_us); NaN when it did not run.
  double regret() const;
  // The first round's regret (what a single round would have judged); NaN when it failed.
  double first_round_regret() const;
};

struct BenchPoint {
  std::string shape;
  Problem problem;
  double noise = 0;                 // |t1 - t2| / t1 of the cuBLASLt default timed twice
  std::vector<BenchEntry> entries;  // entries[0] is the cuBLASLt default: the ratios' reference
  std::vector<Timing> timings;      // every candidate's timing (finalists: full round; others: short)
  // The full-round tactics that may be a point's best: the reference and the finalists whose
  // output matched the default's (bench's first pass), fastest first.
  std::vector<std::string> contenders;
  std::vector<std::string> notes;   // skipped backends, failed verifications, ...
  AutoConfirm confirm;
};

// The entry of what `auto` runs without the tuned cache (untuned_choice, fp8gemm/tune.h).
inline constexpr const char* kUntunedAutoLabel = "auto_untuned";

// The points where tuned `auto` is slower than untuned `auto` beyond the point's noise, by the
// tuner's own rule: auto / untuned auto > 1 + max(kMinTuningGain, kNoiseFactor x noise), that ratio
// the median of the head-to-head rounds where they timed untuned auto (AutoConfirm::untuned_ratio),
// else the first pass's. Why: one first-pass time of a kernel can sit far off its head-to-head
// rounds, either way (docs/perf.md), so the first pass alone counts points that are not slower and
// misses some that are. The target of the tuned-never-slower guarantee is none (docs/tuning.md "Never slower
// than the default"). Points where either did not run, or both ran the same tactic, are not counted.
std::vector<const BenchPoint*> tuned_slower_points(const std::vector<BenchPoint>& points);
// How many points ran a tuned choice other than untuned auto's, and which of them were slower, as
// above; nothing when no point ran a tuned choice.
void print_tuned_slower(std::ostream& os, const std::vector<BenchPoint>& points);

// The point's entry with this label ("auto", "cublaslt_best", ...), or nullptr.
const BenchEntry* find_entry(const BenchPoint& p, const std::string& label);

struct EntryMetrics {
  double tflops = 0, gbps = 0, roofline_pct = 0;
  double ratio = 0;  // default_us / us: > 1 is faster than the cuBLASLt default; 0 when unknown
};
EntryMetrics metrics_of(const BenchPoint& point, const BenchEntry& entry);

// The M ranges geomeans are reported over.
struct MRange {
  std::string name;
  int64_t lo, hi;  // inclusive
};
const std::vector<MRange>& geomean_ranges();  // M <= 64, 64 < M <= 256, M > 256, all

struct GeomeanRow {
  std::string label;  // an entry label, or "best" (the fastest entry of each point)
  std::vector<double> geomean;  // per geomean_ranges(); NaN when the range has no point
  std::vector<int> count;
};
std::vector<GeomeanRow> geomeans(const std::vector<BenchPoint>& points);

// Human-readable table lines for one point (the header once when `header`).
void print_point(std::ostream& os, const BenchPoint& point, bool header);
void print_geomeans(std::ostream& os, const std::vector<BenchPoint>& points);

// One row per point, columns per label (the union over all points; empty when absent).
void write_csv(std::ostream& os, const std::vector<BenchPoint>& points);
// Every point with its entries and every candidate's timing (samples included).
void write_json(std::ostream& os, const std::vector<BenchPoint>& points);

}  // namespace fp8gemm
