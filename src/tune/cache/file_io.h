// The file system side of the tuning cache file (cache_file.cpp has the format): reads that
// cannot block or grow without bound, where a save writes, the writers' lock, temp files and the
// atomic replace. POSIX; errors are Error(kIo) naming the path.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <string>

namespace fp8gemm::tuning {

// "a directory", "a FIFO (named pipe)", "a character device", ... for a stat mode.
std::string file_kind(mode_t mode);

// A regular file's bytes, or why not. Anything but a regular file is never opened (a FIFO would
// block, a device could be endless or have side effects), and the open is O_NONBLOCK with the
// type checked again on the descriptor, in case the path changed in between.
struct FileText {
  bool missing = false;  // no such file
  std::string problem;   // "it is ..." / "it cannot be read: ..."; "" when `text` holds the file
  std::string text;
};
FileText read_regular_file(const std::string& path, size_t max_bytes);

// Where a save to `path` writes: `path` itself, or the end of its symlink chain (relative links
// resolved against their own directory), so a link stays a link. Throws on a loop.
std::string write_target(const std::string& path);

// "dir" of "dir/name" ("." for a bare name; "/" for "/name").
std::string directory_of(const std::string& path);

// An exclusive flock held by one writer of `file`: on its directory, so no lock file is left
// beside the cache; on "<file>.lock" (kept, and reused by later saves) where the file system
// cannot lock a directory (NFS). Waits at most timeout_s, then throws naming the file and that
// another process or thread holds the lock.
class CacheLock {
 public:
  CacheLock(const std::string& file, double timeout_s);
  ~CacheLock();
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  int fd_ = -1;
};

// Temp files of `file` ("<file>.tmp-<pid>-<6 characters>") whose writer is gone, and the older
// mkstemp names ("<file>.tmp.<6 characters>") over ten minutes old. Called under the lock,
// when no live writer is between creating its temp file and renaming it.
void remove_stale_temps(const std::string& file);

// Writes `text` to a temp file beside `file`, gives it the mode (and, where allowed, owner) of
// `like` (else 0644 under the umask), fsyncs it, renames it over `file` and fsyncs the directory.
void replace_file(const std::string& file, const std::string& text, const struct stat* like);

}  // namespace fp8gemm::tuning
