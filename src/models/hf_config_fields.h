// A config.json being read for one tensor-parallel degree: typed reads of its fields, the split of
// a size across ranks and the notes, each failure an Error(kInvalidArgument) that names the source
// and the field. The architecture rules (dense_decoder.cpp, nemotron_h.cpp) read through it only.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fp8gemm/check.h"
#include "fp8gemm/models.h"

namespace fp8gemm::models {

class HfConfig {
 public:
  HfConfig(const nlohmann::json& j, std::string source, int tp, std::vector<std::string>* notes)
      : j_(j), source_(std::move(source)), tp_(tp), notes_(notes) {}

  int tp() const { return tp_; }
  // Present and not null (transformers writes an unset optional field as null).
  bool has(const std::string& field) const { return j_.contains(field) && !j_.at(field).is_null(); }
  // The field's value; a failure naming it when absent.
  const nlohmann::json& value(const std::string& field) const;
  // A required integer >= 1.
  int64_t positive(const std::string& field) const;
  // An integer >= 1 read from `v`, which is `field` (an element of a list, say).
  int64_t positive(const nlohmann::json& v, const std::string& field) const;
  // A required layer count (an integer in [1, 1e6]).
  int count(const std::string& field) const;
  // A required string.
  std::string text(const std::string& field) const;

  // total / tp, where `field` = total is split across the ranks; a failure unless tp divides it.
  int64_t per_rank(int64_t total, const std::string& field) const;

  void note(const std::string& text) const {
    if (notes_) notes_->push_back(text);
  }

  template <typename... Parts>
  [[noreturn]] void fail(const Parts&... parts) const {
    FP8GEMM_FAIL(kInvalidArgument, source_, ": ", parts...);
  }

 private:
  const nlohmann::json& j_;
  std::string source_;
  int tp_;
  std::vector<std::string>* notes_;
};

// The attention block's qkv and o at the config's tp (vLLM's QKVParallelLinear and
// RowParallelLinear), for `count` layers.
void add_attention(const HfConfig& c, int count, std::vector<ModelLinear>& out);

// Llama, Mistral, Qwen2 and Qwen3 decoders (dense_decoder.cpp).
std::vector<ModelLinear> dense_decoder_linears(const HfConfig& c);
// Nemotron-H hybrids (nemotron_h.cpp).
std::vector<ModelLinear> nemotron_h_linears(const HfConfig& c);

}  // namespace fp8gemm::models
