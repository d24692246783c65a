// Llama, Mistral, Qwen2 and Qwen3 decoders: every layer is attention (fused qkv, o) and a gated
// MLP (fused gate_up, down), as vLLM runs them (vllm/model_executor/models/llama.py, qwen2.py,
// qwen3.py: MergedColumnParallelLinear gate_up_proj, RowParallelLinear down_proj).
#include "models/hf_config_fields.h"

namespace fp8gemm::models {

namespace {

// Fields that mean a layer structure these rules do not model: the shapes would be wrong, so
// they are refused rather than ignored.
struct Unmodelled {
  const char* field;
  const char* what;
};
constexpr Unmodelled kUnmodelled[] = {
    {"num_local_experts", "mixture-of-experts layers"}, {"num_experts", "mixture-of-experts layers"},
    {"n_routed_experts", "mixture-of-experts layers"},  {"moe_intermediate_size", "mixture-of-experts layers"},
    {"kv_lora_rank", "multi-head latent attention"},     {"q_lora_rank", "multi-head latent attention"},
};

void refuse_unmodelled(const HfConfig& c) {
  for (const Unmodelled& u : kUnmodelled) {
    if (!c.has(u.field)) continue;
    const nlohmann::json& v = c.value(u.field);
    if (v.is_number() && v.get<double>() == 0) continue;  // "num_experts": 0 means none
    c.fail(u.field, " = ", v.dump(), ": ", u.what, " are not modelled for this architecture");
  }
  // transformers' per-layer attention kinds: full and sliding-window attention have the same
  // linears; any other kind would not.
  if (c.has("layer_types")) {
    const nlohmann::json& kinds = c.value("layer_types");
    if (!kinds.is_array()) c.fail("layer_types: expected a list, got ", kinds.dump());
    for (const nlohmann::json& k : kinds)
      if (k != "full_attention" && k != "sliding_attention")
        c.fail("layer_types: ", k.dump(), " is not a layer kind this parser knows (full_attention, sliding_attention)");
  }
}

}  // namespace

std::vector<ModelLinear> dense_decoder_linears(const HfConfig& c) {
  refuse_unmodelled(c);
  const int layers = c.count("num_hidden_layers");
  std::vector<ModelLinear> out;
  add_attention(c, layers, out);
  const int64_t hidden = c.positive("hidden_size");
  const int64_t intermediate = c.per_rank(c.positive("intermediate_size"), "intermediate_size");
  out.push_back({"gate_up", 2 * intermediate, hidden, layers, "column", ""});
  out.push_back({"down", hidden, intermediate, layers, "row", ""});
  return out;
}

}  // namespace fp8gemm::models
