// Builds every backend the library knows. A backend that is not compiled in, or whose
// construction fails, is still listed, as unavailable with its reason: it never takes the
// process down.
#pragma once

#include <memory>
#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/context.h"

namespace fp8gemm {

std::vector<std::unique_ptr<Backend>> make_backends(const DeviceInfo& device,
                                                    const ContextOptions& options);

// A placeholder for a backend that cannot run anything, with the reason.
std::unique_ptr<Backend> make_unavailable_backend(std::string name, std::string reason);

}  // namespace fp8gemm
