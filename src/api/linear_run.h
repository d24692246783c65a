// The linear layer after validation, for front ends that validate the arguments themselves (the
// PyTorch op knows where its tensors live and skips the driver's pointer queries).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "fp8gemm/context.h"
#include "fp8gemm/linear.h"

namespace fp8gemm {

// linear_fp8's work on arguments that validate(args, ...) accepted with problem `p`, on `ctx`.
void run_linear(Context& ctx, const LinearArgs& args, const Problem& p, cudaStream_t stream,
                const std::string& backend);

}  // namespace fp8gemm
