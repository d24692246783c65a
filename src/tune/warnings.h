// Warnings of the tuner (stale cache entries, ignored cache files), each printed once per
// process. The sink is replaceable so tests can count them.
#pragma once

#include <functional>
#include <string>

namespace fp8gemm::tuning {

using WarningSink = std::function<void(const std::string&)>;

// Prints "fp8gemm: warning: <message>" to stderr (or hands it to the sink) unless a warning
// with the same `once_key` was already given in this process. Returns whether it was given.
bool warn_once(const std::string& once_key, const std::string& message);

// Replaces the sink (nullptr: stderr) and returns the previous one.
WarningSink set_warning_sink(WarningSink sink);
// Forgets which warnings were given (tests).
void reset_warnings();

}  // namespace fp8gemm::tuning
