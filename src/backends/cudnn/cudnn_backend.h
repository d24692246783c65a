#pragma once

#include <memory>

#include "fp8gemm/backend.h"

namespace fp8gemm {

// cuDNN (graph API through the cuDNN frontend): the FP8 matmul with both scales as pointwise
// multiplies, one tactic per execution plan ("cudnn:eng=<id>,<knob>=<value>,..."), libcudnn
// loaded at run time (cudnn_library.h). See docs/cudnn.md.
std::unique_ptr<Backend> make_cudnn_backend(const DeviceInfo& device, const BackendOptions& options);

}  // namespace fp8gemm
