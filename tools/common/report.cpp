#include "tools/common/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <utility>

#include "fp8gemm/tune.h"

namespace fp8gemm {

double roofline_us(double flops, double bytes) {
  return 1e6 * std::max(bytes / kRooflineBytesPerSecond, flops / kRooflineFlopsPerSecond);
}

EntryMetrics metrics_of(const BenchPoint& point, const BenchEntry& entry) {
  EntryMetrics m;
  if (!entry.ok || !(entry.us > 0)) return m;
  const Problem& p = point.problem;
  m.tflops = p.flops() / entry.us * 1e-6;
  m.gbps = p.min_bytes() / entry.us * 1e-3;
  m.roofline_pct = 100.0 * roofline_us(p.flops(), p.min_bytes()) / entry.us;
  if (!point.entries.empty() && point.entries[0].ok) m.ratio = point.entries[0].us / entry.us;
  return m;
}

const std::vector<MRange>& geomean_ranges() {
  static const std::vector<MRange> r = {
      {"M<=64", 1, 64}, {"64<M<=256", 65, 256}, {"M>256", 257, INT64_MAX}, {"all", 1, INT64_MAX}};
  return r;
}

namespace {

// Entry labels in order of first appearance, the reference (entries[0]) excluded.
std::vector<std::string> challenger_labels(const std::vector<BenchPoint>& points) {
  std::vector<std::string> labels;
  for (const BenchPoint& p : points)
    for (size_t i = 1; i < p.entries.size(); ++i)
      if (std::find(labels.begin(), labels.end(), p.entries[i].label) == labels.end())
        labels.push_back(p.entries[i].label);
  return labels;
}

std::vector<std::string> all_labels(const std::vector<BenchPoint>& points) {
  std::vector<std::string> labels;
  for (const BenchPoint& p : points)
    for (const BenchEntry& e : p.entries)
      if (std::find(labels.begin(), labels.end(), e.label) == labels.end()) labels.push_back(e.label);
  return labels;
}

// The ratio of the fastest ok entry of a point (0 when none).
double best_ratio(const BenchPoint& p) {
  double best = 0;
  for (const BenchEntry& e : p.entries) best = std::max(best, metrics_of(p, e).ratio);
  return best;
}

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
          out += esc;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// JSON has no NaN or infinity.
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  return format("%.6g", v);
}

std::string problem_dtypes(const Problem& p) {
  return std::string(to_string(p.a_type)) + "x" + to_string(p.b_type) + "->" + to_string(p.out_type);
}

}  // namespace

const BenchEntry* find_entry(const BenchPoint& p, const std::string& label) {
  for (const BenchEntry& e : p.entries)
    if (e.label == label) return &e;
  return nullptr;
}

namespace {

// Tuned auto's entry and untuned auto's where both ran different tactics, else {nullptr, nullptr}.
std::pair<const BenchEntry*, const BenchEntry*> tuned_and_untuned(const BenchPoint& p) {
  const BenchEntry* tuned = find_entry(p, "auto");
  const BenchEntry* untuned = find_entry(p, kUntunedAutoLabel);
  if (!tuned || !untuned || !tuned->ok || !untuned->ok || tuned->tactic == untuned->tactic) return {nullptr, nullptr};
  return {tuned, untuned};
}

// Whether tuned auto / untuned auto at p is beyond the tuner's own threshold for p's noise.
bool slower_beyond_noise(const BenchPoint& p, double tuned_over_untuned) {
  return tuned_over_untuned > 1 + tuning_threshold(p.noise);
}

// Tuned auto's time over untuned auto's at p: the head-to-head rounds' median where they timed
// untuned auto, else the first pass's; NaN where the point ran no tuned choice.
double tuned_over_untuned(const BenchPoint& p) {
  const auto [tuned, untuned] = tuned_and_untuned(p);
  if (!tuned) return NAN;
  const double head_to_head = p.confirm.untuned_ratio();
  return head_to_head > 0 ? head_to_head : tuned->us / untuned->us;
}

}  // namespace

std::vector<const BenchPoint*> tuned_slower_points(const std::vector<BenchPoint>& points) {
  std::vector<const BenchPoint*> out;
  for (const BenchPoint& p : points)
    if (slower_beyond_noise(p, tuned_over_untuned(p))) out.push_back(&p);
  return out;
}

