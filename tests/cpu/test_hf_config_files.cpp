// linears_from_hf_config's inputs (a file, a folder holding config.json, what is not there, what
// is not JSON, Python's non-finite floats) and the CLI's --hf-config helpers (tools/common).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fp8gemm/error.h"
#include "fp8gemm/models.h"
#include "tools/common/shapes.h"

namespace fp8gemm {
namespace {

namespace fs = std::filesystem;

std::string config_path(const std::string& file) { return std::string(FP8GEMM_TEST_DATA_DIR) + "/hf_configs/" + file; }

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A fresh folder under the temporary directory, removed at the end of the test.
class TempFolder {
 public:
  explicit TempFolder(const std::string& name) : path_(fs::temp_directory_path() / ("fp8gemm_test_" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempFolder() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST(HfConfigFiles, AFolderHoldingConfigJsonIsReadLikeTheFile) {
  TempFolder folder("Llama-3.1-8B");
  fs::copy_file(config_path("llama-3.1-8b.json"), folder.path() / "config.json");
  const std::vector<ModelLinear> from_folder = linears_from_hf_config(folder.path().string(), 8);
  const std::vector<ModelLinear> from_file = linears_from_hf_config(config_path("llama-3.1-8b.json"), 8);
  ASSERT_EQ(from_folder.size(), from_file.size());
  for (size_t i = 0; i < from_file.size(); ++i) {
    EXPECT_EQ(from_folder[i].n, from_file[i].n);
    EXPECT_EQ(from_folder[i].k, from_file[i].k);
  }
  EXPECT_EQ(linears_from_hf_config(folder.path().string() + "/", 1).size(), 4u);
}

TEST(HfConfigFiles, WhatIsNotThereIsNamed) {
  const std::string missing = config_path("no-such-model.json");
  EXPECT_CONTAINS(error_of([&] { linears_from_hf_config(missing, 1); }),
                  missing + ": no such file or folder (expected a config.json or a folder holding one)");
  TempFolder empty("empty_folder");
  EXPECT_CONTAINS(error_of([&] { linears_from_hf_config(empty.path().string(), 1); }),
                  empty.path().string() + ": the folder holds no config.json");
  EXPECT_CONTAINS(error_of([&] { linears_from_hf_config("", 1); }), "the path is empty");
}

TEST(HfConfigFiles, TextThatIsNotAConfigObjectIsRefused) {
  EXPECT_CONTAINS(error_of([] { linears_from_hf_config_json("{\"hidden_size\": ", 1); }), "config.json: not valid JSON");
  EXPECT_CONTAINS(error_of([] { linears_from_hf_config_json("[1, 2]", 1); }),
                  "config.json: expected a JSON object, got array");
  TempFolder folder("bad_json");
  std::ofstream(folder.path() / "config.json") << "{ not json }";
  EXPECT_CONTAINS(error_of([&] { linears_from_hf_config(folder.path().string(), 1); }),
                  (folder.path() / "config.json").string() + ": not valid JSON");
}

// Python's json writes float('inf') as Infinity (Nemotron-H's time_step_limit); such values
// parse, and the same words inside strings are left alone.
TEST(HfConfigFiles, PythonsNonFiniteFloatsParse) {
  std::string text = read(config_path("llama-3.1-8b.json"));
  text.insert(1, "\"time_step_limit\": [0.0, Infinity], \"x\": [-Infinity, NaN], \"note\": \"NaN, Infinity\",");
  EXPECT_EQ(linears_from_hf_config_json(text, 1).size(), 4u);
  EXPECT_NE(read(config_path("nemotron-nano-9b-v2.json")).find("Infinity"), std::string::npos);
}

TEST(HfConfigSpec, PathAndTp) {
  EXPECT_EQ(parse_hf_config_spec("a/config.json").path, "a/config.json");
  EXPECT_EQ(parse_hf_config_spec("a/config.json").tp, 1);
  const HfConfigSpec s = parse_hf_config_spec("models/Llama-3.1-8B:tp=8");
  EXPECT_EQ(s.path, "models/Llama-3.1-8B");
  EXPECT_EQ(s.tp, 8);
  for (const char* bad : {"a.json:tp=0", "a.json:tp=x", "a.json:tp=", "a.json:tp=-2", "a.json:tp=4k"})
    EXPECT_CONTAINS(error_of([&] { parse_hf_config_spec(bad); }), "--hf-config: '" + std::string(bad) +
                                                                      "': tp must be an integer >= 1");
  EXPECT_CONTAINS(error_of([] { parse_hf_config_spec(":tp=2"); }), "--hf-config: ':tp=2' names no file");
}

TEST(HfConfigSpec, LayersAreNamedAfterTheModelAndTp) {
  std::ostringstream out;
  const std::vector<NamedShape> tp8 = hf_config_shapes(config_path("llama-3.1-8b.json") + ":tp=8", out);
  ASSERT_EQ(tp8.size(), 4u);
  EXPECT_EQ(tp8[0].name, "llama-3.1-8b_tp8.qkv");
  EXPECT_EQ(tp8[0].n, 768);
  EXPECT_EQ(tp8[3].name, "llama-3.1-8b_tp8.down");
  EXPECT_EQ(hf_config_shapes(config_path("llama-3.1-8b.json"), out)[1].name, "llama-3.1-8b.o");
  TempFolder folder("Meta-Llama-3.1-8B");
  fs::copy_file(config_path("llama-3.1-8b.json"), folder.path() / "config.json");
  EXPECT_EQ(hf_config_shapes(folder.path().string(), out)[0].name, "fp8gemm_test_Meta-Llama-3.1-8B.qkv");
  EXPECT_EQ(hf_config_shapes((folder.path() / "config.json").string(), out)[0].name,
            "fp8gemm_test_Meta-Llama-3.1-8B.qkv");
}

// The derived linears are printed before any work, and a linear fp8gemm cannot run is printed as
// skipped with why, and left out of the layers.
TEST(HfConfigSpec, PrintsEveryLinearAndSkipsWhatCannotRun) {
  std::ostringstream out;
  const std::vector<NamedShape> layers = hf_config_shapes(config_path("nemotron-nano-9b-v2.json") + ":tp=8", out);
  ASSERT_EQ(layers.size(), 4u);
  for (const NamedShape& l : layers) EXPECT_TRUE(l.n % 16 == 0 && l.k % 16 == 0) << l.name;
  const std::string text = out.str();
  EXPECT_CONTAINS(text, "nemotron-nano-9b-v2_tp8.in_proj");
  EXPECT_CONTAINS(text, "column");
  EXPECT_CONTAINS(text, "nemotron-nano-9b-v2_tp8.up");
  EXPECT_CONTAINS(text, "skipped: N = 1960 is not a multiple of 16");
  EXPECT_CONTAINS(text, "note: down 4480x1960 at tp = 8: K = 1960 is not a multiple of 16");
}

TEST(HfConfigSpec, ParserErrorsNameTheOption) {
  std::ostringstream out;
  const std::string path = config_path("llama-3.1-8b.json");
  EXPECT_EQ(error_of([&] { hf_config_shapes(path + ":tp=3", out); }),
            "fp8gemm: --hf-config: " + path +
                ": num_attention_heads = 32 is not divisible by tp = 3 (each rank holds whole query heads)");
}

}  // namespace
}  // namespace fp8gemm
