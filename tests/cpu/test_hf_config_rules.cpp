// linears_from_hf_config_json's rules on small configs: the split of each linear across ranks,
// every field it needs or refuses (each an error naming the field), and the notes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fp8gemm/error.h"
#include "fp8gemm/models.h"

namespace fp8gemm {
namespace {

using nlohmann::json;

// hidden 1024, 8 query heads of 128, 2 KV heads, MLP 4096.
json dense() {
  return {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"},  {"hidden_size", 1024},
          {"num_attention_heads", 8},              {"num_key_value_heads", 2}, {"num_hidden_layers", 2},
          {"intermediate_size", 4096}};
}

// Mamba-2 (32 heads of 64, 8 groups, state 128), MLP, attention, MLP.
json hybrid() {
  return {{"architectures", {"NemotronHForCausalLM"}},
          {"model_type", "nemotron_h"},
          {"hidden_size", 1024},
          {"hybrid_override_pattern", "M-*-"},
          {"num_attention_heads", 8},
          {"num_key_value_heads", 2},
          {"head_dim", 128},
          {"intermediate_size", 4096},
          {"mamba_num_heads", 32},
          {"mamba_head_dim", 64},
          {"n_groups", 8},
          {"ssm_state_size", 128}};
}

std::vector<ModelLinear> linears(const json& j, int tp = 1, std::vector<std::string>* notes = nullptr) {
  return linears_from_hf_config_json(j.dump(), tp, notes);
}

// The error's message, or "" when there is none.
std::string error_of(const json& j, int tp = 1) {
  try {
    linears(j, tp);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
    return e.what();
  }
  return "";
}

#define EXPECT_ERROR(config, tp, text) EXPECT_NE(error_of(config, tp).find(text), std::string::npos) << error_of(config, tp)

const ModelLinear& find(const std::vector<ModelLinear>& ls, const std::string& name) {
  for (const ModelLinear& l : ls)
    if (l.name == name) return l;
  static const ModelLinear none;
  ADD_FAILURE() << "no linear " << name;
  return none;
}

TEST(HfConfigRules, DenseSplitsColumnsByNAndRowsByK) {
  const std::vector<ModelLinear> tp1 = linears(dense(), 1), tp2 = linears(dense(), 2);
  EXPECT_EQ(find(tp1, "qkv").n, (8 + 2 * 2) * 128);
  EXPECT_EQ(find(tp2, "qkv").n, (4 + 2 * 1) * 128);
  EXPECT_EQ(find(tp2, "qkv").k, 1024);
  EXPECT_EQ(find(tp2, "o").n, 1024);
  EXPECT_EQ(find(tp2, "o").k, 4 * 128);
  EXPECT_EQ(find(tp2, "gate_up").n, 2 * 4096 / 2);
  EXPECT_EQ(find(tp2, "down").k, 4096 / 2);
  EXPECT_EQ(find(tp2, "down").parallel, "row");
}

TEST(HfConfigRules, KvHeadsFewerThanRanksAreReplicated) {
  std::vector<std::string> notes;
  const std::vector<ModelLinear> ls = linears(dense(), 4, &notes);
  EXPECT_EQ(find(ls, "qkv").n, (2 + 2 * 1) * 128);  // 2 query heads, 1 (replicated) KV head
  EXPECT_EQ(notes.back(), "num_key_value_heads = 2 < tp = 4: each rank holds 1 KV head, each KV head replicated on 2 ranks");
  json j = dense();
  j["num_attention_heads"] = 12;
  j["num_key_value_heads"] = 4;
  j["hidden_size"] = 1536;
  EXPECT_ERROR(j, 6, "num_key_value_heads = 4 < tp = 6 must divide tp");
  j["num_key_value_heads"] = 6;
  EXPECT_ERROR(j, 4, "num_key_value_heads = 6 is not divisible by tp = 4");
}

TEST(HfConfigRules, TpMustSplitHeadsAndSizes) {
  EXPECT_ERROR(dense(), 0, "tp must be >= 1, got 0");
  EXPECT_ERROR(dense(), 3, "num_attention_heads = 8 is not divisible by tp = 3 (each rank holds whole query heads)");
  json j = dense();
  j["intermediate_size"] = 4100;
  EXPECT_ERROR(j, 8, "intermediate_size = 4100 is not divisible by tp = 8");
}

TEST(HfConfigRules, DefaultsTakenAreNoted) {
  json j = dense();
  j.erase("num_key_value_heads");
  std::vector<std::string> notes;
  EXPECT_EQ(find(linears(j, 1, &notes), "qkv").n, 3 * 1024);
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "num_key_value_heads absent: transformers' default, num_attention_heads = 8 (multi-head attention)",
                       "head_dim absent: hidden_size / num_attention_heads = 128"}));
  j["head_dim"] = 256;  // head_dim wins over hidden_size / heads (as in Nemotron-Nano-9B-v2)
  EXPECT_EQ(find(linears(j), "o").k, 8 * 256);
  j["head_dim"] = nullptr;  // null is absent
  EXPECT_EQ(find(linears(j), "o").k, 1024);
}