void print_tuned_slower(std::ostream& os, const std::vector<BenchPoint>& points) {
  size_t tuned = 0, head_to_head = 0, first_pass_slower = 0;
  for (const BenchPoint& p : points) {
    const auto [t, u] = tuned_and_untuned(p);
    if (!t) continue;
    ++tuned;
    head_to_head += p.confirm.untuned_ratio() > 0;
    first_pass_slower += slower_beyond_noise(p, t->us / u->us);
  }
  if (!tuned) return;
  const std::vector<const BenchPoint*> slower = tuned_slower_points(points);
  os << "tuned auto slower than untuned auto beyond the point's noise (max(" << kMinTuningGain * 100 << "%, "
     << kNoiseFactor << "x noise)): " << slower.size() << " of the " << tuned << " points that ran a tuned choice ("
     << head_to_head << " judged on the head-to-head rounds' median, the rest on the first pass; the first pass alone: "
     << first_pass_slower << ")\n";
  for (const BenchPoint* p : slower) {
    const auto [t, u] = tuned_and_untuned(*p);
    const bool again = p->confirm.untuned_ratio() > 0;
    char line[320];
    std::snprintf(line, sizeof line, "  %s M=%lld: x%.3f untuned auto's speed (%s), noise %.1f%%: %s over %s\n",
                  p->shape.c_str(), (long long)p->problem.m, 1 / tuned_over_untuned(*p),
                  again ? "head to head" : "first pass", 100 * p->noise, t->tactic.c_str(), u->tactic.c_str());
    os << line;
  }
}

std::vector<GeomeanRow> geomeans(const std::vector<BenchPoint>& points) {
  std::vector<std::string> labels = challenger_labels(points);
  labels.push_back("best");
  const std::vector<MRange>& ranges = geomean_ranges();
  std::vector<GeomeanRow> rows;
  for (const std::string& label : labels) {
    GeomeanRow row{label, std::vector<double>(ranges.size(), NAN), std::vector<int>(ranges.size(), 0)};
    std::vector<double> log_sum(ranges.size(), 0);
    for (const BenchPoint& p : points) {
      double ratio = 0;
      if (label == "best") {
        ratio = best_ratio(p);
      } else if (const BenchEntry* e = find_entry(p, label)) {
        ratio = metrics_of(p, *e).ratio;
      }
      if (!(ratio > 0)) continue;
      for (size_t r = 0; r < ranges.size(); ++r)
        if (p.problem.m >= ranges[r].lo && p.problem.m <= ranges[r].hi) {
          log_sum[r] += std::log(ratio);
          ++row.count[r];
        }
    }
    for (size_t r = 0; r < ranges.size(); ++r)
      if (row.count[r]) row.geomean[r] = std::exp(log_sum[r] / row.count[r]);
    rows.push_back(row);
  }
  return rows;
}

const char* const kDefaultColumnMeaning =
    "cublaslt_default: cuBLASLt's heuristic as torch._scaled_mm asks it (its first algorithm with torch's "
    "workspace and preferences), fp8gemm's floor; 'x default' is its time over the candidate's";

void print_point(std::ostream& os, const BenchPoint& point, bool header) {
  char line[512];
  if (header) {
    os << kDefaultColumnMeaning << "\n";
    std::snprintf(line, sizeof line, "%-28s %6s %6s %6s  %-17s %10s %8s %8s %6s %9s %6s  %s\n", "shape", "M", "N", "K",
                  "candidate", "us", "TFLOP/s", "GB/s", "%roof", "x default", "noise", "tactic");
    os << line;
  }
  const Problem& p = point.problem;
  for (size_t i = 0; i < point.entries.size(); ++i) {
    const BenchEntry& e = point.entries[i];
    const EntryMetrics m = metrics_of(point, e);
    const std::string noise = i == 0 ? format("%.1f%%", 100.0 * point.noise) : "";
    if (i == 0)
      std::snprintf(line, sizeof line, "%-28s %6lld %6lld %6lld  ", point.shape.c_str(), (long long)p.m,
                    (long long)p.n, (long long)p.k);
    else
      std::snprintf(line, sizeof line, "%-28s %6s %6s %6s  ", "", "", "", "");
    os << line;
    if (e.ok)
      std::snprintf(line, sizeof line, "%-17s %10.2f %8.1f %8.0f %6.1f %9.3f %6s  %s%s%s\n", e.label.c_str(), e.us,
                    m.tflops, m.gbps, m.roofline_pct, m.ratio, noise.c_str(), e.tactic.c_str(),
                    e.note.empty() ? "" : "  # ", e.note.c_str());
    else  // the note says why: "n/a (no tactic for this problem)", "failed: ...", "not measured"
      std::snprintf(line, sizeof line, "%-17s %10s %8s %8s %6s %9s %6s  %s%s%s\n", e.label.c_str(), "-", "-", "-",
                    "-", "-", noise.c_str(), e.tactic.c_str(), e.tactic.empty() ? "" : ": ", e.note.c_str());
    os << line;
  }
  for (const std::string& note : point.notes) os << "    note: " << note << "\n";
}

