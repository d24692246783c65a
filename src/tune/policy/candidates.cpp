#include "tune/policy/candidates.h"

#include <algorithm>
#include <map>

#include "tune/defaults/default_chain.h"

namespace fp8gemm::tuning {

namespace {

bool allowed(const std::string& backend, const std::vector<std::string>& only) {
  return only.empty() || std::find(only.begin(), only.end(), backend) != only.end();
}

}  // namespace

Candidates gather_candidates(const Problem& p, const std::vector<Backend*>& backends,
                             const Tactic& default_tactic, const std::vector<std::string>& only) {
  Candidates c;
  c.tactics.push_back(default_tactic);
  std::set<std::string> seen{default_tactic.name()};
  for (Backend* b : backends) {
    std::string name;
    try {
      name = b->name();
      if (!allowed(name, only)) continue;
      const Verdict v = b->available();
      if (!v.ok) {
        c.excluded_backends.push_back(name + ": not available: " + v.reason);
        c.excluded_names.insert(name);
        continue;
      }
      // Listing may throw anything (FlashInfer fault 4: cuDNN with two libcudart copies);
      // the backend is then excluded for this problem and tuning carries on.
      for (Tactic& t : b->tactics(p))
        if (seen.insert(t.name()).second) c.tactics.push_back(std::move(t));
    } catch (const std::exception& e) {
      c.excluded_backends.push_back((name.empty() ? "?" : name) + ": listing tactics failed: " + e.what());
      c.excluded_names.insert(name);
    } catch (...) {
      c.excluded_backends.push_back((name.empty() ? "?" : name) + ": listing tactics failed (unknown exception)");
      c.excluded_names.insert(name);
    }
  }
  return c;
}

std::vector<std::string> add_unlisted_preferred(Candidates& c, const Problem& p, const std::vector<Backend*>& backends,
                                                const std::vector<std::string>& preferred,
                                                const std::vector<std::string>& only) {
  std::vector<std::string> added;
  std::set<std::string> seen;
  for (const Tactic& t : c.tactics) seen.insert(t.name());
  for (const std::string& name : preferred) {
    if (seen.count(name)) continue;
    try {
      Tactic t = Tactic::parse(name);
      Backend* b = find_backend(backends, t.backend);
      // excluded_names holds the backends gather_candidates found unavailable or failing to list.
      if (!b || !allowed(t.backend, only) || c.excluded_names.count(t.backend)) continue;
      // The adaptive tactic runs the backend's default here, which the backend lists already.
      if (const auto a = b->adaptive_default(); a && a->name() == name) continue;
      if (!b->can_implement(p, t).ok) continue;
      seen.insert(name);
      c.tactics.push_back(std::move(t));
      added.push_back(name);
    } catch (const std::exception&) {
      // A name that no longer parses, or a backend that throws: not a candidate, nothing else.
    }
  }
  return added;
}

std::vector<Tactic> trim_candidates(const std::vector<Tactic>& tactics, size_t keep,
                                    const std::vector<std::string>& preferred) {
  if (tactics.size() <= keep) return tactics;
  std::vector<Tactic> out{tactics[0]};
  std::set<std::string> taken{tactics[0].name()};
  for (const std::string& name : preferred)
    for (size_t i = 1; i < tactics.size() && out.size() < keep; ++i)
      if (tactics[i].name() == name && taken.insert(name).second) out.push_back(tactics[i]);
  std::vector<std::string> order;  // backends in first-seen order
  std::map<std::string, std::vector<const Tactic*>> by_backend;
  for (size_t i = 1; i < tactics.size(); ++i) {
    if (taken.count(tactics[i].name())) continue;
    auto& list = by_backend[tactics[i].backend];
    if (list.empty()) order.push_back(tactics[i].backend);
    list.push_back(&tactics[i]);
  }
  for (size_t rank = 0; out.size() < keep && out.size() < tactics.size(); ++rank)
    for (const std::string& b : order)
      if (rank < by_backend[b].size() && out.size() < keep) out.push_back(*by_backend[b][rank]);
  return out;
}

std::optional<Tactic> lower_buckets_choice(const std::vector<Tactic>& at_edge, const std::vector<std::string>& preferred,
                                           const std::vector<Backend*>& backends) {
  for (const std::string& name : preferred) {
    const auto it = std::find_if(at_edge.begin(), at_edge.end(), [&](const Tactic& t) { return t.name() == name; });
    if (it == at_edge.end()) continue;
    const Backend* b = find_backend(backends, it->backend);
    const std::optional<Tactic> adaptive = b ? b->adaptive_default() : std::nullopt;
    if (!adaptive || !(*adaptive == *it)) return *it;
  }
  return std::nullopt;
}

}  // namespace fp8gemm::tuning
