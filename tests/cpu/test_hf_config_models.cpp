// linears_from_hf_config on the shipped configs of real models (tests/data/hf_configs) at TP 1, 2,
// 4 and 8: every linear's per-rank (N, K), layer count and parallel style, written out by hand.
// The TP 1 shapes of Llama-3.1-8B, Nemotron-H-8B and Nemotron-Nano-9B-v2 and the TP 8 shapes of
// Llama-3.3-70B are those of the DESIGN suite (docs/design.md, tools/common/shapes.cpp).
#include <gtest/gtest.h>

#include "fp8gemm/error.h"
#include "fp8gemm/models.h"

namespace fp8gemm {
namespace {

std::string config_path(const std::string& file) { return std::string(FP8GEMM_TEST_DATA_DIR) + "/hf_configs/" + file; }

struct Expected {
  const char* name;
  int64_t n, k;
  int count;
  const char* parallel;
};

void expect_linears(const std::string& file, int tp, const std::vector<Expected>& want) {
  std::vector<std::string> notes;
  const std::vector<ModelLinear> got = linears_from_hf_config(config_path(file), tp, &notes);
  ASSERT_EQ(got.size(), want.size()) << file << " at tp " << tp;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string where = file + " at tp " + std::to_string(tp) + ": " + want[i].name;
    EXPECT_EQ(got[i].name, want[i].name) << where;
    EXPECT_EQ(got[i].n, want[i].n) << where;
    EXPECT_EQ(got[i].k, want[i].k) << where;
    EXPECT_EQ(got[i].count, want[i].count) << where;
    EXPECT_EQ(got[i].parallel, want[i].parallel) << where;
  }
}

TEST(HfConfigModels, Llama31_8B) {
  const char* f = "llama-3.1-8b.json";
  expect_linears(f, 1, {{"qkv", 6144, 4096, 32, "column"}, {"o", 4096, 4096, 32, "row"},
                        {"gate_up", 28672, 4096, 32, "column"}, {"down", 4096, 14336, 32, "row"}});
  expect_linears(f, 2, {{"qkv", 3072, 4096, 32, "column"}, {"o", 4096, 2048, 32, "row"},
                        {"gate_up", 14336, 4096, 32, "column"}, {"down", 4096, 7168, 32, "row"}});
  expect_linears(f, 4, {{"qkv", 1536, 4096, 32, "column"}, {"o", 4096, 1024, 32, "row"},
                        {"gate_up", 7168, 4096, 32, "column"}, {"down", 4096, 3584, 32, "row"}});
  // 8 KV heads over 8 ranks: 4 query heads and 1 KV head each.
  expect_linears(f, 8, {{"qkv", 768, 4096, 32, "column"}, {"o", 4096, 512, 32, "row"},
                        {"gate_up", 3584, 4096, 32, "column"}, {"down", 4096, 1792, 32, "row"}});
}

TEST(HfConfigModels, Llama33_70B) {
  const char* f = "llama-3.3-70b.json";
  expect_linears(f, 1, {{"qkv", 10240, 8192, 80, "column"}, {"o", 8192, 8192, 80, "row"},
                        {"gate_up", 57344, 8192, 80, "column"}, {"down", 8192, 28672, 80, "row"}});
  expect_linears(f, 2, {{"qkv", 5120, 8192, 80, "column"}, {"o", 8192, 4096, 80, "row"},
                        {"gate_up", 28672, 8192, 80, "column"}, {"down", 8192, 14336, 80, "row"}});
  expect_linears(f, 4, {{"qkv", 2560, 8192, 80, "column"}, {"o", 8192, 2048, 80, "row"},
                        {"gate_up", 14336, 8192, 80, "column"}, {"down", 8192, 7168, 80, "row"}});
  expect_linears(f, 8, {{"qkv", 1280, 8192, 80, "column"}, {"o", 8192, 1024, 80, "row"},
                        {"gate_up", 7168, 8192, 80, "column"}, {"down", 8192, 3584, 80, "row"}});
}

TEST(HfConfigModels, Mistral7Bv03HasLlama8BShapes) {
  const char* f = "mistral-7b-v0.3.json";
  expect_linears(f, 1, {{"qkv", 6144, 4096, 32, "column"}, {"o", 4096, 4096, 32, "row"},
                        {"gate_up", 28672, 4096, 32, "column"}, {"down", 4096, 14336, 32, "row"}});
  expect_linears(f, 2, {{"qkv", 3072, 4096, 32, "column"}, {"o", 4096, 2048, 32, "row"},
                        {"gate_up", 14336, 4096, 32, "column"}, {"down", 4096, 7168, 32, "row"}});
  expect_linears(f, 4, {{"qkv", 1536, 4096, 32, "column"}, {"o", 4096, 1024, 32, "row"},
                        {"gate_up", 7168, 4096, 32, "column"}, {"down", 4096, 3584, 32, "row"}});
  expect_linears(f, 8, {{"qkv", 768, 4096, 32, "column"}, {"o", 4096, 512, 32, "row"},
                        {"gate_up", 3584, 4096, 32, "column"}, {"down", 4096, 1792, 32, "row"}});
}

TEST(HfConfigModels, Qwen25_7B) {
  const char* f = "qwen2.5-7b.json";
  expect_linears(f, 1, {{"qkv", 4608, 3584, 28, "column"}, {"o", 3584, 3584, 28, "row"},
                        {"gate_up", 37888, 3584, 28, "column"}, {"down", 3584, 18944, 28, "row"}});
  expect_linears(f, 2, {{"qkv", 2304, 3584, 28, "column"}, {"o", 3584, 1792, 28, "row"},
                        {"gate_up", 18944, 3584, 28, "column"}, {"down", 3584, 9472, 28, "row"}});
  expect_linears(f, 4, {{"qkv", 1152, 3584, 28, "column"}, {"o", 3584, 896, 28, "row"},
                        {"gate_up", 9472, 3584, 28, "column"}, {"down", 3584, 4736, 28, "row"}});
  // 28 query heads do not split over 8 ranks: vLLM refuses this TP, and so does the parser.
  try {
    linears_from_hf_config(config_path(f), 8);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("num_attention_heads = 28 is not divisible by tp = 8"), std::string::npos)
        << e.what();
  }
}