void print_geomeans(std::ostream& os, const std::vector<BenchPoint>& points) {
  const std::vector<MRange>& ranges = geomean_ranges();
  char cell[64];
  os << "geomean of (cublaslt_default us / candidate us), > 1 = faster than cuBLASLt's heuristic as "
        "torch._scaled_mm asks it\n";
  std::snprintf(cell, sizeof cell, "%-17s", "candidate");
  os << cell;
  for (const MRange& r : ranges) {
    std::snprintf(cell, sizeof cell, " %16s", r.name.c_str());
    os << cell;
  }
  os << "\n";
  for (const GeomeanRow& row : geomeans(points)) {
    std::snprintf(cell, sizeof cell, "%-17s", row.label.c_str());
    os << cell;
    for (size_t r = 0; r < ranges.size(); ++r) {
      if (row.count[r])
        std::snprintf(cell, sizeof cell, " %9.3f (n=%3d)", row.geomean[r], row.count[r]);
      else
        std::snprintf(cell, sizeof cell, " %16s", "-");
      os << cell;
    }
    os << "\n";
  }
}

void write_csv(std::ostream& os, const std::vector<BenchPoint>& points) {
  const std::vector<std::string> labels = all_labels(points);
  // The confirm columns appear when any point tried it.
  const bool confirm = std::any_of(points.begin(), points.end(),
                                   [](const BenchPoint& p) { return p.confirm.ran || !p.confirm.note.empty(); });
  os << "shape,batch,M,N,K,dtypes,noise";
  for (const std::string& l : labels)
    os << "," << l << "_us," << l << "_tflops," << l << "_gbps," << l << "_roofline_pct," << l << "_ratio," << l
       << "_tactic";
  if (confirm)
    os << ",confirm_best_tactic,confirm_auto_us,confirm_best_us,confirm_noise,confirm_regret,confirm_rounds,"
          "confirm_round_ratios,confirm_opponents,confirm_untuned_ratios";
  os << "\n";
  for (const BenchPoint& p : points) {
    const Problem& q = p.problem;
    os << csv_quote(p.shape) << "," << q.batch << "," << q.m << "," << q.n << "," << q.k << "," << problem_dtypes(q)
       << "," << format("%.4f", p.noise);
    for (const std::string& l : labels) {
      const BenchEntry* e = find_entry(p, l);
      if (!e || !e->ok) {
        os << ",,,,,," << (e ? csv_quote(e->tactic) : "");
        continue;
      }
      const EntryMetrics m = metrics_of(p, *e);
      os << "," << format("%.3f", e->us) << "," << format("%.1f", m.tflops) << "," << format("%.0f", m.gbps) << ","
         << format("%.1f", m.roofline_pct) << "," << format("%.4f", m.ratio) << "," << csv_quote(e->tactic);
    }
    if (confirm) {
      const AutoConfirm& c = p.confirm;
      os << "," << csv_quote(c.best_tactic);
      if (c.ran)
        os << "," << format("%.3f", c.auto_us) << "," << format("%.3f", c.best_us) << "," << format("%.4f", c.noise)
           << "," << format("%.4f", c.regret());
      else
        os << ",,,,";
      // Every round's auto / best, ';'-separated in the order they ran ("nan": a failed round).
      std::string ratios;
      for (double r : c.round_ratios) ratios += (ratios.empty() ? "" : ";") + (r > 0 ? format("%.4f", r) : "nan");
      os << "," << c.round_ratios.size() << "," << ratios;
      // The tactics timed against auto, ';'-separated (tactic names hold no ';').
      std::string opponents;
      for (const std::string& o : c.opponents) opponents += (opponents.empty() ? "" : ";") + o;
      os << "," << csv_quote(opponents);
      // Every round's auto / untuned auto where untuned auto was timed in them ("nan": not timed).
      std::string untuned;
      for (double r : c.untuned_ratios) untuned += (untuned.empty() ? "" : ";") + (r > 0 ? format("%.4f", r) : "nan");
      os << "," << (c.untuned_ratio() > 0 ? untuned : "");
    }
    os << "\n";
  }
}

