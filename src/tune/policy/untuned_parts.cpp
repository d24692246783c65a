// Handing part of a bucket back to untuned `auto` (docs/tuning.md "Never slower than the
// default"): segment_checks.h untuned_parts.
#include <algorithm>
#include <functional>
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

std::vector<AnswerRun> answer_runs(int64_t lo, int64_t hi, const std::function<std::string(int64_t)>& answer) {
  std::vector<AnswerRun> runs;
  if (hi < lo) return runs;
  const int64_t stride = std::max<int64_t>(1, (hi - lo) / kProbes);
  int64_t at = lo, first = lo;
  std::string current = answer(lo);
  while (at < hi) {
    const int64_t next = std::min(hi, at + stride);
    std::string there = answer(next);
    if (there == current) {
      at = next;
      continue;
    }
    // The first M in (at, next] whose answer is not `current` (one change assumed between probes).
    int64_t good = at, bad = next;
    while (bad - good > 1) {
      const int64_t mid = good + (bad - good) / 2;
      std::string a = answer(mid);
      if (a == current) {
        good = mid;
      } else {
        bad = mid;
        there = std::move(a);
      }
    }
    runs.push_back({first, good, current});
    current = std::move(there);
    first = at = bad;
  }
  runs.push_back({first, hi, current});
  return runs;
}

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
  for (const AnswerRun& r : answer_runs(lo, hi, runs_at)) {
    ChoiceSegment s;
    s.m_max = r.last;
    s.sampled_m = r.last;
    s.tactic = s.default_tactic = r.answer;
    s.candidates.push_back({r.answer, "skipped", 0, -1, why});
    parts.push_back(std::move(s));
  }
  return parts;
}

}  // namespace fp8gemm::tuning