TEST(HfConfigRules, EachRequiredFieldIsNamedWhenAbsent) {
  for (const char* field : {"hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size"}) {
    json j = dense();
    j.erase(field);
    EXPECT_ERROR(j, 1, std::string(field) + ": absent, and the shapes depend on it");
    j[field] = nullptr;
    EXPECT_ERROR(j, 1, std::string(field) + ": absent");
  }
  for (const char* field : {"mamba_num_heads", "mamba_head_dim", "n_groups", "ssm_state_size", "intermediate_size",
                            "num_attention_heads"}) {
    json j = hybrid();
    j.erase(field);
    EXPECT_ERROR(j, 1, std::string(field) + ": absent");
  }
}

TEST(HfConfigRules, FieldValuesMustBePositiveIntegers) {
  for (const json& bad : {json("4096"), json(0), json(-1), json(4096.5), json(true), json::array({4096})}) {
    json j = dense();
    j["hidden_size"] = bad;
    EXPECT_ERROR(j, 1, "hidden_size: expected an integer >= 1, got " + bad.dump());
  }
  json j = dense();
  j["hidden_size"] = 1024.0;  // JSON has one number type
  EXPECT_EQ(find(linears(j), "o").n, 1024);
}

TEST(HfConfigRules, HeadsMustGroupAndHeadDimMustBeKnown) {
  json j = dense();
  j["num_key_value_heads"] = 3;
  EXPECT_ERROR(j, 1, "num_key_value_heads = 3 does not divide num_attention_heads = 8");
  j = dense();
  j["hidden_size"] = 1001;
  EXPECT_ERROR(j, 1, "head_dim: absent, and hidden_size = 1001 is not divisible by num_attention_heads = 8");
  j["head_dim"] = 128;
  j["attention_head_dim"] = 64;
  EXPECT_ERROR(j, 1, "head_dim = 128 and attention_head_dim = 64 disagree");
}

TEST(HfConfigRules, ArchitectureAndModelTypeMustBeKnownAndAgree) {
  json j = dense();
  j["architectures"] = {"GPT2LMHeadModel"};
  EXPECT_ERROR(j, 1, "architectures: \"GPT2LMHeadModel\" is not an architecture this parser knows (LlamaForCausalLM");
  j = dense();
  j["model_type"] = "gpt2";
  EXPECT_ERROR(j, 1, "model_type: 'gpt2' is not a model type this parser knows (llama, mistral");
  j["model_type"] = "nemotron_h";
  EXPECT_ERROR(j, 1, "architectures 'LlamaForCausalLM' and model_type 'nemotron_h' name different kinds of model");
  j.erase("architectures");
  j.erase("model_type");
  EXPECT_ERROR(j, 1, "architectures and model_type: both absent");
  j["architectures"] = "LlamaForCausalLM";
  EXPECT_ERROR(j, 1, "architectures: expected a list of class names");
  // Either alone is enough; each known name of the dense family gives the same shapes.
  for (const char* type : {"llama", "mistral", "qwen2", "qwen3"}) {
    j = dense();
    j.erase("architectures");
    j["model_type"] = type;
    EXPECT_EQ(linears(j).size(), 4u) << type;
  }
  for (const char* arch : {"MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM"}) {
    j = dense();
    j.erase("model_type");
    j["architectures"] = {arch};
    EXPECT_EQ(linears(j).size(), 4u) << arch;
  }
}

