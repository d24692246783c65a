// linears_from_hf_config: reads a config.json, knows the model by its architectures or
// model_type, refuses settings that would change linear shapes in ways no rule here models
// (quantizations that pack weights, unknown rotary kinds), runs the architecture's rule and marks
// the shapes fp8gemm cannot run.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/hf_config_fields.h"

namespace fp8gemm {

namespace {

using models::HfConfig;
using nlohmann::json;

enum class Family { kDenseDecoder, kNemotronH };

struct Known {
  const char* name;
  Family family;
};
constexpr Known kArchitectures[] = {
    {"LlamaForCausalLM", Family::kDenseDecoder}, {"MistralForCausalLM", Family::kDenseDecoder},
    {"Qwen2ForCausalLM", Family::kDenseDecoder}, {"Qwen3ForCausalLM", Family::kDenseDecoder},
    {"NemotronHForCausalLM", Family::kNemotronH},
};
constexpr Known kModelTypes[] = {
    {"llama", Family::kDenseDecoder}, {"mistral", Family::kDenseDecoder}, {"qwen2", Family::kDenseDecoder},
    {"qwen3", Family::kDenseDecoder}, {"nemotron_h", Family::kNemotronH},
};

template <size_t N>
const Known* find(const Known (&table)[N], const std::string& name) {
  for (const Known& k : table)
    if (name == k.name) return &k;
  return nullptr;
}

template <size_t N>
std::string names(const Known (&table)[N]) {
  std::string s;
  for (const Known& k : table) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

// architectures[0] and model_type, whichever are present, must be known and agree.
Family family_of(const HfConfig& c) {
  const Known* arch = nullptr;
  if (c.has("architectures")) {
    const json& list = c.value("architectures");
    if (!list.is_array() || list.empty() || !list[0].is_string())
      c.fail("architectures: expected a list of class names, got ", list.dump());
    for (const json& a : list) {
      const Known* k = a.is_string() ? find(kArchitectures, a.get<std::string>()) : nullptr;
      if (!k) c.fail("architectures: ", a.dump(), " is not an architecture this parser knows (", names(kArchitectures), ")");
      if (arch && k->family != arch->family) c.fail("architectures: ", list.dump(), " name different kinds of model");
      arch = k;
    }
  }
  const Known* type = nullptr;
  if (c.has("model_type")) {
    const std::string t = c.text("model_type");
    type = find(kModelTypes, t);
    if (!type) c.fail("model_type: '", t, "' is not a model type this parser knows (", names(kModelTypes), ")");
  }
  if (!arch && !type) c.fail("architectures and model_type: both absent, so the model is unknown");
  if (arch && type && arch->family != type->family)
    c.fail("architectures '", arch->name, "' and model_type '", type->name, "' name different kinds of model");
  return arch ? arch->family : type->family;
}

// FP8 checkpoints keep the unquantized linears' shapes; other quantizations pack weights into
// other shapes (and are not what fp8gemm runs).
void check_quantization(const HfConfig& c) {
  if (!c.has("quantization_config")) return;
  const json& q = c.value("quantization_config");
  if (!q.is_object()) c.fail("quantization_config: expected an object, got ", q.dump());
  const json method = q.contains("quant_method") ? q.at("quant_method") : json();
  if (method == "fp8") {
    c.note("quantization_config: FP8 weights (quant_method fp8); the linears have the unquantized model's shapes");
    return;
  }
  if (method == "compressed-tensors") {
    const json groups = q.contains("config_groups") ? q.at("config_groups") : json();
    if (!groups.is_object() || groups.empty())
      c.fail("quantization_config.config_groups: expected the quantized groups, got ", groups.dump());
    for (const auto& [name, group] : groups.items()) {
      const json w = group.is_object() && group.contains("weights") ? group.at("weights") : json();
      const bool fp8 = w.is_object() && w.contains("num_bits") && w.at("num_bits") == 8 && w.contains("type") &&
                       w.at("type") == "float";
      if (!fp8)
        c.fail("quantization_config.config_groups.", name, ".weights = ", w.dump(),
               ": only 8-bit float weights keep the linears' shapes");
    }
    c.note("quantization_config: FP8 weights (compressed-tensors); the linears have the unquantized model's shapes");
    return;
  }
  c.fail("quantization_config.quant_method = ", method.dump(),
         ": only FP8 checkpoints (fp8, or compressed-tensors with 8-bit float weights) keep the linears' shapes");
}

// transformers' rotary kinds (ROPE_INIT_FUNCTIONS) change no linear's shape; a kind it does not
// define is a model these rules do not know.
void check_rope(const HfConfig& c) {
  static const char* const kRopeTypes[] = {"default", "linear", "dynamic", "yarn", "longrope", "llama3"};
  for (const char* field : {"rope_scaling", "rope_parameters"}) {
    if (!c.has(field)) continue;
    const json& r = c.value(field);
    if (!r.is_object()) c.fail(field, ": expected an object, got ", r.dump());
    const char* key = r.contains("rope_type") ? "rope_type" : "type";
    const json kind = r.contains(key) ? r.at(key) : json();
    bool known = false;
    for (const char* t : kRopeTypes) known = known || kind == t;
    if (!known)
      c.fail(field, ".rope_type = ", kind.dump(),
             ": not a rotary kind this parser knows (default, linear, dynamic, yarn, longrope, llama3)");
  }
}

// validate_problem's rule (src/core/validate.cpp): N and K multiples of 16.
void mark_unsupported(const HfConfig& c, std::vector<ModelLinear>& linears) {
  for (ModelLinear& l : linears) {
    std::vector<std::string> off;
    if (l.n % 16 != 0) off.push_back("N = " + std::to_string(l.n));
    if (l.k % 16 != 0) off.push_back("K = " + std::to_string(l.k));
    if (off.empty()) continue;
    const std::string why =
        off.size() == 2 ? off[0] + " and " + off[1] + " are not multiples of 16" : off[0] + " is not a multiple of 16";
    l.unsupported = why;
    c.note(l.name + " " + std::to_string(l.n) + "x" + std::to_string(l.k) + " at tp = " + std::to_string(c.tp()) +
           ": " + why + ", so fp8gemm cannot run it");
  }
}

// Python's json module, which writes config.json, spells non-finite floats Infinity, -Infinity
// and NaN, for which JSON has no literal (Nemotron-H configs hold "time_step_limit": [0.0,
// Infinity]). No rule reads such a field, so each becomes null before parsing.
std::string with_non_finite_as_null(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < text.size()) out += text[++i];
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == '"') in_string = true;
    const char* word = nullptr;
    for (const char* w : {"-Infinity", "Infinity", "NaN"})
      if (text.compare(i, std::strlen(w), w) == 0) word = w;
    if (!word) {
      out += ch;
      continue;
    }
    out += "null";
    i += std::strlen(word) - 1;
  }
  return out;
}

