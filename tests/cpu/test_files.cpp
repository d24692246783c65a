// tools/common/files.h: the output and input paths of bench, tune and explain, checked before any
// GPU work without touching the files, and written at the end only in full.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fp8gemm/error.h"
#include "tools/common/files.h"

namespace fp8gemm {
namespace {

namespace fs = std::filesystem;

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "fp8gemm_files_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string make(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  static std::string read(const std::string& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  static bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }
  fs::path dir_;
};

TEST_F(Files, WritableAcceptsNewAndRegularFilesAndTouchesNothing) {
  EXPECT_EQ(why_not_writable(path("new.json"), true), "");
  EXPECT_FALSE(fs::exists(path("new.json")));  // not created
  const std::string old = make("old.json", "keep");
  EXPECT_EQ(why_not_writable(old, true), "");
  EXPECT_EQ(read(old), "keep");  // not truncated
  EXPECT_EQ(why_not_writable("/dev/null", false), "");  // a report may go to a device
}

TEST_F(Files, WritableRefusesWhatCannotBeWrittenAtTheEnd) {
  const std::string file = make("file", "x");
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  struct Case {
    std::string path;
    bool regular_only;
    std::string says;
  };
  const Case cases[] = {
      {"", false, "the path is empty"},
      {dir_.string(), false, "is a directory"},
      {path("missing/out.json"), false, "its directory '" + path("missing") + "' does not exist"},
      {file + "/out.json", false, "Not a directory"},
      {"/dev/null", true, "exists and is not a regular file"},
      {path("fifo"), true, "exists and is not a regular file"},  // never opened: no blocking
  };
  for (const Case& c : cases) {
    const std::string why = why_not_writable(c.path, c.regular_only);
    EXPECT_TRUE(contains(why, c.says)) << c.path << ": " << why;
    if (!c.path.empty()) EXPECT_TRUE(contains(why, c.path)) << why;
  }
}

TEST_F(Files, WritableRefusesWithoutPermission) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write anywhere";
  fs::create_directory(path("ro"));
  fs::permissions(path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_TRUE(contains(why_not_writable(path("ro/out.csv"), false), "is not writable"));
  const std::string locked = make("locked.json", "{}");
  fs::permissions(locked, fs::perms::owner_read);
  EXPECT_TRUE(contains(why_not_writable(locked, true), "is not writable"));
}

TEST_F(Files, ReadableNeedsARegularFile) {
  EXPECT_EQ(why_not_readable(make("c.json", "{}")), "");
  EXPECT_TRUE(contains(why_not_readable(path("missing.json")), "No such file"));
  EXPECT_TRUE(contains(why_not_readable(dir_.string()), "is not a regular file"));
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  EXPECT_TRUE(contains(why_not_readable(path("fifo")), "is not a regular file"));
  EXPECT_TRUE(contains(why_not_readable(""), "empty"));
}

TEST_F(Files, TwoOptionsNamingOneFileAreRefused) {
  const std::string a = make("a.json", "{}");
  fs::create_symlink(a, path("link.json"));
  fs::create_hard_link(a, path("hard.json"));
  const std::string relative = fs::relative(path("new.csv")).string();
  for (const auto& [x, y] : std::vector<std::pair<std::string, std::string>>{
           {a, path("link.json")}, {a, path("hard.json")}, {path("new.csv"), relative},
           {path("new.csv"), (dir_ / "." / "new.csv").string()}}) {
    try {
      require_distinct_files({{"--csv", x}, {"--json", y}});
      ADD_FAILURE() << x << " and " << y << " were accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_TRUE(contains(e.what(), "--json: '" + y + "' is also the --csv file")) << e.what();
    }
  }
  EXPECT_NO_THROW(require_distinct_files({{"--csv", a}, {"--json", path("b.json")}, {"--cache", ""}}));
  EXPECT_NO_THROW(require_distinct_files({{"--csv", ""}, {"--json", ""}}));
}

TEST_F(Files, WriteFileReplacesTheFileOrSaysWhyNot) {
  const std::string out = make("out.csv", "old contents that are longer");
  write_file("--csv", out, "new");
  EXPECT_EQ(read(out), "new");
  try {
    write_file("--json", path("missing/out.json"), "x");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_TRUE(contains(e.what(), "--json: cannot write '" + path("missing/out.json") + "'")) << e.what();
  }
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  try {
    write_file("--json", "/dev/full", std::string(1 << 16, 'x'));  // every write fails: disk full
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_TRUE(contains(e.what(), "--json: writing '/dev/full' failed: No space left")) << e.what();
  }
}

}  // namespace
}  // namespace fp8gemm
