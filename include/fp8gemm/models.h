// The linear layers a model runs, derived from its Hugging Face config.json: what `fp8gemm tune
// --hf-config` and `bench --hf-config` tune and time, and what Python's
// fp8gemm.hf_config_linears returns. Shapes are per tensor-parallel rank, sharded as vLLM
// shards them (docs/decisions/hf_config.md names the files followed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fp8gemm {

// One kind of linear layer of a model on one rank: its weight is W[n, k] (out = x @ W^T), and
// `count` of the model's layers hold one. Fused projections are one linear, as engines run them:
// "qkv" (q, k and v), "gate_up" (gate and up), "in_proj" (Mamba's z, x, B, C and dt).
struct ModelLinear {
  std::string name;      // "qkv", "o", "gate_up", "down", "up", "in_proj", "out_proj"
  int64_t n = 0;
  int64_t k = 0;
  int count = 0;
  std::string parallel;  // "column" (N split across ranks) or "row" (K split)
  // Empty when fp8gemm can run the shape; otherwise why not (N or K not a multiple of 16). Such
  // linears are still listed, never dropped; the CLI skips them with this reason.
  std::string unsupported;
};

// The linears of the config.json at `path_or_dir` (a file, or a folder holding config.json) at
// tensor-parallel degree `tp` (>= 1), in the order a layer runs them. Each thing a caller should
// know and would not see in the shapes (a default taken for an absent field, KV heads replicated
// across ranks, a shape fp8gemm cannot run) is appended to *notes when notes is not null.
// Throws Error(kInvalidArgument) naming the field for a field it needs and does not find, an
// architecture or model_type it does not know, or a value it does not understand (one that would
// change the shapes in a way it does not model), and naming the rule for a tp the model cannot
// be split by; Error(kInvalidArgument) too for a path that holds no config.json or is not JSON.
std::vector<ModelLinear> linears_from_hf_config(const std::string& path_or_dir, int tp,
                                                std::vector<std::string>* notes = nullptr);

// The same for the text of a config.json.
std::vector<ModelLinear> linears_from_hf_config_json(const std::string& json_text, int tp,
                                                     std::vector<std::string>* notes = nullptr);

}  // namespace fp8gemm
