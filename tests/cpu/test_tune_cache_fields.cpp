// Malformed fields of a cache file: an entry that breaks a rule is dropped alone, with one
// warning per file saying how many and why, and the next save rewrites the file without it;
// every number is range-checked and shown as written; huge M values never hang (m_bucket and
// the bucket arithmetic are bounded by kLargestProblemM).
#include <cstdint>
#include <set>
#include <nlohmann/json.hpp>

#include "fp8gemm/error.h"
#include "test_tune_cache_fixture.h"
#include "tune/keys/tune_key.h"

namespace fp8gemm::testing {
namespace {

using nlohmann::json;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct CacheFieldTest : CacheTest {
  // A file of three good entries, then `edit` applied to its JSON.
  void write_edited(const std::function<void(json&)>& edit) {
    fs::remove(path);  // a save would refuse to write over the previous case's broken file
    write({entry(16, "cutlass:c0"), entry(32, "cutlass:c1"), entry(64, "cublaslt:h1")});
    json j = json::parse(slurp(path));
    edit(j);
    spit(path, j.dump(1));
  }
  // The problem of a file whose validators were edited.
  std::string validators_problem(const char* field, const json& value) {
    write_edited([&](json& j) { j["validators"][field] = value; });
    const tuning::CacheFile f = read(path);
    EXPECT_FALSE(f.ok);
    return f.problem;
  }
};

TEST_F(CacheFieldTest, OneMalformedEntryAmongThreeDropsItAloneWithOneWarning) {
  write_edited([](json& j) { j["entries"][1]["m_bucket"] = 99999999999999999LL; });
  auto sel = selector();
  EXPECT_EQ(sel.load(path), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(contains(warnings[0], "dropping 1 of 3 entries of tuning cache " + path)) << warnings[0];
  EXPECT_TRUE(contains(warnings[0], "m_bucket is 99999999999999999, not an integer in [1, 2147483647]")) << warnings[0];
  // The save keeps the two, adds the new one, drops the malformed one, and warns no more.
  sel.cache().put(entry(128, "cublaslt:h1"));
  sel.save(path);
  EXPECT_EQ(warnings.size(), 1u);
  const tuning::CacheFile f = read(path);
  ASSERT_TRUE(f.ok) << f.problem;
  EXPECT_EQ(f.entries.size(), 3u);
  EXPECT_EQ(f.dropped, 0u);
}

TEST_F(CacheFieldTest, EachBrokenFieldDropsOnlyItsEntry) {
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& e) { e["batch"] = -1; }, "batch is -1, not an integer in [0, 2147483647]"},
      {[](json& e) { e["n"] = 4096.5; }, "n is 4096.5, not an integer"},
      {[](json& e) { e["k"] = "4096"; }, "k is \"4096\", not an integer"},
      {[](json& e) { e["n"] = 18446744073709551615ULL; }, "n is 18446744073709551615, not an integer"},
      {[](json& e) { e["alignment"] = 3; }, "alignment is 3, not 1, 2, 4, 8 or 16"},
      {[](json& e) { e["m_bucket"] = 17; }, "m_bucket 17 is not a bucket edge"},
      {[](json& e) { e["tactic"] = json::array({1}); }, "tactic is an array, not a string"},
      {[](json& e) { e["us"] = -3; }, "us is -3, not a number >= 0"},
      {[](json& e) { e.erase("op"); }, "op is missing"},
      {[](json& e) { e["a"] = "int8"; }, "int8"},
      {[](json& e) { e["key"] = "bmm_fp8 something else"; }, "its key does not match its fields"},
      {[](json& e) { e["segments"] = 7; }, "segments is 7, not an array"},
      {[](json& e) { e = json::array(); }, "it is an array, not an object"},
      {[](json& e) { e["op"] = "conv"; }, "op is \"conv\", not bmm_fp8 or linear_fp8"},
      {[](json& e) { e["bias"] = 1; }, "bias is 1, not true or false"},
      {[](json& e) { e["op"] = "linear_fp8"; }, "x is missing"},
      {[](json& e) {
         e["op"] = "linear_fp8";
         e["x"] = "e4m3";
       },
       "x is e4m3, not bf16 or fp16"},
      {[](json& e) {
         e["op"] = "linear_fp8";
         e["x"] = "bf16";
         e["scale"] = "per_token";
       },
       "scale is \"per_token\", not static or dynamic"},
  };
  for (const auto& [edit, why] : cases) {
    write_edited([&](json& j) { edit(j["entries"][0]); });
    const tuning::CacheFile f = read(path);
    ASSERT_TRUE(f.ok) << why << ": " << f.problem;
    EXPECT_EQ(f.entries.size(), 2u) << why;
    EXPECT_EQ(f.dropped, 1u) << why;
    EXPECT_TRUE(contains(f.dropped_why, "entry 1")) << f.dropped_why;
    EXPECT_TRUE(contains(f.dropped_why, why)) << f.dropped_why;
  }
}

