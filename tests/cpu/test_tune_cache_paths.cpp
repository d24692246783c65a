// What a cache save or load finds at its path. A save writes only over nothing, an empty file or
// a cache of this setup; anything else (another file, a truncated or foreign cache, a directory,
// a FIFO, a device, a huge file) is an error naming the path and what is there, and stays as it
// was. A load ignores it with one warning, promptly (a FIFO or a device is never opened).
// Symlinks are written through: the link stays, its target is replaced with its mode kept.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fp8gemm/version.h"
#include "test_tune_cache_fixture.h"

namespace fp8gemm::testing {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A save refuses, naming the path and `what`, and leaves the file's bytes as they were; a load
// ignores the file with one warning that says the same.
void expect_kept(CacheTest& t, const std::string& what) {
  const std::string before = t.slurp_if_regular();
  const std::string error = t.save_error(t.path);
  EXPECT_TRUE(contains(error, "refusing to write the tuning cache " + t.path)) << error;
  EXPECT_TRUE(contains(error, what)) << error;
  EXPECT_EQ(t.slurp_if_regular(), before);
  auto sel = t.selector();
  EXPECT_EQ(sel.load(t.path), 0u);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_TRUE(contains(t.warnings[0], t.path) && contains(t.warnings[0], what)) << t.warnings[0];
}

TEST_F(CacheTest, UnrelatedJsonIsKept) {
  spit(path, "{\"editor.fontSize\": 14}\n");
  expect_kept(*this, "it is not an fp8gemm tuning cache (JSON without \"format\"");
}

TEST_F(CacheTest, TextThatIsNotJsonIsKept) {
  spit(path, "garbage");
  expect_kept(*this, "it is not an fp8gemm tuning cache (not JSON");
}

TEST_F(CacheTest, TruncatedCacheIsKept) {
  write({entry(16, "cutlass:c0"), entry(32, "cutlass:c0"), entry(64, "cublaslt:h1")});
  const std::string text = slurp(path);
  spit(path, text.substr(0, text.size() / 2));
  expect_kept(*this, "it is a truncated or corrupt fp8gemm tuning cache");
}

// Its entries are of no use here, but they are someone's: the save refuses instead of replacing
// them with ours.
TEST_F(CacheTest, ForeignGpuCacheIsKeptOnSave) {
  DeviceInfo h100 = h200();
  h100.name = "NVIDIA H100 80GB HBM3";
  write({entry(16, "cutlass:c0"), entry(32, "cutlass:c1")}, h100);
  expect_kept(*this, "for another setup: GPU is NVIDIA H100 80GB HBM3 in the file but NVIDIA H200 here");
  EXPECT_EQ(tuning::read_cache_file(path, tuning::Validators::of(h100)).entries.size(), 2u);
}

TEST_F(CacheTest, OldLibraryVersionCacheIsKeptOnSave) {
  write({entry(16, "cutlass:c0")});
  std::string text = slurp(path);
  const std::string now = "\"library_version\": \"" FP8GEMM_VERSION_STRING "\"";
  text.replace(text.find(now), now.size(), "\"library_version\": \"0.0.1\"");
  spit(path, text);
  expect_kept(*this, "library version is 0.0.1 in the file");
}

TEST_F(CacheTest, DirectoryIsKept) {
  fs::create_directory(path);
  expect_kept(*this, "it is a directory, not a regular file");
  EXPECT_TRUE(fs::is_directory(path));
}

TEST_F(CacheTest, FifoIsNeverOpened) {
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  // In a child with a deadline: opening a FIFO for reading blocks until a writer comes.
  EXPECT_TRUE(finishes_within(5, [&] {
    if (selector().load(path) != 0 || warnings.size() != 1 || !contains(warnings[0], "FIFO")) ::_exit(1);
  })) << "loading a FIFO hung or did not warn";
  EXPECT_TRUE(finishes_within(5, [&] {
    if (!contains(save_error(path), "it is a FIFO (named pipe), not a regular file")) ::_exit(1);
  })) << "saving over a FIFO hung or did not refuse";
  expect_kept(*this, "it is a FIFO (named pipe), not a regular file");
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// A device node of our own (the null device's numbers) where we may make one, so that a broken
// save could only ever replace that; otherwise /dev/null is only read.
TEST_F(CacheTest, DeviceNodeIsKept) {
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    auto sel = selector();
    EXPECT_EQ(sel.load("/dev/null"), 0u);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_TRUE(contains(warnings[0], "it is a character device, not a regular file")) << warnings[0];
    GTEST_SKIP() << "mknod needs root: only the load of /dev/null was checked";
  }
  expect_kept(*this, "it is a character device, not a regular file");
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

// A symlink to an endless device is not read at all (it used to be read whole into memory).
TEST_F(CacheTest, SymlinkToDevZeroIsNotRead) {
  fs::create_symlink("/dev/zero", path);
  EXPECT_TRUE(finishes_within(5, [&] {
    if (selector().load(path) != 0 || !contains(warnings.at(0), "character device")) ::_exit(1);
  }));
}

TEST_F(CacheTest, HugeSparseFileIsRefusedUnread) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t(10) << 30), 0);  // 10 GiB of nothing
  ::close(fd);
  EXPECT_TRUE(finishes_within(5, [&] {
    if (selector().load(path) != 0) ::_exit(1);
  }));
  expect_kept(*this, "it is 10737418240 bytes, more than a tuning cache may be (64 MiB)");
  EXPECT_EQ(fs::file_size(path), uintmax_t(10) << 30);
}

