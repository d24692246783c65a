#include "tune/cache/file_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>
#include <random>
#include <thread>
#include <vector>

#include "fp8gemm/check.h"
#include "tune/cache/warnings.h"

namespace fp8gemm::tuning {

namespace {

std::string error_text(int err) { return std::strerror(err); }

// Closes a descriptor on every path out of a scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string too_big(unsigned long long bytes, size_t max_bytes) {
  return "it is " + std::to_string(bytes) + " bytes, more than a tuning cache may be (" +
         std::to_string(max_bytes >> 20) + " MiB)";
}

// Waits for an exclusive flock on `fd` until `timeout_s` has passed. 0 when locked, EWOULDBLOCK on
// a timeout, else the errno of a lock the file system refuses.
int lock_within(int fd, double timeout_s) {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + duration_cast<steady_clock::duration>(duration<double>(timeout_s));
  auto pause = milliseconds(1);
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return errno;
    if (steady_clock::now() >= deadline) return EWOULDBLOCK;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, milliseconds(50));
  }
}

[[noreturn]] void lock_timeout(const std::string& file, const std::string& what, double timeout_s) {
  FP8GEMM_FAIL(kIo, "cannot save ", file, ": another process (or thread) has held the lock on ", what,
               " for more than ", timeout_s, " s; let it finish (a tune or a save in progress) or stop it");
}

// The pid of a temp file name "<pid>-<6 characters>" (what follows "<file>.tmp-"); 0 if not one.
pid_t temp_pid(const std::string& rest) {
  const size_t dash = rest.find('-');
  if (dash == 0 || dash == std::string::npos || dash > 9 || rest.size() != dash + 7) return 0;
  long long pid = 0;
  for (size_t i = 0; i < dash; ++i) {
    if (rest[i] < '0' || rest[i] > '9') return 0;
    pid = pid * 10 + (rest[i] - '0');
  }
  return pid_t(pid);
}

std::string random_suffix() {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string s(6, 'x');
  for (char& c : s) c = kChars[rng() % (sizeof kChars - 1)];
  return s;
}

void write_all(int fd, const std::string& data, const std::string& tmp) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    FP8GEMM_REQUIRE(n > 0, kIo, "cannot write ", tmp, ": ", error_text(errno));
    done += size_t(n);
  }
}

}  // namespace

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symlink";
  return "a special file";
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

FileText read_regular_file(const std::string& path, size_t max_bytes) {
  FileText f;
  auto failed = [&](int err) {
    f.missing = err == ENOENT;
    f.problem = f.missing ? "it does not exist" : "it cannot be read: " + error_text(err);
    return f;
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return failed(errno);
  auto unusable = [&](const struct stat& s) -> bool {
    if (!S_ISREG(s.st_mode))
      f.problem = "it is " + file_kind(s.st_mode) + ", not a regular file";
    else if (static_cast<unsigned long long>(s.st_size) > max_bytes)
      f.problem = too_big(static_cast<unsigned long long>(s.st_size), max_bytes);
    return !f.problem.empty();
  };
  if (unusable(st)) return f;
  Fd fd{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
  if (fd.fd < 0) return failed(errno);
  if (::fstat(fd.fd, &st) != 0) return failed(errno);
  if (unusable(st)) return f;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed(errno);
    if (n == 0) return f;
    f.text.append(chunk, size_t(n));
    if (f.text.size() > max_bytes) {  // it grew while being read
      f.text.clear();
      f.problem = too_big(static_cast<unsigned long long>(max_bytes) + 1, max_bytes);
      return f;
    }
  }
}

std::string write_target(const std::string& path) {
  std::string p = path;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    FP8GEMM_REQUIRE(hops < 40, kIo, "cannot save ", path, ": it is a chain of more than 40 symlinks (a loop?)");
    std::vector<char> link(PATH_MAX);
    const ssize_t n = ::readlink(p.c_str(), link.data(), link.size());
    FP8GEMM_REQUIRE(n > 0 && size_t(n) < link.size(), kIo, "cannot save ", path, ": cannot read the symlink ", p,
                    n < 0 ? ": " + error_text(errno) : std::string());
    const std::string to(link.data(), size_t(n));
    p = to[0] == '/' ? to : directory_of(p) + "/" + to;
  }
}