// The linear layer's keys and the GEMM-with-bias keys are written and read back as they were, beside
// the plain GEMM's keys of the same shape.
TEST_F(CacheFieldTest, LayerAndBiasKeysRoundTrip) {
  tuning::CacheEntry layer = entry(16, "small_m:x"), biased = entry(16, "cublaslt:h1"), plain = entry(16, "cutlass:c0");
  Problem p = problem(16, 4096);
  p.bias = true;
  biased.key = tuning::key_of(p);
  p.prologue = Problem::Prologue::kQuantizeStatic;
  p.x_type = DType::kFP16;
  p.out_type = DType::kFP16;
  layer.key = tuning::key_of(p);
  EXPECT_EQ(layer.key.to_string(), "linear_fp8 fp16 static e4m3xe4m3->fp16 b=1 m<=16 n=4096 k=4096 align=16 bias");
  write({layer, biased, plain});
  const json j = json::parse(slurp(path));
  int layers = 0;
  for (const json& e : j["entries"]) {
    if (e["op"] != "linear_fp8") continue;
    ++layers;
    EXPECT_EQ(e["x"], "fp16");
    EXPECT_EQ(e["scale"], "static");
    EXPECT_EQ(e["bias"], true);
  }
  EXPECT_EQ(layers, 1);
  const tuning::CacheFile f = read(path);
  ASSERT_TRUE(f.ok) << f.problem;
  ASSERT_EQ(f.entries.size(), 3u) << f.dropped_why;
  std::set<std::string> keys;
  for (const auto& e : f.entries) keys.insert(e.key.to_string());
  EXPECT_EQ(keys, (std::set<std::string>{layer.key.to_string(), biased.key.to_string(), plain.key.to_string()}));
  for (const auto& e : f.entries)
    if (e.key.op == "linear_fp8") EXPECT_EQ(e.key.representative(), tuning::key_of(p).representative());
}

// A huge m_bucket or segment m_max used to loop forever in m_bucket() (while the default
// context's mutex was held): now a range error, at once.
TEST_F(CacheFieldTest, HugeMValuesAreRejectedWithoutHanging) {
  write_edited([](json& j) {
    j["entries"][0]["m_bucket"] = int64_t(1) << 62;
    j["entries"][1]["segments"] = json::array({{{"m_max", (int64_t(1) << 62) + 1}, {"tactic", "cutlass:c1"}},
                                               {{"m_max", 32}, {"tactic", "cutlass:c1"}}});
    j["entries"][2]["m_bucket"] = 2147483646;  // in range, not an edge
  });
  EXPECT_TRUE(finishes_within(5, [&] {
    const tuning::CacheFile f = read(path);
    if (!f.ok || f.dropped != 3) ::_exit(1);
  }));
  const tuning::CacheFile f = read(path);
  EXPECT_TRUE(contains(f.dropped_why, "m_bucket is 4611686018427387904, not an integer in [1, 2147483647]"))
      << f.dropped_why;
}

TEST_F(CacheFieldTest, FormatVersionIsShownAsWritten) {
  for (const json& version : {json(99999999999LL), json(2), json(0), json(1.5), json("1"), json(-1)}) {
    write_edited([&](json& j) { j["validators"]["format_version"] = version; });
    const tuning::CacheFile f = read(path);
    EXPECT_FALSE(f.ok);
    EXPECT_EQ(f.problem, "it is an fp8gemm tuning cache of format version " + version.dump() + " (this library reads 1)");
  }
}

