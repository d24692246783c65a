#pragma once

#include <memory>

#include "fp8gemm/backend.h"

namespace fp8gemm {

// cuBLASLt: every algorithm it offers for a problem is a tactic, named from its config
// attributes ("cublaslt:algo=66,tile=...,fast_accum=1") and rebuilt from that name alone.
std::unique_ptr<Backend> make_cublaslt_backend(const DeviceInfo& device, const BackendOptions& options);

}  // namespace fp8gemm