void write_json(std::ostream& os, const std::vector<BenchPoint>& points) {
  os << "{\n  \"roofline\": {\"bytes_per_s\": " << json_number(kRooflineBytesPerSecond)
     << ", \"flops_per_s\": " << json_number(kRooflineFlopsPerSecond) << "},\n  \"points\": [";
  for (size_t i = 0; i < points.size(); ++i) {
    const BenchPoint& p = points[i];
    const Problem& q = p.problem;
    os << (i ? "," : "") << "\n    {\"shape\": " << json_string(p.shape) << ", \"batch\": " << q.batch
       << ", \"M\": " << q.m << ", \"N\": " << q.n << ", \"K\": " << q.k
       << ", \"dtypes\": " << json_string(problem_dtypes(q)) << ", \"noise\": " << json_number(p.noise)
       << ",\n     \"entries\": [";
    for (size_t j = 0; j < p.entries.size(); ++j) {
      const BenchEntry& e = p.entries[j];
      const EntryMetrics m = metrics_of(p, e);
      os << (j ? ", " : "") << "\n       {\"label\": " << json_string(e.label) << ", \"ok\": " << (e.ok ? "true" : "false")
         << ", \"us\": " << json_number(e.us) << ", \"tflops\": " << json_number(m.tflops)
         << ", \"gbps\": " << json_number(m.gbps) << ", \"roofline_pct\": " << json_number(m.roofline_pct)
         << ", \"ratio\": " << json_number(m.ratio) << ", \"tactic\": " << json_string(e.tactic)
         << ", \"note\": " << json_string(e.note) << "}";
    }
    os << "],\n     \"timings\": [";
    for (size_t j = 0; j < p.timings.size(); ++j) {
      const Timing& t = p.timings[j];
      os << (j ? ", " : "") << "\n       {\"tactic\": " << json_string(t.tactic.name())
         << ", \"ok\": " << (t.ok ? "true" : "false") << ", \"median_us\": " << json_number(t.median_us)
         << ", \"error\": " << json_string(t.error) << ", \"samples_us\": [";
      for (size_t s = 0; s < t.samples_us.size(); ++s) os << (s ? ", " : "") << json_number(t.samples_us[s]);
      os << "]";
      os << "}";
    }
    const AutoConfirm& c = p.confirm;
    os << "],\n     \"confirm\": {\"ran\": " << (c.ran ? "true" : "false")
       << ", \"best_tactic\": " << json_string(c.best_tactic) << ", \"auto_us\": " << json_number(c.auto_us)
       << ", \"best_us\": " << json_number(c.best_us) << ", \"noise\": " << json_number(c.noise)
       << ", \"regret\": " << json_number(c.regret()) << ", \"calls_per_replay\": " << c.calls_per_replay
       << ", \"replays\": " << c.replays << ", \"note\": " << json_string(c.note) << ", \"round_ratios\": [";
    for (size_t r = 0; r < c.round_ratios.size(); ++r) os << (r ? ", " : "") << json_number(c.round_ratios[r]);
    os << "], \"opponents\": [";
    for (size_t j = 0; j < c.opponents.size(); ++j) os << (j ? ", " : "") << json_string(c.opponents[j]);
    os << "], \"untuned_ratios\": [";
    for (size_t r = 0; r < c.untuned_ratios.size(); ++r) os << (r ? ", " : "") << json_number(c.untuned_ratios[r]);
    os << "]";
    os << "}";
    os << ",\n     \"notes\": [";
    for (size_t j = 0; j < p.notes.size(); ++j) os << (j ? ", " : "") << json_string(p.notes[j]);
    os << "]}";
  }
  os << "\n  ]\n}\n";
}

}  // namespace fp8gemm
