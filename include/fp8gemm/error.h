// One error type for the whole library. Every failure names where it happened and why.
#pragma once

#include <stdexcept>
#include <string>

namespace fp8gemm {

enum class ErrorKind {
  kInvalidArgument,  // the caller broke a rule (dims, dtypes, pointers, alignment, ...)
  kUnsupported,      // a valid problem that the chosen backend/tactic/GPU cannot run
  kNotAvailable,     // a backend could not load or enumerate (reason attached)
  kCuda,             // a CUDA / cuBLASLt / cuDNN call failed
  kIo,               // cache or report files
  kInternal,         // a bug in fp8gemm
};

const char* to_string(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace fp8gemm
