// Where the cache lives when no path is named: $FP8GEMM_CACHE_DIR, else $XDG_CACHE_HOME/fp8gemm,
// else ~/.cache/fp8gemm, one file per GPU and library version; $FP8GEMM_CACHE overrides (`off`:
// none). A named file that is missing is reported once; the conventional one missing is silent.
// Each test sets every variable it depends on (the fixture's ScopedEnv restores them).
#include <sys/stat.h>

#include "fp8gemm/version.h"
#include "test_tune_cache_fixture.h"

namespace fp8gemm::testing {
namespace {

const std::string kH200File = "nvidia-h200-sm90-132sm-driver13000-cuda13000-cublaslt130100-fp8gemm" FP8GEMM_VERSION_STRING ".json";

struct CacheLocationTest : CacheTest {
  void SetUp() override {
    CacheTest::SetUp();
    env.unset("FP8GEMM_CACHE_DIR").unset("XDG_CACHE_HOME").set("HOME", (dir / "home").string());
  }
};

TEST_F(CacheLocationTest, CacheDirComesFromTheEnvironmentInOrder) {
  EXPECT_EQ(default_cache_dir(), (dir / "home" / ".cache" / "fp8gemm").string());
  env.set("XDG_CACHE_HOME", "relative/xdg");  // the XDG spec ignores relative paths
  EXPECT_EQ(default_cache_dir(), (dir / "home" / ".cache" / "fp8gemm").string());
  env.set("XDG_CACHE_HOME", "/xdg/cache/");
  EXPECT_EQ(default_cache_dir(), "/xdg/cache/fp8gemm");
  env.set("FP8GEMM_CACHE_DIR", "/somewhere/tuned//");
  EXPECT_EQ(default_cache_dir(), "/somewhere/tuned");
  env.unset("FP8GEMM_CACHE_DIR").unset("XDG_CACHE_HOME").unset("HOME");
  EXPECT_EQ(default_cache_dir(), "");
  EXPECT_EQ(conventional_cache_path(h200()), "");
  EXPECT_EQ(default_cache_path(h200()), "");
}

TEST_F(CacheLocationTest, OneFilePerGpuAndLibraryVersion) {
  env.set("FP8GEMM_CACHE_DIR", "/c");
  EXPECT_EQ(conventional_cache_path(h200()), "/c/" + kH200File);
  DeviceInfo h100 = h200();
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.sm_count = 132;
  EXPECT_EQ(tuning::cache_file_name(h100), "nvidia-h100-80gb-hbm3-sm90-132sm-driver13000-cuda13000-cublaslt130100-fp8gemm" FP8GEMM_VERSION_STRING ".json");
  DeviceInfo h20 = h200();
  h20.name = "  NVIDIA/H20 (x) ";
  h20.sm_count = 78;
  EXPECT_EQ(tuning::cache_file_name(h20), "nvidia-h20-x-sm90-78sm-driver13000-cuda13000-cublaslt130100-fp8gemm" FP8GEMM_VERSION_STRING ".json");
  h20.name = "";
  EXPECT_EQ(tuning::cache_file_name(h20).rfind("gpu-sm90-78sm-", 0), 0u);
  DeviceInfo upgraded = h200();  // a cuBLASLt upgrade starts a file of its own
  upgraded.cublaslt_version = 130200;
  EXPECT_NE(tuning::cache_file_name(upgraded), tuning::cache_file_name(h200()));
  env.set("FP8GEMM_CACHE_DIR", "/");
  EXPECT_EQ(conventional_cache_path(h200()), "/" + kH200File);
}

TEST_F(CacheLocationTest, FP8GEMM_CACHE_OverridesAndOffMeansNone) {
  env.set("FP8GEMM_CACHE_DIR", "/c");
  EXPECT_EQ(default_cache_path(h200()), "/c/" + kH200File);
  env.set("FP8GEMM_CACHE", "/my/tuned.json");
  EXPECT_EQ(default_cache_path(h200()), "/my/tuned.json");
  env.set("FP8GEMM_CACHE", "off");
  EXPECT_EQ(default_cache_path(h200()), "");
  EXPECT_EQ(tuning::startup_cache_path(h200()), "");
  env.set("FP8GEMM_CACHE", "");  // set but empty: as if unset
  EXPECT_EQ(default_cache_path(h200()), "/c/" + kH200File);
  EXPECT_TRUE(warnings.empty());
}

TEST_F(CacheLocationTest, NamedFileMissingIsReportedOnceConventionalIsSilent) {
  EXPECT_EQ(tuning::startup_cache_path(h200()), (dir / "home" / ".cache" / "fp8gemm").string() + "/" + kH200File);
  EXPECT_TRUE(warnings.empty()) << "the conventional file missing is a first run";
  env.set("FP8GEMM_CACHE", path);
  EXPECT_EQ(tuning::startup_cache_path(h200()), path);
  EXPECT_EQ(tuning::startup_cache_path(h200()), path);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "tuning cache " + path + " (named by FP8GEMM_CACHE) does not exist: "
                        "`auto` uses its untuned defaults until it is written");
  tuning::report_if_missing(path, "given to load_cache");  // once per path, whoever names it
  EXPECT_EQ(warnings.size(), 1u);
  const std::string other = (dir / "typo.json").string();
  tuning::report_if_missing(other, "given to load_cache");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[1].find(other + " (given to load_cache) does not exist"), std::string::npos) << warnings[1];
  spit(path, "");
  tuning::reset_warnings();
  EXPECT_EQ(tuning::startup_cache_path(h200()), path);  // exists now: nothing to say
  EXPECT_EQ(warnings.size(), 2u);
}

// A save into the conventional directory creates it (0700, as the XDG spec asks); what it wrote
// loads back from the same path.
TEST_F(CacheLocationTest, SaveCreatesTheConventionalDirectory) {
  const std::string target = conventional_cache_path(h200());
  ASSERT_FALSE(fs::exists(fs::path(target).parent_path()));
  auto sel = selector();
  sel.cache().put(entry(16, "cutlass:c0"));
  sel.save(target);
  EXPECT_EQ(fs::status(fs::path(target).parent_path()).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(selector().load(default_cache_path(h200())), 1u);
}

}  // namespace
}  // namespace fp8gemm::testing