TEST(HfConfigModels, Qwen3_8B) {
  const char* f = "qwen3-8b.json";
  expect_linears(f, 1, {{"qkv", 6144, 4096, 36, "column"}, {"o", 4096, 4096, 36, "row"},
                        {"gate_up", 24576, 4096, 36, "column"}, {"down", 4096, 12288, 36, "row"}});
  expect_linears(f, 2, {{"qkv", 3072, 4096, 36, "column"}, {"o", 4096, 2048, 36, "row"},
                        {"gate_up", 12288, 4096, 36, "column"}, {"down", 4096, 6144, 36, "row"}});
  expect_linears(f, 4, {{"qkv", 1536, 4096, 36, "column"}, {"o", 4096, 1024, 36, "row"},
                        {"gate_up", 6144, 4096, 36, "column"}, {"down", 4096, 3072, 36, "row"}});
  expect_linears(f, 8, {{"qkv", 768, 4096, 36, "column"}, {"o", 4096, 512, 36, "row"},
                        {"gate_up", 3072, 4096, 36, "column"}, {"down", 4096, 1536, 36, "row"}});
}

// 27 Mamba-2, 25 MLP and 4 attention layers. in_proj = 2 * 128 * 80 + 2 * 8 * 128 + 128 at TP 1;
// qkv = (40 + 2 * 8) * 128 (head_dim 128, not 4480 / 40).
TEST(HfConfigModels, NemotronNano9Bv2) {
  const char* f = "nemotron-nano-9b-v2.json";
  expect_linears(f, 1, {{"in_proj", 22656, 4480, 27, "column"}, {"out_proj", 4480, 10240, 27, "row"},
                        {"up", 15680, 4480, 25, "column"}, {"down", 4480, 15680, 25, "row"},
                        {"qkv", 7168, 4480, 4, "column"}, {"o", 4480, 5120, 4, "row"}});
  expect_linears(f, 2, {{"in_proj", 11328, 4480, 27, "column"}, {"out_proj", 4480, 5120, 27, "row"},
                        {"up", 7840, 4480, 25, "column"}, {"down", 4480, 7840, 25, "row"},
                        {"qkv", 3584, 4480, 4, "column"}, {"o", 4480, 2560, 4, "row"}});
  expect_linears(f, 4, {{"in_proj", 5664, 4480, 27, "column"}, {"out_proj", 4480, 2560, 27, "row"},
                        {"up", 3920, 4480, 25, "column"}, {"down", 4480, 3920, 25, "row"},
                        {"qkv", 1792, 4480, 4, "column"}, {"o", 4480, 1280, 4, "row"}});
  expect_linears(f, 8, {{"in_proj", 2832, 4480, 27, "column"}, {"out_proj", 4480, 1280, 27, "row"},
                        {"up", 1960, 4480, 25, "column"}, {"down", 4480, 1960, 25, "row"},
                        {"qkv", 896, 4480, 4, "column"}, {"o", 4480, 640, 4, "row"}});
}

