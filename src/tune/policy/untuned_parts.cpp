// Handing part of a bucket back to untuned `auto` (docs/tuning.md "Never slower than the
// default"): segment_checks.h untuned_parts.
#include <algorithm>
#include <optional>

#include "tune/defaults/default_chain.h"
#include "tune/policy/decide.h"
#include "tune/policy/segment_checks.h"
#include "tune/policy/segments.h"

namespace fp8gemm::tuning {

namespace {

// Answers asked across a part, at most this many before the bisections at its changes.
constexpr int64_t kProbes = 256;

}  // namespace

std::vector<ChoiceSegment> untuned_parts(const Problem& problem, const std::vector<Backend*>& backends, int64_t lo,
                                         int64_t hi, const std::string& fallback, const std::string& why,
                                         const PolicyOptions& o) {
  const std::optional<Tactic> adaptive = adaptive_floor(backends, problem);
  // What a segment must run at m to run untuned auto's kernel there: the adaptive floor where
  // untuned auto answers the heuristic's own kernel, else that answer; `fallback` where it cannot
  // be asked.
  const auto runs_at = [&](int64_t m) {
    Problem q = problem;
    q.m = m;
    const std::optional<Tactic> t = untuned_at(o, q);
    if (!t) return fallback;
    const std::string name = t->name();
    return adaptive && name == fixed_floor(backends, problem, m) ? adaptive->name() : name;
  };
  std::vector<ChoiceSegment> parts;
  const auto end_part = [&](int64_t m_max, const std::string& tactic) {
    ChoiceSegment s;
    s.m_max = m_max;
    s.sampled_m = m_max;
    s.tactic = s.default_tactic = tactic;
    s.candidates.push_back({tactic, "skipped", 0, -1, why});
    parts.push_back(std::move(s));
  };
  if (hi < lo) return parts;
  const int64_t stride = std::max<int64_t>(1, (hi - lo) / kProbes);
  int64_t at = lo;
  std::string current = runs_at(lo);
  while (at < hi) {
    const int64_t next = std::min(hi, at + stride);
    const std::string there = runs_at(next);
    if (there == current) {
      at = next;
      continue;
    }
    // The first M in (at, next] whose answer is not `current` (one change assumed between probes).
    int64_t good = at, bad = next;
    std::string bad_answer = there;
    while (bad - good > 1) {
      const int64_t mid = good + (bad - good) / 2;
      std::string answer = runs_at(mid);
      if (answer == current) {
        good = mid;
      } else {
        bad = mid;
        bad_answer = std::move(answer);
      }
    }
    end_part(good, current);
    current = bad_answer;
    at = bad;
  }
  end_part(hi, current);
  return parts;
}

}  // namespace fp8gemm::tuning
