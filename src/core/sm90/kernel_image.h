// Whether this binary carries sm_90a machine code the current device can run (the hand-written
// Hopper backends are built for specific architectures only).
#pragma once

namespace fp8gemm::sm90 {

// "" if an empty kernel built like theirs loads on the current device, else the CUDA error text.
const char* kernel_image_problem();

}  // namespace fp8gemm::sm90