TEST(HfConfigRules, OnlyFp8QuantizationKeepsTheShapes) {
  json j = dense();
  j["quantization_config"] = {{"quant_method", "fp8"}, {"activation_scheme", "static"}};
  std::vector<std::string> notes;
  EXPECT_EQ(find(linears(j, 1, &notes), "qkv").n, 1536);
  EXPECT_NE(notes.front().find("quantization_config: FP8 weights"), std::string::npos);
  j["quantization_config"] = {
      {"quant_method", "compressed-tensors"},
      {"config_groups", {{"group_0", {{"weights", {{"num_bits", 8}, {"type", "float"}, {"strategy", "tensor"}}}}}}}};
  EXPECT_EQ(linears(j).size(), 4u);
  j["quantization_config"]["config_groups"]["group_0"]["weights"]["type"] = "int";
  EXPECT_ERROR(j, 1, "quantization_config.config_groups.group_0.weights = ");
  j["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}};
  EXPECT_ERROR(j, 1, "quantization_config.quant_method = \"awq\": only FP8 checkpoints");
  j["quantization_config"] = {{"bits", 4}};
  EXPECT_ERROR(j, 1, "quantization_config.quant_method = null");
}

TEST(HfConfigRules, RotaryKindsMustBeKnown) {
  json j = dense();
  for (const char* kind : {"default", "linear", "dynamic", "yarn", "longrope", "llama3"}) {
    j["rope_scaling"] = {{"rope_type", kind}, {"factor", 8.0}};
    EXPECT_EQ(linears(j).size(), 4u) << kind;
  }
  j["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};  // the older spelling
  EXPECT_EQ(linears(j).size(), 4u);
  j["rope_scaling"] = {{"rope_type", "wavelet"}};
  EXPECT_ERROR(j, 1, "rope_scaling.rope_type = \"wavelet\": not a rotary kind this parser knows");
  j["rope_scaling"] = {{"factor", 8.0}};
  EXPECT_ERROR(j, 1, "rope_scaling.rope_type = null");
  j["rope_scaling"] = "llama3";
  EXPECT_ERROR(j, 1, "rope_scaling: expected an object");
  j.erase("rope_scaling");
  j["rope_parameters"] = {{"rope_type", "wavelet"}, {"rope_theta", 1e6}};
  EXPECT_ERROR(j, 1, "rope_parameters.rope_type = \"wavelet\"");
}

TEST(HfConfigRules, DenseRefusesStructureItDoesNotModel) {
  for (const char* field : {"num_local_experts", "num_experts", "n_routed_experts", "moe_intermediate_size"}) {
    json j = dense();
    j[field] = 8;
    EXPECT_ERROR(j, 1, std::string(field) + " = 8: mixture-of-experts layers are not modelled");
  }
  json j = dense();
  j["num_experts"] = 0;  // none
  EXPECT_EQ(linears(j).size(), 4u);
  j["kv_lora_rank"] = 512;
  EXPECT_ERROR(j, 1, "kv_lora_rank = 512: multi-head latent attention");
  j = dense();
  j["layer_types"] = {"full_attention", "sliding_attention"};
  EXPECT_EQ(linears(j).size(), 4u);
  j["layer_types"] = {"full_attention", "linear_attention"};
  EXPECT_ERROR(j, 1, "layer_types: \"linear_attention\" is not a layer kind this parser knows");
}


TEST(HfConfigRules, HybridLinearsFollowThePattern) {
  const std::vector<ModelLinear> ls = linears(hybrid(), 2);
  ASSERT_EQ(ls.size(), 6u);
  const char* order[] = {"in_proj", "out_proj", "up", "down", "qkv", "o"};  // kinds as first met in "M-*-"
  for (size_t i = 0; i < ls.size(); ++i) EXPECT_EQ(ls[i].name, order[i]);
  // in_proj = [z, x, B, C, dt] per rank: 2 * 16 heads * 64 + 2 * 4 groups * 128 + 16 heads.
  EXPECT_EQ(find(ls, "in_proj").n, 2 * 16 * 64 + 2 * 4 * 128 + 16);
  EXPECT_EQ(find(ls, "in_proj").k, 1024);
  EXPECT_EQ(find(ls, "out_proj").k, 16 * 64);
  EXPECT_EQ(find(ls, "out_proj").parallel, "row");
  EXPECT_EQ(find(ls, "up").n, 4096 / 2);  // not gated: up alone
  EXPECT_EQ(find(ls, "up").count, 2);
  EXPECT_EQ(find(ls, "down").k, 4096 / 2);
  EXPECT_EQ(find(ls, "qkv").n, (4 + 2 * 1) * 128);
  EXPECT_EQ(find(ls, "qkv").count, 1);
  // Attention fields are needed only where there is attention.
  json j = hybrid();
  j["hybrid_override_pattern"] = "M-M-";
  j.erase("num_attention_heads");
  EXPECT_EQ(linears(j).size(), 4u);
}

TEST(HfConfigRules, HybridMambaSplitsAsMambaMixer2) {
  json j = hybrid();
  j["mamba_num_heads"] = 12;
  j["n_groups"] = 4;
  EXPECT_ERROR(j, 8, "mamba_num_heads = 12 is not divisible by tp = 8");
  j = hybrid();
  j["n_groups"] = 2;
  EXPECT_ERROR(j, 4, "n_groups = 2 is not divisible by tp = 4 (MambaMixer2 splits groups with their heads");
  j["n_groups"] = 3;
  EXPECT_ERROR(j, 1, "n_groups = 3 does not divide mamba_num_heads = 32");
  j["n_groups"] = 1;  // one group: replicated on every rank
  std::vector<std::string> notes;
  EXPECT_EQ(find(linears(j, 4, &notes), "in_proj").n, 2 * 8 * 64 + 2 * 1 * 128 + 8);
  EXPECT_EQ(notes.front(), "n_groups = 1 < tp = 4: the group's B and C are replicated on every rank");
  j["expand"] = 7;  // not used: the inner size is mamba_num_heads * mamba_head_dim
  EXPECT_EQ(find(linears(j), "out_proj").k, 32 * 64);
}

TEST(HfConfigRules, HybridPatternMustBeKnownAndComplete) {
  json j = hybrid();
  j["hybrid_override_pattern"] = "M-E-";
  EXPECT_ERROR(j, 1, "hybrid_override_pattern: layer 2 is 'E', a mixture-of-experts layer");
  j["hybrid_override_pattern"] = "M-X-";
  EXPECT_ERROR(j, 1, "hybrid_override_pattern: 'X' (layer 2) is not a layer kind (M Mamba-2, * attention, - MLP");
  j["hybrid_override_pattern"] = "";
  EXPECT_ERROR(j, 1, "hybrid_override_pattern: empty");
  j.erase("hybrid_override_pattern");
  EXPECT_ERROR(j, 1, "hybrid_override_pattern: absent (as is layers_block_type)");
  j = hybrid();
  j["num_hidden_layers"] = 5;
  EXPECT_ERROR(j, 1, "num_hidden_layers = 5, but hybrid_override_pattern has 4 layers");
  j["num_hidden_layers"] = 4;
  EXPECT_EQ(linears(j).size(), 6u);
  j["block_configs"] = json::array({json::object()});
  EXPECT_ERROR(j, 1, "block_configs: per-layer configurations are not modelled");
}

TEST(HfConfigRules, HybridReadsLayersBlockTypeToo) {
  json j = hybrid();
  j["layers_block_type"] = {"mamba", "mlp", "attention", "mlp"};
  const std::vector<ModelLinear> both = linears(j);
  j.erase("hybrid_override_pattern");
  const std::vector<ModelLinear> list_only = linears(j);
  ASSERT_EQ(both.size(), list_only.size());
  for (size_t i = 0; i < both.size(); ++i) EXPECT_EQ(both[i].n, list_only[i].n);
  j["layers_block_type"] = {"mamba", "moe"};
  EXPECT_ERROR(j, 1, "layer 1 is 'E', a mixture-of-experts layer");
  j["layers_block_type"] = {"mamba", "conv"};
  EXPECT_ERROR(j, 1, "layers_block_type: \"conv\" (layer 1) is not a layer kind");
  j["hybrid_override_pattern"] = "M-*-";
  j["layers_block_type"] = {"mamba", "mlp", "mlp", "mlp"};
  EXPECT_ERROR(j, 1, "hybrid_override_pattern 'M-*-' and layers_block_type disagree");
}

TEST(HfConfigRules, HybridMlpSizesMayBeAList) {
  json j = hybrid();
  j["intermediate_size"] = {4096};
  EXPECT_EQ(find(linears(j), "up").n, 4096);
  j["intermediate_size"] = {4096, 2048};  // one per MLP layer
  const std::vector<ModelLinear> ls = linears(j, 2);
  EXPECT_EQ(find(ls, "up.0").n, 2048);
  EXPECT_EQ(find(ls, "up.1").n, 1024);
  EXPECT_EQ(find(ls, "down.1").k, 1024);
  EXPECT_EQ(find(ls, "up.1").count, 1);
  j["intermediate_size"] = {4096, 2048, 1024};
  EXPECT_ERROR(j, 1, "intermediate_size: a list of 3 sizes for 2 MLP layers");
  j["intermediate_size"] = {4096, "2048"};
  EXPECT_ERROR(j, 1, "intermediate_size[1]: expected an integer >= 1");
}

}  // namespace
}  // namespace fp8gemm
