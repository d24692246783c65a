// The files bench, tune and explain write or read: checked before any GPU work (a path that cannot
// be written fails in a second, not after the run), and written at the end only in full.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fp8gemm {

// Whether `path` can be written at the end of a run: "" when it can, else why not (the path is
// empty, a directory or not writable; its directory is missing or not writable; with
// regular_only, it exists and is not a regular file). Creates, opens and truncates nothing.
std::string why_not_writable(const std::string& path, bool regular_only);

// Whether `path` can be read: "" when it is a readable regular file, else why not.
std::string why_not_readable(const std::string& path);

// Refuses two options naming one file, the later write replacing the earlier one's output:
// (option, path) pairs; empty paths are ignored. Throws Error(kInvalidArgument) naming both.
void require_distinct_files(const std::vector<std::pair<std::string, std::string>>& option_paths);

// Writes `text` to `path`, replacing it. Throws Error(kIo) naming the option, the path and the
// reason unless all of it was written and the file closed.
void write_file(const std::string& option, const std::string& path, const std::string& text);

}  // namespace fp8gemm