// An empty file holds nothing to lose (a `touch` or mktemp made it): loaded as empty, silently,
// and written over.
TEST_F(CacheTest, EmptyFileIsWrittenOver) {
  spit(path, "");
  EXPECT_EQ(selector().load(path), 0u);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(save_error(path), "");
  EXPECT_EQ(read(path).entries.size(), 1u);
}

TEST_F(CacheTest, SymlinkIsWrittenThroughKeepingTheTargetsMode) {
  const std::string target = (dir / "real.json").string();
  tuning::write_cache_file(target, tuning::Validators::of(h200()), {entry(16, "cutlass:c0")});
  ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
  fs::create_symlink("real.json", path);  // relative: resolved against the link's directory
  EXPECT_EQ(save_error(path, {entry(32, "cublaslt:h1")}), "");
  EXPECT_TRUE(fs::is_symlink(path)) << "the link was replaced";
  EXPECT_EQ(fs::read_symlink(path), "real.json");
  EXPECT_EQ(read(target).entries.size(), 2u);
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(selector().load(path), 2u);
}

TEST_F(CacheTest, DanglingSymlinkCreatesItsTarget) {
  fs::create_symlink(dir / "made.json", path);
  EXPECT_EQ(save_error(path), "");
  EXPECT_TRUE(fs::is_symlink(path));
  EXPECT_EQ(read((dir / "made.json").string()).entries.size(), 1u);
}

TEST_F(CacheTest, SymlinkToSomethingElseIsRefusedNamingBoth) {
  const std::string target = (dir / "settings.json").string();
  spit(target, "{\"a\": 1}");
  fs::create_symlink(target, path);
  const std::string error = save_error(path);
  EXPECT_TRUE(contains(error, path + " (a symlink to " + target + ")")) << error;
  EXPECT_EQ(slurp(target), "{\"a\": 1}");
  EXPECT_TRUE(fs::is_symlink(path));
}

TEST_F(CacheTest, SymlinkLoopIsAnError) {
  fs::create_symlink("cache.json", path);
  const std::string error = save_error(path);
  EXPECT_TRUE(contains(error, "more than 40 symlinks")) << error;
  EXPECT_EQ(selector().load(path), 0u);  // a warning, not an exception
  EXPECT_EQ(warnings.size(), 1u);
}

TEST_F(CacheTest, SavedFileHasTheUsualModeUnderTheUmask) {
  const mode_t old = ::umask(027);
  EXPECT_EQ(save_error(path), "");
  ::umask(old);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

// A file the saver may not read is not written over blind. Root reads every file, so as root
// the save runs in a child that has become nobody.
TEST_F(CacheTest, UnreadableFileIsKept) {
  spit(path, "{}");
  ASSERT_EQ(::chmod(path.c_str(), 0200), 0);
  EXPECT_TRUE(finishes_within(5, [&] {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    if (!contains(save_error(path), "refusing to write the tuning cache " + path + ": it cannot be read: Permission denied"))
      ::_exit(1);
  }));
  ::chmod(path.c_str(), 0600);
  EXPECT_EQ(slurp(path), "{}");
}

// What a save would refuse, said before any tuning: the same words, no file touched.
TEST_F(CacheTest, SaveProblemIsKnownBeforeTheSave) {
  const tuning::Validators h200_here = tuning::Validators::of(h200());
  const tuning::Validators* here = &h200_here;
  EXPECT_EQ(tuning::cache_save_problem(path, here), "");
  spit(path, "{\"a\": 1}");
  EXPECT_EQ(tuning::cache_save_problem(path, here),
            "refusing to write the tuning cache " + path + ": it is not an fp8gemm tuning cache (JSON without "
            "\"format\": \"fp8gemm-tune-cache\"); it is left as it was (move it away, or save to another path)");
  EXPECT_EQ(slurp(path), "{\"a\": 1}");
  const std::string nowhere = (dir / "no_such_dir" / "c.json").string();
  EXPECT_EQ(tuning::cache_save_problem(nowhere, here),
            "cannot save " + nowhere + ": directory " + (dir / "no_such_dir").string() + " does not exist");
  EXPECT_EQ(tuning::cache_save_problem(default_cache_dir() + "/x.json", here), "") << "created by the save";
  EXPECT_TRUE(contains(tuning::cache_save_problem((dir / "cache.json" / "x.json").string(), here), "is not a directory"));
  EXPECT_EQ(tuning::cache_save_problem("", here), "the tuning cache path is empty: name a file");
  fs::create_directory(dir / "locked");
  fs::permissions(dir / "locked", fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                      fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  EXPECT_TRUE(finishes_within(5, [&] {  // as nobody: root may write anywhere
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    if (!contains(tuning::cache_save_problem((dir / "locked" / "c.json").string(), here), "is not writable"))
      ::_exit(1);
  }));
  EXPECT_TRUE(fs::is_empty(dir / "locked"));
  // A foreign cache: refused once the device is known, passed before (the device is not known).
  DeviceInfo h100 = h200();
  h100.name = "NVIDIA H100 80GB HBM3";
  fs::remove(path);
  write({entry(16, "cutlass:c0")}, h100);
  EXPECT_TRUE(contains(tuning::cache_save_problem(path, here), "for another setup"));
  EXPECT_EQ(tuning::cache_save_problem(path, nullptr), "");
  spit(path, "{}");
  EXPECT_TRUE(contains(tuning::cache_save_problem(path, nullptr), "not an fp8gemm tuning cache"));
}

}  // namespace
}  // namespace fp8gemm::testing