// The MLP's 15680 / 8 = 1960 is not a multiple of 16: listed, marked, and noted, never dropped.
TEST(HfConfigModels, NemotronNano9Bv2AtTp8ReportsTheMlpItCannotRun) {
  std::vector<std::string> notes;
  const std::vector<ModelLinear> got = linears_from_hf_config(config_path("nemotron-nano-9b-v2.json"), 8, &notes);
  for (const ModelLinear& l : got) {
    const bool mlp = l.name == "up" || l.name == "down";
    EXPECT_EQ(l.unsupported.empty(), !mlp) << l.name << ": " << l.unsupported;
  }
  EXPECT_EQ(got[2].unsupported, "N = 1960 is not a multiple of 16");
  EXPECT_EQ(got[3].unsupported, "K = 1960 is not a multiple of 16");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], "up 1960x4480 at tp = 8: N = 1960 is not a multiple of 16, so fp8gemm cannot run it");
  EXPECT_EQ(notes[1], "down 4480x1960 at tp = 8: K = 1960 is not a multiple of 16, so fp8gemm cannot run it");
  for (int tp : {1, 2, 4})
    for (const ModelLinear& l : linears_from_hf_config(config_path("nemotron-nano-9b-v2.json"), tp))
      EXPECT_TRUE(l.unsupported.empty()) << l.name << " at tp " << tp;
}

// 24 Mamba-2, 24 MLP and 4 attention layers; its attention head size is spelled
// attention_head_dim. in_proj = 2 * 128 * 64 + 2 * 8 * 128 + 128 at TP 1.
TEST(HfConfigModels, NemotronH8B) {
  const char* f = "nemotron-h-8b-base-8k.json";
  expect_linears(f, 1, {{"in_proj", 18560, 4096, 24, "column"}, {"out_proj", 4096, 8192, 24, "row"},
                        {"up", 21504, 4096, 24, "column"}, {"down", 4096, 21504, 24, "row"},
                        {"qkv", 6144, 4096, 4, "column"}, {"o", 4096, 4096, 4, "row"}});
  expect_linears(f, 2, {{"in_proj", 9280, 4096, 24, "column"}, {"out_proj", 4096, 4096, 24, "row"},
                        {"up", 10752, 4096, 24, "column"}, {"down", 4096, 10752, 24, "row"},
                        {"qkv", 3072, 4096, 4, "column"}, {"o", 4096, 2048, 4, "row"}});
  expect_linears(f, 4, {{"in_proj", 4640, 4096, 24, "column"}, {"out_proj", 4096, 2048, 24, "row"},
                        {"up", 5376, 4096, 24, "column"}, {"down", 4096, 5376, 24, "row"},
                        {"qkv", 1536, 4096, 4, "column"}, {"o", 4096, 1024, 4, "row"}});
  expect_linears(f, 8, {{"in_proj", 2320, 4096, 24, "column"}, {"out_proj", 4096, 1024, 24, "row"},
                        {"up", 2688, 4096, 24, "column"}, {"down", 4096, 2688, 24, "row"},
                        {"qkv", 768, 4096, 4, "column"}, {"o", 4096, 512, 4, "row"}});
}

// A note says what a config leaves to a default (Llama-3.1-8B has no head_dim); a config that
// states everything gets none.
TEST(HfConfigModels, ShippedConfigsNoteOnlyWhatTheyLack) {
  std::vector<std::string> notes;
  linears_from_hf_config(config_path("llama-3.1-8b.json"), 1, &notes);
  EXPECT_EQ(notes, std::vector<std::string>{"head_dim absent: hidden_size / num_attention_heads = 128"});
  notes.clear();
  linears_from_hf_config(config_path("llama-3.3-70b.json"), 8, &notes);
  EXPECT_TRUE(notes.empty());
  notes.clear();
  linears_from_hf_config(config_path("nemotron-h-8b-base-8k.json"), 8, &notes);
  EXPECT_TRUE(notes.empty());
}

}  // namespace
}  // namespace fp8gemm
