// Nemotron-H hybrids: each layer is one of Mamba-2 (in_proj, out_proj), attention (qkv, o) or a
// non-gated MLP (up, down), in the order hybrid_override_pattern gives. Shapes and splits follow
// vLLM: vllm/model_executor/models/nemotron_h.py (NemotronHMLP, NemotronHAttention) and
// vllm/model_executor/layers/mamba/mamba_mixer2.py (MambaMixer2), whose in_proj is
// transformers' [z, x, B, C, dt]: 2 * heads * head_dim + 2 * n_groups * ssm_state_size + heads.
#include <algorithm>
#include <cstring>
#include <utility>

#include "models/hf_config_fields.h"

namespace fp8gemm::models {

namespace {

constexpr const char* kKinds = "M Mamba-2, * attention, - MLP, E mixture of experts";

// One character per layer, as hybrid_override_pattern spells them; transformers' newer
// layers_block_type list ("mamba", "attention", "mlp", "moe") is read too and must agree.
std::string layer_kinds(const HfConfig& c) {
  std::string pattern;
  if (c.has("hybrid_override_pattern")) {
    pattern = c.text("hybrid_override_pattern");
    if (pattern.empty()) c.fail("hybrid_override_pattern: empty");
    for (size_t i = 0; i < pattern.size(); ++i)
      if (std::strchr("M*-E", pattern[i]) == nullptr)
        c.fail("hybrid_override_pattern: '", pattern[i], "' (layer ", i, ") is not a layer kind (", kKinds, ")");
  }
  if (c.has("layers_block_type")) {
    const nlohmann::json& list = c.value("layers_block_type");
    if (!list.is_array() || list.empty()) c.fail("layers_block_type: expected a list of layer kinds, got ", list.dump());
    std::string from_list;
    for (size_t i = 0; i < list.size(); ++i) {
      const nlohmann::json& k = list[i];
      const char kind = k == "mamba" ? 'M' : k == "attention" ? '*' : k == "mlp" ? '-' : k == "moe" ? 'E' : '?';
      if (kind == '?')
        c.fail("layers_block_type: ", k.dump(), " (layer ", i, ") is not a layer kind (mamba, attention, mlp, moe)");
      from_list += kind;
    }
    if (!pattern.empty() && pattern != from_list)
      c.fail("hybrid_override_pattern '", pattern, "' and layers_block_type disagree");
    pattern = from_list;
  }
  if (pattern.empty()) c.fail("hybrid_override_pattern: absent (as is layers_block_type): the layers' kinds are unknown");
  if (c.has("num_hidden_layers") && c.count("num_hidden_layers") != static_cast<int>(pattern.size()))
    c.fail("num_hidden_layers = ", c.count("num_hidden_layers"), ", but hybrid_override_pattern has ", pattern.size(),
           " layers");
  const size_t moe = pattern.find('E');
  if (moe != std::string::npos)
    c.fail("hybrid_override_pattern: layer ", moe, " is 'E', a mixture-of-experts layer; its experts run as grouped "
           "GEMMs, which this parser does not model");
  // Per-layer overrides (heterogeneous "puzzle" models) would change shapes layer by layer.
  if (c.has("block_configs")) c.fail("block_configs: per-layer configurations are not modelled");
  return pattern;
}

void add_mamba(const HfConfig& c, int count, std::vector<ModelLinear>& out) {
  const int64_t hidden = c.positive("hidden_size");
  const int64_t heads = c.positive("mamba_num_heads");
  const int64_t head_dim = c.positive("mamba_head_dim");
  const int64_t groups = c.positive("n_groups");
  const int64_t state = c.positive("ssm_state_size");
  // The mixer's inner size is heads * head_dim; the config's "expand" is not used for it
  // (transformers and vLLM ignore it; it disagrees with heads * head_dim in published configs).
  if (heads % groups != 0)
    c.fail("n_groups = ", groups, " does not divide mamba_num_heads = ", heads, " (each group serves equal heads)");
  const int tp = c.tp();
  const int64_t heads_per_rank = c.per_rank(heads, "mamba_num_heads");
  int64_t groups_per_rank = 1;
  if (groups % tp == 0) {
    groups_per_rank = groups / tp;
  } else if (groups == 1) {
    c.note("n_groups = 1 < tp = " + std::to_string(tp) + ": the group's B and C are replicated on every rank");
  } else {
    c.fail("n_groups = ", groups, " is not divisible by tp = ", tp,
           " (MambaMixer2 splits groups with their heads, and replicates only a single group)");
  }
  out.push_back({"in_proj", 2 * heads_per_rank * head_dim + 2 * groups_per_rank * state + heads_per_rank, hidden,
                 count, "column", ""});
  out.push_back({"out_proj", hidden, heads_per_rank * head_dim, count, "row", ""});
}

// intermediate_size is one size, or (as vLLM reads it) a list of one or of one per MLP layer;
// each distinct size is one up/down pair.
void add_mlp(const HfConfig& c, int count, std::vector<ModelLinear>& out) {
  const int64_t hidden = c.positive("hidden_size");
  const nlohmann::json& v = c.value("intermediate_size");
  std::vector<int64_t> sizes;
  if (v.is_array()) {
    if (v.size() != 1 && v.size() != static_cast<size_t>(count))
      c.fail("intermediate_size: a list of ", v.size(), " sizes for ", count,
             " MLP layers (expected one size, or one per MLP layer)");
    for (int i = 0; i < count; ++i)
      sizes.push_back(c.positive(v[v.size() == 1 ? 0 : i], "intermediate_size[" + std::to_string(i) + "]"));
  } else {
    sizes.assign(count, c.positive("intermediate_size"));
  }
  std::vector<std::pair<int64_t, int>> distinct;  // (size, layers), first seen first
  for (int64_t s : sizes) {
    auto it = distinct.begin();
    while (it != distinct.end() && it->first != s) ++it;
    if (it == distinct.end()) distinct.push_back({s, 1});
    else ++it->second;
  }
  for (size_t i = 0; i < distinct.size(); ++i) {
    const int64_t per_rank = c.per_rank(distinct[i].first, "intermediate_size");
    const std::string suffix = distinct.size() > 1 ? "." + std::to_string(i) : "";
    out.push_back({"up" + suffix, per_rank, hidden, distinct[i].second, "column", ""});
    out.push_back({"down" + suffix, hidden, per_rank, distinct[i].second, "row", ""});
  }
}

}  // namespace

std::vector<ModelLinear> nemotron_h_linears(const HfConfig& c) {
  const std::string pattern = layer_kinds(c);
  std::vector<ModelLinear> out;
  std::string done;
  for (char kind : pattern) {  // each kind's linears where it first appears
    if (done.find(kind) != std::string::npos) continue;
    done += kind;
    const int count = static_cast<int>(std::count(pattern.begin(), pattern.end(), kind));
    if (kind == 'M') add_mamba(c, count, out);
    if (kind == '*') add_attention(c, count, out);
    if (kind == '-') add_mlp(c, count, out);
  }
  return out;
}

}  // namespace fp8gemm::models
