#include "fp8gemm/tune_report.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fp8gemm {

std::string decisions_to_json(const std::vector<Decision>& decisions, const DeviceInfo& device) {
  using nlohmann::json;
  json out = {{"device",
               {{"name", device.name}, {"sm_count", device.sm_count},
                {"compute_capability", device.compute_capability()}, {"driver_version", device.driver_version},
                {"cuda_runtime_version", device.runtime_version}, {"cublaslt_version", device.cublaslt_version}}},
              {"decisions", json::array()}};
  for (const Decision& d : decisions) {
    const Problem& p = d.problem;
    auto reports = [](const std::vector<CandidateReport>& rs) {
      json a = json::array();
      for (const CandidateReport& c : rs)
        a.push_back({{"tactic", c.tactic}, {"status", c.status}, {"us", c.time_us}, {"short_us", c.short_us},
                     {"output_diff", c.output_diff}, {"note", c.note}, {"m", c.m}});
      return a;
    };
    const json cands = reports(d.candidates);
    json segments = json::array();
    for (const ChoiceSegment& s : d.segments)
      segments.push_back({{"m_max", s.m_max}, {"sampled_m", s.sampled_m}, {"tactic", s.tactic}, {"default", s.default_tactic}, {"us", s.us},
                          {"default_us", s.default_us}, {"candidates", reports(s.candidates)}});
    out["decisions"].push_back({{"key", d.key}, {"m_bucket", p.m}, {"n", p.n}, {"k", p.k},
                                {"a", to_string(p.a_type)}, {"b", to_string(p.b_type)},
                                {"out", to_string(p.out_type)}, {"batch", p.batch}, {"alignment", p.alignment},
                                {"default", d.default_tactic}, {"floor", d.floor_tactic}, {"choice", d.choice},
                                {"default_us", d.default_us}, {"choice_us", d.choice_us}, {"noise", d.noise},
                                {"threshold", d.threshold}, {"reason", d.reason}, {"measured", d.measured},
                                {"elapsed_ms", d.elapsed_ms}, {"sampled_ms", d.sampled_ms}, {"segments", segments},
                                {"phase_ms", d.phase_ms}, {"candidates", cands},
                                {"excluded_backends", d.excluded_backends}});
  }
  return out.dump(1) + "\n";
}

namespace {
// "    12.3   0.981x  finalist cublaslt:...   <== choice   (note)"
void candidate_row(std::ostream& os, const CandidateReport& c, double default_us, const std::string& choice) {
  os << std::setw(11) << std::setprecision(3) << c.time_us << "  ";
  if (c.time_us > 0 && default_us > 0)
    os << std::setw(7) << std::setprecision(3) << c.time_us / default_us << "x  ";
  else
    os << std::setw(8) << "-" << "  ";
  os << std::left << std::setw(9) << c.status << c.tactic << std::right;
  if (c.tactic == choice) os << "   <== choice";
  if (!c.note.empty()) os << "   (" << c.note << ")";
  os << "\n";
}
}  // namespace

std::string explain_text(const Decision& d) {
  std::ostringstream os;
  os << "key       " << d.key << "\n"
     << "default   " << d.default_tactic << (d.default_tactic == d.floor_tactic ? "  (cuBLASLt heuristic)" : "  (the default chain: table or rules)") << "\n"
     << "noise     " << std::fixed << std::setprecision(2) << d.noise * 100 << "%   (default timed twice)\n"
     << "threshold " << d.threshold * 100 << "%   (a challenger must be faster by more than this)\n\n";
  std::vector<CandidateReport> rows = d.candidates;
  std::stable_sort(rows.begin(), rows.end(), [](const CandidateReport& x, const CandidateReport& y) {
    auto rank = [](const CandidateReport& c) {
      return c.status == "default" ? 0 : c.status == "finalist" || c.status == "mismatch" ? 1 : c.status == "pruned" ? 2 : 3;
    };
    if (rank(x) != rank(y)) return rank(x) < rank(y);
    return x.time_us < y.time_us;
  });
  os << std::setw(11) << "us" << "  " << std::setw(8) << "vs def" << "  " << std::left << std::setw(9) << "status"
     << "tactic\n" << std::right;
  for (const CandidateReport& c : rows) candidate_row(os, c, d.default_us, d.choice);
  for (const std::string& e : d.excluded_backends) os << "excluded  " << e << "\n";
  for (size_t i = 0; i + 1 < d.segments.size(); ++i) {  // below the edge, each sampled M's own rule
    const ChoiceSegment& s = d.segments[i];
    os << "\nat M=" << s.sampled_m << " (its choice covers M up to " << s.m_max << "; default " << s.default_tactic
       << ")\n";
    for (const CandidateReport& c : s.candidates) candidate_row(os, c, s.default_us, s.tactic);
  }
  if (!d.segments.empty() && !d.segments.back().candidates.empty()) {  // the edge's segment, timed at its lowest M
    const ChoiceSegment& s = d.segments.back();
    os << "\nthe edge's segment (M up to " << s.m_max << ")\n";
    for (const CandidateReport& c : s.candidates) candidate_row(os, c, s.default_us, s.tactic);
  }
  os << "\nchoice    " << d.choice << "\n";
  if (d.segments.size() > 1)
    for (size_t i = 0; i < d.segments.size(); ++i)
      os << (i == 0 ? "segments  " : "          ") << "M<=" << d.segments[i].m_max << ": " << d.segments[i].tactic
         << "\n";
  os << "reason    " << d.reason << "\n";
  return os.str();
}

std::string phase_summary(const std::vector<Decision>& decisions) {
  std::map<std::string, double> total;
  for (const Decision& d : decisions)
    for (const auto& [phase, ms] : d.phase_ms) total[phase] += ms;
  std::vector<std::pair<double, std::string>> policy, timer;
  const std::string prefix = "timer_";
  for (const auto& [phase, ms] : total) {
    if (phase.rfind(prefix, 0) == 0) timer.push_back({ms, phase.substr(prefix.size())});
    else policy.push_back({ms, phase});
  }
  auto list = [](std::vector<std::pair<double, std::string>> v) {
    std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    std::ostringstream os;
    os << std::fixed << std::setprecision(1);
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i].second << " " << v[i].first / 1000 << " s";
    return os.str();
  };
  std::string out = list(policy);
  if (!timer.empty()) out += "; timer: " + list(timer);
  return out;
}

}  // namespace fp8gemm
