// The Context a public call runs on: the one given, else the current device's default one; either
// way it must belong to the current device.
#pragma once

#include "fp8gemm/context.h"

namespace fp8gemm {

// Throws Error(kInvalidArgument) when `ctx` belongs to another GPU than the current one.
Context& call_context(Context* ctx);

}  // namespace fp8gemm