TEST_F(CacheFieldTest, ValidatorsAreRangeChecked) {
  EXPECT_EQ(validators_problem("sm_count", 99999999999LL),
            "it is a corrupt fp8gemm tuning cache: sm_count is 99999999999, not an integer in [0, 2147483647]");
  EXPECT_TRUE(contains(validators_problem("driver_version", -5), "driver_version is -5")) << "driver";
  EXPECT_TRUE(contains(validators_problem("gpu_name", 7), "gpu_name is 7, not a string"));
  EXPECT_TRUE(contains(validators_problem("cublaslt_version", "x"), "cublaslt_version is \"x\""));
  write_edited([](json& j) { j["entries"] = json::object(); });
  EXPECT_TRUE(contains(read(path).problem, "entries is an object, not an array"));
  write_edited([](json& j) { j.erase("validators"); });
  EXPECT_TRUE(contains(read(path).problem, "validators is missing"));
}

// A corrupt file is kept by a save like any other unusable one.
TEST_F(CacheFieldTest, CorruptValidatorsAreKeptOnSave) {
  validators_problem("sm_count", -1);
  const std::string before = slurp(path);
  EXPECT_TRUE(contains(save_error(path), "refusing to write")) << "saved over a corrupt cache";
  EXPECT_EQ(slurp(path), before);
}

// Deep nesting neither overflows the stack nor is dumped into a message.
TEST_F(CacheFieldTest, DeeplyNestedValuesAreHarmless) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  spit(path, "{\"format\": \"fp8gemm-tune-cache\", \"validators\": {\"format_version\": " + deep + "}}");
  EXPECT_EQ(read(path).problem, "it is an fp8gemm tuning cache of format version an array (this library reads 1)");
  write_edited([](json& j) { j["entries"][0]["n"] = json::array(); });
  std::string text = slurp(path);
  const std::string empty = "\"n\": []";
  text.replace(text.find(empty), empty.size(), "\"n\": " + deep);
  spit(path, text);
  const tuning::CacheFile f = read(path);
  EXPECT_EQ(f.entries.size(), 2u);
  EXPECT_TRUE(contains(f.dropped_why, "n is an array")) << f.dropped_why;
}

TEST(BucketBounds, MBucketIsBoundedAtTheLargestM) {
  EXPECT_EQ(m_bucket(0), 1);
  EXPECT_EQ(m_bucket(-5), 1);
  EXPECT_EQ(m_bucket(int64_t(1) << 30), int64_t(1) << 30);
  EXPECT_EQ(m_bucket((int64_t(1) << 30) + 1), kLargestProblemM);
  EXPECT_EQ(m_bucket(kLargestProblemM), kLargestProblemM);
  for (const int64_t m : {kLargestProblemM + 1, int64_t(1) << 62, (int64_t(1) << 62) + 1, INT64_MAX}) {
    try {
      m_bucket(m);
      ADD_FAILURE() << m << " was bucketed";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_TRUE(contains(e.what(), "m = " + std::to_string(m) + " exceeds 2147483647")) << e.what();
    }
  }
}

TEST(BucketBounds, BucketArithmeticAtTheTopStaysInside) {
  EXPECT_EQ(tuning::bucket_lower(kLargestProblemM), int64_t(1) << 30);
  EXPECT_EQ(tuning::bucket_lower(int64_t(1) << 30), int64_t(1) << 29);
  EXPECT_EQ(tuning::bucket_lower(32768), 16384);
  EXPECT_EQ(tuning::bucket_lower(1), 0);
  const std::vector<int64_t> samples = tuning::bucket_sample_ms(kLargestProblemM, 2);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_GT(samples[0], int64_t(1) << 30);
  EXPECT_LT(samples[0], samples[1]);
  EXPECT_LT(samples[1], kLargestProblemM);
  for (int64_t m = 16384; m < kLargestProblemM; m = m * 2 + 1) {
    const int64_t b = m_bucket(m);
    ASSERT_GE(b, m);
    ASSERT_EQ(m_bucket(b), b) << m;
    ASSERT_LT(tuning::bucket_lower(m), m) << m;
  }
}

}  // namespace
}  // namespace fp8gemm::testing
