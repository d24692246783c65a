// Warnings of the tuner (stale cache entries, ignored cache files), each printed once per
// process. The sink is replaceable so tests can count them.
#pragma once

#include <string>

#include "fp8gemm/tune.h"

namespace fp8gemm::tuning {

// Prints "fp8gemm: warning: <message>" to stderr (or hands it to the sink) unless a warning
// with the same `once_key` was already given in this process. Returns whether it was given.
bool warn_once(const std::string& once_key, const std::string& message);

// The sink is public (set_warning_sink, fp8gemm/tune.h).
using ::fp8gemm::set_warning_sink;
using ::fp8gemm::WarningSink;
// Forgets which warnings were given (tests).
void reset_warnings();

}  // namespace fp8gemm::tuning
