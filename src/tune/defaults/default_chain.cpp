#include "tune/defaults/default_chain.h"

namespace fp8gemm::tuning {

bool can_run(const std::vector<Backend*>& backends, const Problem& p, const Tactic& t) {
  Backend* b = find_backend(backends, t.backend);
  if (!b) return false;
  try {
    return b->available().ok && b->can_implement(p, t).ok;
  } catch (const std::exception&) {
    return false;
  }
}

std::optional<Tactic> adaptive_floor(const std::vector<Backend*>& backends, const Problem& p) {
  try {
    const Tactic floor = floor_choice(backends, p);
    Backend* b = find_backend(backends, floor.backend);
    std::optional<Tactic> t = b ? b->adaptive_default() : std::nullopt;
    if (t && can_run(backends, p, *t)) return t;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

namespace {

constexpr const char* kDefaultSuffix = ":default";
constexpr const char* kFloorAction = "cublaslt:default";

// The tactic a selector rule's action gives `p` (nullopt: it cannot run p) and, for a backend's
// default, the backend's rule that chose it. A backend default counts only where one of the
// backend's own rules chose it: the selector was fitted on what those rules choose.
std::optional<Tactic> action_tactic(const std::vector<Backend*>& backends, const std::string& action,
                                    const Problem& p, std::string* reason) {
  const size_t colon = action.find(':');
  if (colon != std::string::npos && action.substr(colon) == kDefaultSuffix) {
    Backend* b = find_backend(backends, action.substr(0, colon));
    if (!b || !b->available().ok) return std::nullopt;
    const Tactic t = b->default_tactic(p);
    const std::string rule = b->default_rule(p);
    if (rule.empty() || !can_run(backends, p, t)) return std::nullopt;
    *reason = rule;
    return t;
  }
  const Tactic t = Tactic::parse(action);
  if (!can_run(backends, p, t)) return std::nullopt;
  return t;
}

bool same_shape(const ExactRow& r, const Problem& p) {
  return r.a_type == p.a_type && r.b_type == p.b_type && r.out_type == p.out_type && r.batch == p.batch &&
         r.n == p.n && r.k == p.k;
}

}  // namespace

std::optional<Tactic> chain_choice(const std::vector<Backend*>& backends, const DefaultChain& chain,
                                   const Problem& p, std::string* why) {
  auto say = [&](std::string text) {
    if (why) *why = std::move(text);
  };
  if (chain.table) {
    bool named = false;
    for (size_t i = 0; i < chain.table->size(); ++i) {
      const ExactRow& r = (*chain.table)[i];
      if (!same_shape(r, p)) continue;
      named = true;
      if (r.m_lo > p.m || p.m > r.m_hi) continue;
      try {
        const Tactic t = Tactic::parse(r.tactic);
        if (can_run(backends, p, t)) {
          say("table: exact shape, rule " + std::to_string(i) + " (m " + std::to_string(r.m_lo) + ".." +
              std::to_string(r.m_hi) + ")");
          return t;
        }
      } catch (const std::exception&) {
        // A tactic this build or this cuBLASLt cannot parse: the floor takes over.
      }
      say("floor: the table's tactic for this exact shape cannot run here (" + std::string(r.tactic) + ")");
      return std::nullopt;
    }
    if (named) {
      say("floor: the table names this exact shape, and its tune measured the floor best at this M");
      return std::nullopt;
    }
  }
  if (chain.rules) {
    for (size_t i = 0; i < chain.rules->size(); ++i) {
      const BoxRule& r = (*chain.rules)[i];
      if (!r.box.contains(p, chain.sms)) continue;
      const std::string head =
          "rule " + std::to_string(i) + " (" + r.box.to_string() + ") -> " + r.action + " (" + r.evidence + ")";
      if (r.action == std::string(kFloorAction)) {
        say("floor: " + head);
        return std::nullopt;
      }
      std::string reason;
      try {
        if (std::optional<Tactic> t = action_tactic(backends, r.action, p, &reason)) {
          say(head + (reason.empty() ? "" : "; " + reason));
          return t;
        }
      } catch (const std::exception&) {
        // A backend that throws while choosing: the next rule, then the floor.
      }
    }
  }
  say("floor: no default rule covers this problem with a tactic that runs it");
  return std::nullopt;
}

Tactic default_choice(const std::vector<Backend*>& backends, const DefaultChain& chain, const Problem& p) {
  if (auto t = chain_choice(backends, chain, p)) return *t;
  return floor_choice(backends, p);
}

}  // namespace fp8gemm::tuning
