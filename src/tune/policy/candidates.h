// Which tactics a key's measurement times (docs/tuning.md "Measuring one key"): the default,
// every backend's listed tactics, a neighbouring bucket's best, trimmed to the key's budget.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fp8gemm/backend.h"

namespace fp8gemm::tuning {

// Candidates of one problem: the default first, then every tactic of every available backend
// (allowed by `only`), without repeats. A backend that throws while listing is excluded with
// its reason ("name: why"); listing carries on with the others.
struct Candidates {
  std::vector<Tactic> tactics;
  std::vector<std::string> excluded_backends;
  std::set<std::string> excluded_names;  // the backends of excluded_backends, by name
};
Candidates gather_candidates(const Problem& p, const std::vector<Backend*>& backends,
                             const Tactic& default_tactic, const std::vector<std::string>& only);

// Appends the `preferred` tactics (a neighbouring bucket's choices and finalists) that no backend
// listed for `p` but whose backend can run `p` and is allowed and not excluded (`c` comes from
// gather_candidates, which excludes the unavailable ones): a backend may list per M (cuBLASLt's
// heuristic answers per M, so a tile chosen at a neighbouring bucket may be missing from this
// one's list), and a neighbour's best is the likeliest winner under a tight key budget. The
// adaptive tactic is left out (it runs the backend's listed default here); names that do not
// parse are ignored. Returns the names added.
std::vector<std::string> add_unlisted_preferred(Candidates& c, const Problem& p, const std::vector<Backend*>& backends,
                                                const std::vector<std::string>& preferred,
                                                const std::vector<std::string>& only);

// The candidates that fit the plan: the default, then the preferred ones (in their order, those
// listed), then the backends' tactics interleaved (each backend's first, then each one's
// second, ...), since every backend lists its own likeliest tactics first (cuBLASLt: heuristic
// order).
std::vector<Tactic> trim_candidates(const std::vector<Tactic>& tactics, size_t keep,
                                    const std::vector<std::string>& preferred = {});

// The lower bucket's choice at its edge: the first of `preferred` (a neighbour's segments, top
// first) that is a fixed tactic among the edge's candidates (so its backend is allowed and
// listed), or nullopt. An adaptive tactic is not one: the floor covers it.
std::optional<Tactic> lower_buckets_choice(const std::vector<Tactic>& at_edge, const std::vector<std::string>& preferred,
                                           const std::vector<Backend*>& backends);

}  // namespace fp8gemm::tuning
