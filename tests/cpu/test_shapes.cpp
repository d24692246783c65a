// Model presets (the suite of docs/perf.md "The suite") and --shape / --m parsing.
#include <gtest/gtest.h>

#include <algorithm>

#include "fp8gemm/tune.h"

#include <set>

#include "fp8gemm/error.h"
#include "tools/common/shapes.h"

namespace fp8gemm {
namespace {

TEST(Shapes, SuiteHas23LayersWithUniqueNames) {
  const std::vector<NamedShape> all = model_shapes("all");
  EXPECT_EQ(all.size(), 23u);
  std::set<std::string> names;
  for (const NamedShape& s : all) names.insert(s.name);
  EXPECT_EQ(names.size(), all.size());
}

TEST(Shapes, LayersMatchDesignAndBaselineNames) {
  auto find = [](const std::string& name) {
    for (const NamedShape& s : model_shapes("all"))
      if (s.name == name) return s;
    return NamedShape{};
  };
  // (name, N, K) as tools/common/shapes.cpp lists them.
  const std::vector<NamedShape> expected = {
      {"llama8b.qkv", 6144, 4096},       {"llama8b.o", 4096, 4096},          {"llama8b.gate_up", 28672, 4096},
      {"llama8b.down", 4096, 14336},     {"llama70b.qkv", 10240, 8192},      {"llama70b.o", 8192, 8192},
      {"llama70b.gate_up", 57344, 8192}, {"llama70b.down", 8192, 28672},     {"llama70b_tp8.qkv", 1280, 8192},
      {"llama70b_tp8.o", 8192, 1024},    {"llama70b_tp8.gate_up", 7168, 8192}, {"llama70b_tp8.down", 8192, 3584},
      {"nemoH8b.up", 21504, 4096},       {"nemoH8b.down", 4096, 21504},      {"nemoH8b.in_proj", 18560, 4096},
      {"nemoH8b.out_proj", 4096, 8192},  {"nano9b.qkv", 7168, 4480},         {"nano9b.up", 15680, 4480},
      {"nano9b.down", 4480, 15680},      {"nano9b.in_proj", 22656, 4480},    {"nemotron3super.qkv", 4608, 4096},
      {"nemotron3super.shared_up", 5376, 4096}, {"nemotron3super.shared_down", 4096, 5376}};
  for (const NamedShape& e : expected) {
    const NamedShape got = find(e.name);
    EXPECT_EQ(got.n, e.n) << e.name;
    EXPECT_EQ(got.k, e.k) << e.name;
  }
  EXPECT_EQ(model_shapes("llama70b_tp8").size(), 4u);
  EXPECT_EQ(model_shapes("nemotron3super").size(), 3u);
  EXPECT_EQ(model_shapes("nemotronh8b")[0].name, "nemoH8b.up");
}

TEST(Shapes, UnknownPresetListsKnownOnes) {
  try {
    model_shapes("llama9b");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("llama70b_tp8"), std::string::npos) << e.what();
  }
}

TEST(Shapes, ParseShape) {
  NamedShape s = parse_shape("6144,4096");
  EXPECT_EQ(s.n, 6144);
  EXPECT_EQ(s.k, 4096);
  EXPECT_EQ(s.name, "6144x4096");
  EXPECT_EQ(parse_shape("128x256").k, 256);
  for (const char* bad : {"", "6144", "6144,", ",4096", "0,4096", "-1,4096", "6144,4096,1", "a,b", "1.5,2"})
    EXPECT_THROW(parse_shape(bad), Error) << bad;
}

TEST(Shapes, MSpecLists) {
  EXPECT_EQ(parse_m_spec("1,8,64"), (std::vector<int64_t>{1, 8, 64}));
  EXPECT_EQ(parse_m_spec("64, 8,1,8"), (std::vector<int64_t>{1, 8, 64}));  // sorted, deduplicated
  EXPECT_EQ(parse_m_spec("suite"), suite_m_values());
  EXPECT_EQ(suite_m_values().size(), 20u);
  EXPECT_EQ(suite_m_values().front(), 1);
  EXPECT_EQ(suite_m_values().back(), 16384);
  // Every bucket edge up to 16384: the suite's M values and the edges between them.
  const std::vector<int64_t> b = parse_m_spec("buckets");
  EXPECT_EQ(b, m_bucket_edges());
  for (int64_t m : suite_m_values()) EXPECT_TRUE(std::count(b.begin(), b.end(), m)) << m;
  EXPECT_TRUE(std::count(b.begin(), b.end(), 768));
}

TEST(Shapes, MSpecRanges) {
  const std::vector<int64_t> g = parse_m_spec("1:16384:x2");
  ASSERT_EQ(g.size(), 15u);
  EXPECT_EQ(g.front(), 1);
  EXPECT_EQ(g.back(), 16384);
  EXPECT_EQ(parse_m_spec("16:128:+16"), (std::vector<int64_t>{16, 32, 48, 64, 80, 96, 112, 128}));
  EXPECT_EQ(parse_m_spec("10:40:15"), (std::vector<int64_t>{10, 25, 40}));
  EXPECT_EQ(parse_m_spec("3:100:x3"), (std::vector<int64_t>{3, 9, 27, 81}));  // stops before hi
  EXPECT_EQ(parse_m_spec("5:5:x2"), (std::vector<int64_t>{5}));
  EXPECT_EQ(parse_m_spec("1:4:x2,3,suite").size(), 21u);  // suite + 3
}

TEST(Shapes, MSpecErrorsNameTheItem) {
  for (const char* bad : {"", "0", "-4", "abc", "1,,2", "8:1:x2", "1:16:x1", "1:16:+0", "1:16", "1:16:x",
                          "1:16:y2", "1:2:3:4", "0:16:x2", "1:100000:+1", "99999999999"}) {
    try {
      parse_m_spec(bad);
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << bad;
      EXPECT_NE(std::string(e.what()).find("--m"), std::string::npos) << e.what();
    }
  }
}

// M is capped at 2^31-1 (its products with N and K must fit in 32 bits) and no range's arithmetic
// overflows: each value is in [1, 2^31-1] however large the step, and steps above 2^31-1 are refused.
TEST(Shapes, MSpecRangesNeverOverflow) {
  constexpr int64_t kMax = 2147483647;
  EXPECT_EQ(parse_m_spec("1:2147483647:+2147483647"), (std::vector<int64_t>{1}));
  EXPECT_EQ(parse_m_spec("1:2147483647:x2147483647"), (std::vector<int64_t>{1, kMax}));
  EXPECT_EQ(parse_m_spec("2147483647:2147483647:+1"), (std::vector<int64_t>{kMax}));
  EXPECT_EQ(parse_m_spec("1073741824:2147483647:+1073741823"), (std::vector<int64_t>{1073741824, kMax}));
  EXPECT_EQ(parse_m_spec("1073741824:2147483647:x2"), (std::vector<int64_t>{1073741824}));
  EXPECT_EQ(parse_m_spec("46341:2147483647:x46341"), (std::vector<int64_t>{46341}));  // 46341^2 > 2^31-1
  const std::vector<int64_t> doubling = parse_m_spec("1:2147483647:x2");
  ASSERT_EQ(doubling.size(), 31u);
  EXPECT_EQ(doubling.back(), int64_t(1) << 30);
  EXPECT_EQ(parse_m_spec("2147483640:2147483647:+3").back(), 2147483646);
  for (const char* bad : {"1:2147483647:+9223372036854775807", "1:2147483647:x9223372036854775807",
                          "1:16:+2147483648", "1:16:x2147483648", "1:16:+99999999999999999999", "2147483648",
                          "9223372036854775808", "1:2147483648:+1", "2147483648:2147483649:x2", "-1:16:+1"}) {
    try {
      const std::vector<int64_t> got = parse_m_spec(bad);
      ADD_FAILURE() << "no error for '" << bad << "': " << got.size() << " values from " << got.front();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << bad;
      EXPECT_NE(std::string(e.what()).find("--m"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("2147483647"), std::string::npos) << e.what();
    }
  }
}

// Every command's --m shows kMSpecHelp: it names each form parse_m_spec takes, and its examples parse.
TEST(Shapes, TheMHelpNamesEveryFormAndItsExamplesParse) {
  const std::string help = kMSpecHelp;
  for (const char* form : {"1,8,64", "1:16384:x2", "16:128:+16", "suite", "buckets"}) {
    EXPECT_NE(help.find(form), std::string::npos) << form;
    EXPECT_FALSE(parse_m_spec(form).empty()) << form;
  }
}

}  // namespace
}  // namespace fp8gemm
