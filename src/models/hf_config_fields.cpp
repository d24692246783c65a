#include "models/hf_config_fields.h"

namespace fp8gemm::models {

const nlohmann::json& HfConfig::value(const std::string& field) const {
  if (!has(field)) fail(field, ": absent, and the shapes depend on it");
  return j_.at(field);
}

int64_t HfConfig::positive(const std::string& field) const { return positive(value(field), field); }

int64_t HfConfig::positive(const nlohmann::json& v, const std::string& field) const {
  // JSON has one number type: 4096.0 is an integer too, 4096.5 and "4096" are not.
  if (v.is_number_integer() && v.get<int64_t>() >= 1) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d >= 1 && d <= 1e15 && d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
  }
  fail(field, ": expected an integer >= 1, got ", v.dump());
}

int HfConfig::count(const std::string& field) const {
  const int64_t n = positive(field);
  if (n > 1000000) fail(field, " = ", n, ": more layers than any model has");
  return static_cast<int>(n);
}

std::string HfConfig::text(const std::string& field) const {
  const nlohmann::json& v = value(field);
  if (!v.is_string()) fail(field, ": expected a string, got ", v.dump());
  return v.get<std::string>();
}

int64_t HfConfig::per_rank(int64_t total, const std::string& field) const {
  if (total % tp_ != 0)
    fail(field, " = ", total, " is not divisible by tp = ", tp_, " (each rank holds an equal share of it)");
  return total / tp_;
}

// vLLM's rules (vllm/model_executor/models/llama.py LlamaAttention and
// vllm/model_executor/layers/linear.py QKVParallelLinear): each rank holds heads / tp query heads
// and max(1, kv / tp) KV heads; KV heads are split when tp <= kv and replicated in whole copies
// when tp > kv. o_proj is row-parallel: its K is the rank's query heads.
void add_attention(const HfConfig& c, int count, std::vector<ModelLinear>& out) {
  const int64_t hidden = c.positive("hidden_size");
  const int64_t heads = c.positive("num_attention_heads");
  int64_t kv = heads;
  if (c.has("num_key_value_heads")) {
    kv = c.positive("num_key_value_heads");
  } else {
    c.note("num_key_value_heads absent: transformers' default, num_attention_heads = " + std::to_string(heads) +
           " (multi-head attention)");
  }
  if (heads % kv != 0)
    c.fail("num_key_value_heads = ", kv, " does not divide num_attention_heads = ", heads,
           " (each KV head serves an equal group of query heads)");

  // head_dim, or (Nemotron-H's older configs) attention_head_dim; else hidden_size / heads, as
  // transformers and vLLM do.
  int64_t head_dim = 0;
  if (c.has("head_dim")) head_dim = c.positive("head_dim");
  if (c.has("attention_head_dim")) {
    const int64_t other = c.positive("attention_head_dim");
    if (head_dim != 0 && other != head_dim)
      c.fail("head_dim = ", head_dim, " and attention_head_dim = ", other, " disagree");
    head_dim = other;
  }
  if (head_dim == 0) {
    if (hidden % heads != 0)
      c.fail("head_dim: absent, and hidden_size = ", hidden, " is not divisible by num_attention_heads = ", heads);
    head_dim = hidden / heads;
    c.note("head_dim absent: hidden_size / num_attention_heads = " + std::to_string(head_dim));
  }

  const int tp = c.tp();
  if (heads % tp != 0)
    c.fail("num_attention_heads = ", heads, " is not divisible by tp = ", tp, " (each rank holds whole query heads)");
  int64_t kv_per_rank = 1;
  if (kv >= tp) {
    if (kv % tp != 0)
      c.fail("num_key_value_heads = ", kv, " is not divisible by tp = ", tp, " (each rank holds whole KV heads)");
    kv_per_rank = kv / tp;
  } else {
    if (tp % kv != 0)
      c.fail("num_key_value_heads = ", kv, " < tp = ", tp, " must divide tp (KV heads are replicated in whole copies)");
    c.note("num_key_value_heads = " + std::to_string(kv) + " < tp = " + std::to_string(tp) +
           ": each rank holds 1 KV head, each KV head replicated on " + std::to_string(tp / kv) + " ranks");
  }
  const int64_t q_per_rank = heads / tp;
  out.push_back({"qkv", (q_per_rank + 2 * kv_per_rank) * head_dim, hidden, count, "column", ""});
  out.push_back({"o", hidden, q_per_rank * head_dim, count, "row", ""});
}

}  // namespace fp8gemm::models
