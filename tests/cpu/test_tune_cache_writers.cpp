// Writers of one cache file: a lock held elsewhere is waited for a bounded time and then named in
// the error; temp files left by a killed writer are removed by the next save, a live writer's
// are not; the lock leaves no file beside the cache.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "fp8gemm/error.h"
#include "test_tune_cache_fixture.h"
#include "tune/cache/file_io.h"

namespace fp8gemm::testing {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A child process holding the writers' lock of the test's directory until it is killed.
struct LockHolder {
  pid_t pid = -1;
  explicit LockHolder(const fs::path& dir) {
    int ready[2];
    EXPECT_EQ(::pipe(ready), 0);
    pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
      const bool locked = fd >= 0 && ::flock(fd, LOCK_EX) == 0;
      [[maybe_unused]] const ssize_t n = ::write(ready[1], locked ? "y" : "n", 1);
      for (;;) ::pause();
    }
    char c = 0;
    EXPECT_EQ(::read(ready[0], &c, 1), 1);
    EXPECT_EQ(c, 'y');
    ::close(ready[0]);
    ::close(ready[1]);
  }
  ~LockHolder() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

TEST_F(CacheTest, LockHeldByAnotherProcessTimesOutNamingThePath) {
  write({entry(16, "cutlass:c0")});
  const std::string before = slurp(path);
  {
    LockHolder holder(dir);
    const auto start = std::chrono::steady_clock::now();
    try {
      tuning::write_cache_file(path, tuning::Validators::of(h200()), {entry(32, "cutlass:c0")}, 0.3);
      ADD_FAILURE() << "saved while another process held the lock";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kIo);
      EXPECT_TRUE(contains(e.what(), "cannot save " + path + ": another process (or thread) has held the lock on "
                                         "directory " + dir.string() + " for more than 0.3 s"))
          << e.what();
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_GE(waited, 0.3);
    EXPECT_LT(waited, 3.0);
    EXPECT_EQ(slurp(path), before);
  }
  write({entry(32, "cutlass:c0")});  // the holder is gone: the lock is free again
  EXPECT_EQ(read(path).entries.size(), 2u);
}

// A save waits for a lock that is let go within the timeout.
TEST_F(CacheTest, LockLetGoSoonIsWaitedFor) {
  auto holder = std::make_unique<LockHolder>(dir);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    holder.reset();
  });
  EXPECT_NO_THROW(tuning::write_cache_file(path, tuning::Validators::of(h200()), {entry(16, "cutlass:c0")}, 5));
  release.join();
  EXPECT_EQ(read(path).entries.size(), 1u);
}

// The pid of a process that has exited (and been reaped).
pid_t gone_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST_F(CacheTest, KilledWritersTempFilesAreRemovedByTheNextSave) {
  write({entry(16, "cutlass:c0")});
  const std::string dead = path + ".tmp-" + std::to_string(gone_pid()) + "-aB3dE9";
  const std::string live = path + ".tmp-" + std::to_string(::getppid()) + "-xY7zQ1";
  const std::string legacy_old = path + ".tmp.Qw3rTy", legacy_new = path + ".tmp.Zx9cVb";
  const std::string unrelated = path + ".tmp-notapid-abcdef";
  for (const std::string& f : {dead, live, legacy_old, legacy_new, unrelated}) spit(f, "{\"half\": ");
  const struct timespec an_hour_ago[2] = {{std::time(nullptr) - 3600, 0}, {std::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, legacy_old.c_str(), an_hour_ago, 0), 0);
  write({entry(32, "cutlass:c0")});
  EXPECT_FALSE(fs::exists(dead)) << "a dead writer's temp file stayed";
  EXPECT_FALSE(fs::exists(legacy_old)) << "an old-style temp file an hour old stayed";
  EXPECT_TRUE(fs::exists(live)) << "a live writer's temp file was removed";
  EXPECT_TRUE(fs::exists(legacy_new));
  EXPECT_TRUE(fs::exists(unrelated));
  EXPECT_EQ(read(path).entries.size(), 2u);
}

// A writer killed in the middle of its save leaves the old file whole, and its temp file goes
// with the next save.
TEST_F(CacheTest, WriterKilledMidSaveLeavesTheOldFileAndNoTempAfterTheNextSave) {
  write({entry(16, "cutlass:c0")});
  std::vector<tuning::CacheEntry> many;
  for (int i = 0; i < 20000; ++i) many.push_back(entry(16, "cutlass:c0", 16 * (i + 1)));
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (;;) tuning::write_cache_file(path, tuning::Validators::of(h200()), many);
  }
  // Kill it once its temp file exists.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool seen = false;
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    for (auto& f : fs::directory_iterator(dir))
      if (contains(f.path().filename().string(), ".tmp-" + std::to_string(pid) + "-")) seen = true;
    if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  ASSERT_TRUE(seen) << "the writer's temp file never showed";
  const tuning::CacheFile f = read(path);
  ASSERT_TRUE(f.ok) << f.problem;  // the old file, or the writer's finished one: never a partial one
  write({entry(32, "cutlass:c0")});
  for (auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename(), "cache.json") << e.path();
}

// The lock is taken on the cache's directory ("." for a bare file name).
TEST(CacheIo, DirectoryOfAPath) {
  EXPECT_EQ(tuning::directory_of("/a/b/c.json"), "/a/b");
  EXPECT_EQ(tuning::directory_of("c.json"), ".");
  EXPECT_EQ(tuning::directory_of("/c.json"), "/");
}

}  // namespace
}  // namespace fp8gemm::testing
