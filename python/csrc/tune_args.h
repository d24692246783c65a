// The tuning ops' argument rules, checked without a GPU (tuning_ops.cpp, entries_ops.cpp), so
// that a bad call fails before the GPU is touched, and every rank of a group refuses it before
// any of them tunes. Each throws the c10 error Python shows (ValueError for a bad value).
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fp8gemm/fp8gemm.h"

namespace fp8gemm::torch_ops {

// The library's arguments of one problem, checked with every rule that needs no GPU; on_gpu
// (validate_problem with the device) adds the GPU's own rule (its compute capability).
BmmFp8Args problem_args(int64_t batch, int64_t m, int64_t n, int64_t k, at::ScalarType a, at::ScalarType b,
                        at::ScalarType out);

// `problem` as the layer `layer` spells (fp8gemm/linear.h with_layer; "" leaves it the GEMM), as
// a ValueError naming the rule.
Problem layer_of(const Problem& problem, const std::string& layer);

// A key is tuned at its M bucket's upper edge: that problem must be valid too.
void check_bucket_edge(BmmFp8Args args);

// Budgets are finite and >= 0; a key's at most an hour.
void check_budgets(double key_budget_ms, double run_budget_ms);

// The canonical names of `backends` (the tuner matches names exactly): each a backend, never auto.
std::vector<std::string> canonical_backends(const std::vector<std::string>& backends);

}  // namespace fp8gemm::torch_ops
