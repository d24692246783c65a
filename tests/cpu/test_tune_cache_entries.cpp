// Tuned entries as bytes between processes (tune.h export_entries / import_entries): the cache
// file's format, the validators refusing another setup with the reason, each entry whole or not at
// all, a local entry never replaced unless asked, and forget_entries.
#include "test_tune_cache_fixture.h"

namespace fp8gemm::testing {
namespace {

using tuning::CacheEntry;
using tuning::TuneCache;
using tuning::Validators;

struct CacheEntries : CacheTest {
  std::vector<Backend*> backends() { return {&cublaslt, &cutlass}; }
  std::string export_of(const TuneCache& cache, const std::vector<std::string>* keys = nullptr, DeviceInfo d = h200()) {
    return tuning::export_cache_text(cache, Validators::of(d), keys);
  }
  ImportReport import_into(TuneCache& cache, const std::string& text, bool replace = false) {
    return tuning::import_cache_text(cache, text, Validators::of(h200()), backends(), replace);
  }
  // The Error import_into throws ("" when it does not throw).
  std::string import_error(TuneCache& cache, const std::string& text) {
    try {
      import_into(cache, text);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
      return e.what();
    }
    return "";
  }
  static CacheEntry segmented(int64_t m, const std::string& low, const std::string& edge) {
    CacheEntry e = entry(m, edge);
    e.segments = {{m - 32, low}, {m, edge}};  // (192, 224] and (224, 256] for m = 256
    return e;
  }
};

TEST_F(CacheEntries, ExportIsTheCacheFileTextInKeyOrder) {
  const std::vector<CacheEntry> entries = {entry(64, "cublaslt:h1"), entry(8, "cutlass:c0"),
                                           segmented(256, "cutlass:c1", "cublaslt:enum0")};
  TuneCache cache, reversed;
  cache.replace(entries);
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) reversed.put(*it);
  write(entries);
  EXPECT_EQ(export_of(cache), slurp(path));  // the same bytes as the file
  EXPECT_EQ(export_of(reversed), export_of(cache));  // equal caches give equal bytes
}

TEST_F(CacheEntries, ExportOfKeysHoldsThoseTheCacheHas) {
  TuneCache cache;
  cache.replace({entry(64, "cublaslt:h1"), entry(8, "cutlass:c0"), entry(16, "cutlass:c1")});
  const std::vector<std::string> keys = {entry(16, "").key.to_string(), "no such key", entry(8, "").key.to_string()};
  TuneCache two;
  two.replace({entry(8, "cutlass:c0"), entry(16, "cutlass:c1")});
  EXPECT_EQ(export_of(cache, &keys), export_of(two));
  const std::vector<std::string> none;
  const tuning::CacheFile header = tuning::parse_cache_text(export_of(cache, &none), Validators::of(h200()));
  EXPECT_TRUE(header.ok) << header.problem;  // the validators alone, for the receiver to check
  EXPECT_TRUE(header.entries.empty());
}

TEST_F(CacheEntries, ImportGivesTheSameBytesBack) {
  TuneCache from, to;
  from.replace({entry(64, "cublaslt:h1"), segmented(256, "cutlass:c1", "cublaslt:enum0")});
  const uint64_t generation = to.generation();
  const ImportReport r = import_into(to, export_of(from));
  EXPECT_EQ(r.added.size(), 2u);
  EXPECT_TRUE(r.refused.empty() && r.replaced.empty() && r.kept_local.empty());
  EXPECT_EQ(export_of(to), export_of(from));
  EXPECT_NE(to.generation(), generation);  // dispatch sees the new entries
  EXPECT_EQ(import_into(to, export_of(from)).unchanged.size(), 2u);
}

TEST_F(CacheEntries, AnotherSetupIsRefusedWithTheReason) {
  TuneCache from, to;
  from.put(entry(64, "cublaslt:h1"));
  DeviceInfo h100 = h200();
  h100.name = "NVIDIA H100 80GB HBM3";
  EXPECT_NE(import_error(to, export_of(from, nullptr, h100)).find("another setup: GPU is NVIDIA H100 80GB HBM3"),
            std::string::npos);
  DeviceInfo driver = h200();
  driver.driver_version = 12080;
  EXPECT_NE(import_error(to, export_of(from, nullptr, driver)).find("driver version is 12080"), std::string::npos);
  EXPECT_EQ(to.size(), 0u);
  EXPECT_NE(import_error(to, "{\"entries\": []}").find("not an fp8gemm tuning cache"), std::string::npos);
  const std::string text = export_of(from);
  EXPECT_NE(import_error(to, text.substr(0, text.size() / 2)).find("truncated or corrupt"), std::string::npos);
  EXPECT_EQ(to.size(), 0u);
}

TEST_F(CacheEntries, LocalEntriesStayUnlessReplaceIsAsked) {
  TuneCache from, to;
  from.replace({entry(64, "cublaslt:enum0"), entry(8, "cutlass:c0")});
  to.replace({entry(64, "cublaslt:h1"), entry(8, "cutlass:c0")});
  ImportReport r = import_into(to, export_of(from));
  EXPECT_EQ(r.kept_local, std::vector<std::string>{entry(64, "").key.to_string()});
  EXPECT_EQ(r.unchanged, std::vector<std::string>{entry(8, "").key.to_string()});
  EXPECT_EQ(to.find(entry(64, "").key)->tactic, "cublaslt:h1");
  r = import_into(to, export_of(from), /*replace=*/true);
  EXPECT_EQ(r.replaced, std::vector<std::string>{entry(64, "").key.to_string()});
  EXPECT_EQ(export_of(to), export_of(from));
}

TEST_F(CacheEntries, AnEntryThatCannotRunHereIsRefusedWhole) {
  cublaslt.cannot_implement = {"enum0"};
  TuneCache from, to;
  // The edge's tactic runs, a segment's does not: the entry is refused, not half kept.
  from.replace({entry(64, "cublaslt:h1"), segmented(256, "cublaslt:enum0", "cutlass:c1"), entry(8, "cudnn:eng=1"),
                entry(16, "not a tactic")});
  const ImportReport r = import_into(to, export_of(from));
  EXPECT_EQ(r.added, std::vector<std::string>{entry(64, "").key.to_string()});
  ASSERT_EQ(r.refused.size(), 3u);
  const std::string all = r.refused[0] + "\n" + r.refused[1] + "\n" + r.refused[2];
  const std::string segment_refused = entry(256, "").key.to_string() + ": cublaslt:enum0 at M=224: fake: refused";
  EXPECT_NE(all.find(segment_refused), std::string::npos) << all;
  EXPECT_NE(all.find("backend cudnn is not part of this build"), std::string::npos) << all;
  EXPECT_EQ(to.size(), 1u);
}

TEST_F(CacheEntries, AMalformedEntryIsRefusedAlone) {
  TuneCache from, to;
  from.replace({entry(64, "cublaslt:h1"), entry(8, "cutlass:c0")});
  std::string text = export_of(from);
  const size_t at = text.find("\"m_bucket\": 8");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 13, "\"m_bucket\": 9");
  const ImportReport r = import_into(to, text);
  EXPECT_EQ(r.added, std::vector<std::string>{entry(64, "").key.to_string()});
  ASSERT_EQ(r.refused.size(), 1u);
  EXPECT_NE(r.refused[0].find("a malformed entry: entry 1 ("), std::string::npos) << r.refused[0];
  EXPECT_NE(r.refused[0].find("not a bucket edge"), std::string::npos) << r.refused[0];
}

TEST_F(CacheEntries, ForgetRemovesKeysByName) {
  TuneCache cache;
  cache.replace({entry(64, "cublaslt:h1"), entry(8, "cutlass:c0")});
  const uint64_t generation = cache.generation();
  EXPECT_EQ(cache.erase({entry(8, "").key.to_string(), "no such key"}), 1u);
  EXPECT_NE(cache.generation(), generation);
  EXPECT_FALSE(cache.find(entry(8, "").key));
  EXPECT_TRUE(cache.find(entry(64, "").key));
  EXPECT_EQ(cache.erase({"no such key"}), 0u);
}

}  // namespace
}  // namespace fp8gemm::testing