std::vector<ModelLinear> linears_of(const std::string& text, const std::string& source, int tp,
                                    std::vector<std::string>* notes) {
  FP8GEMM_REQUIRE(tp >= 1, kInvalidArgument, "tp must be >= 1, got ", tp);
  json j;
  try {
    j = json::parse(with_non_finite_as_null(text));
  } catch (const json::exception& e) {
    FP8GEMM_FAIL(kInvalidArgument, source, ": not valid JSON: ", e.what());
  }
  if (!j.is_object()) FP8GEMM_FAIL(kInvalidArgument, source, ": expected a JSON object, got ", j.type_name());
  const HfConfig c(j, source, tp, notes);
  try {
    const Family family = family_of(c);
    check_quantization(c);
    check_rope(c);
    std::vector<ModelLinear> out =
        family == Family::kNemotronH ? models::nemotron_h_linears(c) : models::dense_decoder_linears(c);
    mark_unsupported(c, out);
    return out;
  } catch (const json::exception& e) {  // a field of an unexpected type met deep in a rule
    c.fail(e.what());
  }
}

}  // namespace

std::vector<ModelLinear> linears_from_hf_config_json(const std::string& json_text, int tp,
                                                     std::vector<std::string>* notes) {
  return linears_of(json_text, "config.json", tp, notes);
}

std::vector<ModelLinear> linears_from_hf_config(const std::string& path_or_dir, int tp,
                                                std::vector<std::string>* notes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path path(path_or_dir);
  FP8GEMM_REQUIRE(!path_or_dir.empty(), kInvalidArgument, "hf config: the path is empty");
  if (fs::is_directory(path, ec)) {
    path /= "config.json";
    FP8GEMM_REQUIRE(fs::is_regular_file(path, ec), kInvalidArgument, path_or_dir,
                    ": the folder holds no config.json");
  }
  FP8GEMM_REQUIRE(fs::exists(path, ec), kInvalidArgument, path_or_dir,
                  ": no such file or folder (expected a config.json or a folder holding one)");
  std::ifstream f(path);
  FP8GEMM_REQUIRE(f.is_open(), kIo, "cannot read ", path.string());
  std::stringstream text;
  text << f.rdbuf();
  return linears_of(text.str(), path.string(), tp, notes);
}

}  // namespace fp8gemm
