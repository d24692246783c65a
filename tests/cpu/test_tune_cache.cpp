// The tuning cache file: round trip, validators (foreign GPU, old version), corrupt and
// truncated files (ignored with ONE warning, never fatal), stale entries dropped with a warning,
// atomic replacement, and concurrent writers (threads and processes) leaving a valid file that
// holds every entry. What a save finds at its path: test_tune_cache_paths.cpp; malformed fields:
// test_tune_cache_fields.cpp; the lock and temp files: test_tune_cache_writers.cpp; the location:
// test_tune_cache_location.cpp.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "fp8gemm/error.h"
#include "fp8gemm/version.h"
#include "test_tune_cache_fixture.h"

namespace fp8gemm::testing {
namespace {

using tuning::CacheEntry;
using tuning::Validators;

TEST_F(CacheTest, RoundTripKeepsEntriesAndValidators) {
  write({entry(16, "cutlass:c0"), entry(100, "cublaslt:h1")});
  const auto f = tuning::read_cache_file(path, Validators::of(h200()));
  ASSERT_TRUE(f.ok) << f.problem;
  ASSERT_EQ(f.entries.size(), 2u);
  auto sel = selector();
  EXPECT_EQ(sel.load(path), 2u);
  EXPECT_EQ(sel.select(problem(100), "auto", nullptr)->name(), "cublaslt:h1");  // bucket 128
  EXPECT_EQ(sel.select(problem(13), "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_TRUE(warnings.empty());
  const std::string text = slurp(path);
  for (const char* field : {"\"gpu_name\": \"NVIDIA H200\"", "\"sm_count\": 132", "\"compute_capability\": 90",
                            "\"driver_version\": 13000", "\"cuda_runtime_version\"", "\"cublaslt_version\"",
                            "\"library_version\": \"" FP8GEMM_VERSION_STRING "\"", "\"format_version\": 1",
                            "\"tactic\": \"cutlass:c0\""})
    EXPECT_NE(text.find(field), std::string::npos) << field;
}

// A bucket whose parts have choices of their own (segments) keeps them through the file, and
// dispatch picks the segment of the call's M.
TEST_F(CacheTest, SegmentsRoundTripAndDispatchByM) {
  CacheEntry e = entry(384, "cublaslt:heur");
  e.segments = {{299, "cutlass:c0"}, {341, "cublaslt:h1"}, {384, "cublaslt:heur"}};
  write({e});
  const auto f = tuning::read_cache_file(path, Validators::of(h200()));
  ASSERT_TRUE(f.ok) << f.problem;
  ASSERT_EQ(f.entries.size(), 1u);
  EXPECT_EQ(f.entries[0].segments, e.segments);
  auto sel = selector();
  EXPECT_EQ(sel.load(path), 1u);
  EXPECT_EQ(sel.select(problem(257), "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(sel.select(problem(299), "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(sel.select(problem(300), "auto", nullptr)->name(), "cublaslt:h1");
  EXPECT_EQ(sel.select(problem(341), "auto", nullptr)->name(), "cublaslt:h1");
  EXPECT_EQ(sel.select(problem(342), "auto", nullptr)->name(), "cublaslt:heur");
  EXPECT_EQ(sel.select(problem(384), "auto", nullptr)->name(), "cublaslt:heur");
  EXPECT_EQ(sel.select(problem(385), "auto", nullptr), std::nullopt);  // the next bucket
  EXPECT_TRUE(warnings.empty());
}

// Segments that leave their bucket, go backwards, or do not end at the edge with the entry's
// tactic make their entry malformed, as a hand edit would: it alone is dropped, with one warning.
TEST_F(CacheTest, MalformedSegmentsDropTheirEntryAlone) {
  for (const std::vector<tuning::CacheSegment>& bad :
       {std::vector<tuning::CacheSegment>{{200, "cutlass:c0"}, {384, "cublaslt:heur"}},    // below the bucket
        std::vector<tuning::CacheSegment>{{341, "cutlass:c0"}, {299, "cublaslt:heur"}},    // backwards
        std::vector<tuning::CacheSegment>{{299, "cutlass:c0"}, {341, "cublaslt:heur"}},    // ends before the edge
        std::vector<tuning::CacheSegment>{{299, "cutlass:c0"}, {384, "cublaslt:h1"}}}) {  // not the entry's tactic
    CacheEntry e = entry(384, "cublaslt:heur");
    e.segments = bad;
    fs::remove(path);
    write({e, entry(16, "cutlass:c0")});
    const auto f = read(path);
    ASSERT_TRUE(f.ok) << f.problem;
    EXPECT_EQ(f.entries.size(), 1u);
    EXPECT_EQ(f.dropped, 1u);
    EXPECT_NE(f.dropped_why.find("segment"), std::string::npos) << f.dropped_why;
  }
}

// A segment's tactic that no longer passes can_implement drops the whole entry with a warning.
TEST_F(CacheTest, EntryWithAStaleSegmentIsDropped) {
  CacheEntry e = entry(384, "cublaslt:heur");
  e.segments = {{299, "cutlass:c0"}, {384, "cublaslt:heur"}};
  write({e, entry(16, "cutlass:c1")});
  cutlass.cannot_implement.insert("c0");
  auto sel = selector();
  EXPECT_EQ(sel.load(path), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cutlass:c0 at M=299"), std::string::npos) << warnings[0];
}

TEST_F(CacheTest, MissingFileIsSilentlyEmpty) {
  auto sel = selector();
  EXPECT_EQ(sel.load((dir / "nope.json").string()), 0u);
  EXPECT_TRUE(warnings.empty());
}

// Each unusable file is ignored (load returns 0, nothing thrown) with exactly one warning,
// however often it is loaded.
void expect_ignored_once(CacheTest& t, const std::string& what) {
  auto sel = t.selector();
  EXPECT_NO_THROW(EXPECT_EQ(sel.load(t.path), 0u)) << what;
  EXPECT_NO_THROW(EXPECT_EQ(sel.merge(t.path), 0u)) << what;
  auto sel2 = t.selector();
  EXPECT_EQ(sel2.load(t.path), 0u);
  ASSERT_EQ(t.warnings.size(), 1u) << what;
  EXPECT_NE(t.warnings[0].find(t.path), std::string::npos);
  EXPECT_EQ(sel.cache().size(), 0u);
}

TEST_F(CacheTest, ForeignGpuIsIgnoredWithOneWarning) {
  DeviceInfo h100 = h200();
  h100.name = "NVIDIA H100 80GB HBM3";
  write({entry(16, "cutlass:c0")}, h100);
  expect_ignored_once(*this, "foreign GPU");
  EXPECT_NE(warnings[0].find("H100"), std::string::npos) << warnings[0];
}

TEST_F(CacheTest, OtherSmCountOrDriverIsIgnored) {
  DeviceInfo d = h200();
  d.sm_count = 78;
  write({entry(16, "cutlass:c0")}, d);
  expect_ignored_once(*this, "SM count");
  fs::remove(path);
  warnings.clear();
  tuning::reset_warnings();
  d = h200();
  d.cublaslt_version = 120900;
  write({entry(16, "cutlass:c0")}, d);
  expect_ignored_once(*this, "cuBLASLt version");
}

TEST_F(CacheTest, OldLibraryVersionIsIgnoredWithOneWarning) {
  write({entry(16, "cutlass:c0")});
  std::string text = slurp(path);
  const std::string now = "\"library_version\": \"" FP8GEMM_VERSION_STRING "\"";
  text.replace(text.find(now), now.size(), "\"library_version\": \"0.0.1\"");
  spit(path, text);
  expect_ignored_once(*this, "old version");
  EXPECT_NE(warnings[0].find("0.0.1"), std::string::npos);
}

TEST_F(CacheTest, OldFormatVersionIsIgnored) {
  write({entry(16, "cutlass:c0")});
  std::string text = slurp(path);
  const std::string now = "\"format_version\": 1";
  text.replace(text.find(now), now.size(), "\"format_version\": 0");
  spit(path, text);
  expect_ignored_once(*this, "old format");
}

TEST_F(CacheTest, CorruptFileIsIgnoredWithOneWarning) {
  spit(path, "\x01\x02 this is not json {{{");
  expect_ignored_once(*this, "corrupt");
}

TEST_F(CacheTest, TruncatedFileIsIgnoredWithOneWarning) {
  write({entry(16, "cutlass:c0"), entry(32, "cutlass:c0"), entry(64, "cublaslt:h1")});
  const std::string text = slurp(path);
  spit(path, text.substr(0, text.size() / 2));
  expect_ignored_once(*this, "truncated");
}

TEST_F(CacheTest, NotACacheIsIgnored) {
  spit(path, "{\"hello\": 1}");
  expect_ignored_once(*this, "another JSON file");
}

TEST_F(CacheTest, StaleEntriesAreDroppedWithAWarningOthersKept) {
  cutlass.cannot_implement.insert("c1");
  write({entry(16, "cutlass:c0"), entry(32, "cutlass:c1"), entry(64, "nocolon"),
         entry(128, "cudnn:gone"), entry(256, "cublaslt:renamed_algo")});
  auto sel = selector();
  EXPECT_EQ(sel.load(path), 1u);
  EXPECT_EQ(sel.select(problem(16), "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(sel.select(problem(32), "auto", nullptr), std::nullopt);
  EXPECT_EQ(warnings.size(), 4u);
  sel.load(path);  // again: no new warnings
  EXPECT_EQ(warnings.size(), 4u);
}

TEST_F(CacheTest, SaveMergesWithWhatIsOnDisk) {
  write({entry(16, "cutlass:c0"), entry(32, "cutlass:c0")});
  auto sel = selector();
  sel.cache().put(entry(32, "cublaslt:h1"));  // newer choice for the same key wins
  sel.cache().put(entry(64, "cublaslt:h1"));
  sel.save(path);
  auto fresh = selector();
  EXPECT_EQ(fresh.load(path), 3u);
  EXPECT_EQ(fresh.select(problem(32), "auto", nullptr)->name(), "cublaslt:h1");
  EXPECT_EQ(fresh.select(problem(16), "auto", nullptr)->name(), "cutlass:c0");
}

// Nothing but the cache is left in its directory: no temp file, no lock file.
TEST_F(CacheTest, SaveLeavesNoTempOrLockFiles) {
  write({entry(16, "cutlass:c0")});
  write({entry(32, "cutlass:c0")});
  for (auto& f : fs::directory_iterator(dir)) EXPECT_EQ(f.path().filename(), "cache.json") << f.path();
}

TEST_F(CacheTest, UnwritableDirectoryThrowsIoError) {
  try {
    tuning::write_cache_file((dir / "no_such_dir" / "c.json").string(), Validators::of(h200()), {entry(16, "cutlass:c0")});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find("no_such_dir does not exist"), std::string::npos) << e.what();
  }
}

TEST_F(CacheTest, EmptyPathIsAnInvalidArgument) {
  try {
    tuning::write_cache_file("", Validators::of(h200()), {entry(16, "cutlass:c0")});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("the tuning cache path is empty"), std::string::npos) << e.what();
  }
}

TEST_F(CacheTest, ConcurrentThreadsLeaveAValidFileWithAllEntries) {
  constexpr int kThreads = 8, kEach = 6;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i)
        tuning::write_cache_file(path, Validators::of(h200()), {entry(16, "cutlass:c0", 1000 + t * 100 + i)});
    });
  for (auto& th : threads) th.join();
  const auto f = tuning::read_cache_file(path, Validators::of(h200()));
  ASSERT_TRUE(f.ok) << f.problem;
  EXPECT_EQ(f.entries.size(), size_t(kThreads * kEach));
}

TEST_F(CacheTest, ConcurrentProcessesLeaveAValidFileWithAllEntries) {
  constexpr int kProcs = 6, kEach = 5;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      try {
        for (int i = 0; i < kEach; ++i)
          tuning::write_cache_file(path, Validators::of(h200()), {entry(16, "cutlass:c0", 2000 + p * 100 + i)});
      } catch (...) {
        rc = 1;
      }
      ::_exit(rc);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const auto f = tuning::read_cache_file(path, Validators::of(h200()));
  ASSERT_TRUE(f.ok) << f.problem;
  EXPECT_EQ(f.entries.size(), size_t(kProcs * kEach));
}

}  // namespace
}  // namespace fp8gemm::testing