CacheLock::CacheLock(const std::string& file, double timeout_s) {
  const std::string dir = directory_of(file);
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) {
    FP8GEMM_REQUIRE(errno != ENOENT, kIo, "cannot save ", file, ": directory ", dir, " does not exist");
    FP8GEMM_REQUIRE(errno != ENOTDIR, kIo, "cannot save ", file, ": ", dir, " is not a directory");
  } else {
    const int err = lock_within(fd_, timeout_s);
    if (err == 0) return;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK) lock_timeout(file, "directory " + dir, timeout_s);
  }
  // This file system cannot lock a directory (or it cannot be opened): a lock file, kept.
  const std::string lock = file + ".lock";
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  FP8GEMM_REQUIRE(fd_ >= 0, kIo, "cannot save ", file, ": cannot open its lock file ", lock, ": ", error_text(errno));
  const int err = lock_within(fd_, timeout_s);
  if (err == 0) return;
  ::close(fd_);
  fd_ = -1;
  if (err == EWOULDBLOCK) lock_timeout(file, lock, timeout_s);
  FP8GEMM_FAIL(kIo, "cannot save ", file, ": cannot lock ", lock, ": ", error_text(err));
}

CacheLock::~CacheLock() {
  if (fd_ < 0) return;
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

void remove_stale_temps(const std::string& file) {
  const std::string dir = directory_of(file), ours = base_of(file) + ".tmp-", older = base_of(file) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  const time_t now = std::time(nullptr);
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    bool stale = false;
    if (name.compare(0, ours.size(), ours) == 0) {
      const pid_t pid = temp_pid(name.substr(ours.size()));
      stale = pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
    } else if (name.compare(0, older.size(), older) == 0 && name.size() == older.size() + 6) {
      struct stat st {};
      stale = ::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
              now - st.st_mtime > 600;
    }
    if (stale) ::unlinkat(::dirfd(d), name.c_str(), 0);
  }
  ::closedir(d);
}

void replace_file(const std::string& file, const std::string& text, const struct stat* like) {
  std::string tmp;
  Fd fd;
  for (int attempt = 0; fd.fd < 0; ++attempt) {
    tmp = file + ".tmp-" + std::to_string(::getpid()) + "-" + random_suffix();
    fd.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    FP8GEMM_REQUIRE(fd.fd >= 0 || (errno == EEXIST && attempt < 100), kIo, "cannot create a temp file next to ", file,
                    ": ", error_text(errno));
  }
  try {
    write_all(fd.fd, text, tmp);
    if (like) {
      // The owner first (a chown clears set-id bits that the chmod restores). Only root may give
      // a file away; otherwise it becomes ours, as any rewrite would make it.
      [[maybe_unused]] const int owned = ::fchown(fd.fd, like->st_uid, like->st_gid);
      FP8GEMM_REQUIRE(::fchmod(fd.fd, like->st_mode & 07777) == 0, kIo, "cannot set the mode of ", tmp, ": ",
                      error_text(errno));
    }
    FP8GEMM_REQUIRE(::fsync(fd.fd) == 0, kIo, "cannot flush ", tmp, ": ", error_text(errno));
    const int closing = fd.fd;
    fd.fd = -1;
    FP8GEMM_REQUIRE(::close(closing) == 0, kIo, "cannot close ", tmp, ": ", error_text(errno));
    FP8GEMM_REQUIRE(::rename(tmp.c_str(), file.c_str()) == 0, kIo, "cannot replace ", file, ": ", error_text(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  // The rename is durable only once the directory is: without this a crash can bring back the
  // old file (or none).
  Fd dir{::open(directory_of(file).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd >= 0 && ::fsync(dir.fd) != 0 && errno != EINVAL)
    warn_once("dirsync:" + file, "saved " + file + " but could not flush its directory: " + error_text(errno));
}

}  // namespace fp8gemm::tuning
