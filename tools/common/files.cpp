#include "tools/common/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "fp8gemm/check.h"

namespace fp8gemm {

namespace {

std::string in_quotes(const std::string& path) { return "'" + path + "'"; }

std::string parent_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

std::string why_not_writable(const std::string& path, bool regular_only) {
  if (path.empty()) return "the path is empty";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return in_quotes(path) + " is a directory; give a file path";
    if (regular_only && !S_ISREG(st.st_mode)) return in_quotes(path) + " exists and is not a regular file";
    if (::access(path.c_str(), W_OK) != 0) return in_quotes(path) + " is not writable: " + std::strerror(errno);
    return "";
  }
  if (errno != ENOENT) return "cannot write " + in_quotes(path) + ": " + std::strerror(errno);
  const std::string dir = parent_of(path);
  if (::stat(dir.c_str(), &st) != 0)
    return "cannot write " + in_quotes(path) + ": its directory " + in_quotes(dir) +
           (errno == ENOENT ? " does not exist" : std::string(": ") + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return "cannot write " + in_quotes(path) + ": " + in_quotes(dir) + " is not a directory";
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return "cannot write " + in_quotes(path) + ": its directory " + in_quotes(dir) + " is not writable: " +
           std::strerror(errno);
  return "";
}

std::string why_not_readable(const std::string& path) {
  if (path.empty()) return "the path is empty";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "cannot read " + in_quotes(path) + ": " + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return in_quotes(path) + " is not a regular file";
  if (::access(path.c_str(), R_OK) != 0) return in_quotes(path) + " is not readable: " + std::strerror(errno);
  return "";
}

void require_distinct_files(const std::vector<std::pair<std::string, std::string>>& option_paths) {
  namespace fs = std::filesystem;
  auto same = [](const std::string& x, const std::string& y) {
    std::error_code ec;
    if (fs::equivalent(x, y, ec)) return true;  // both exist and are one file (links included)
    std::error_code ec_x, ec_y;
    const fs::path cx = fs::weakly_canonical(fs::absolute(x, ec_x), ec_x);
    const fs::path cy = fs::weakly_canonical(fs::absolute(y, ec_y), ec_y);
    return !ec_x && !ec_y && cx == cy;
  };
  for (size_t i = 0; i < option_paths.size(); ++i)
    for (size_t j = i + 1; j < option_paths.size(); ++j) {
      const auto& [option_i, path_i] = option_paths[i];
      const auto& [option_j, path_j] = option_paths[j];
      FP8GEMM_REQUIRE(path_i.empty() || path_j.empty() || !same(path_i, path_j), kInvalidArgument, option_j, ": ",
                      in_quotes(path_j), " is also the ", option_i, " file; give each its own path");
    }
}

void write_file(const std::string& option, const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  FP8GEMM_REQUIRE(f, kIo, option, ": cannot write ", in_quotes(path), ": ", std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;  // flushes: a full disk shows here
  FP8GEMM_REQUIRE(written && closed, kIo, option, ": writing ", in_quotes(path), " failed: ",
                  std::strerror(written ? errno : write_errno));
}

}  // namespace fp8gemm
