// Operand type tags of the sm_90a kernel templates (host and device): which FP8 format a wgmma
// operand is. The wgmma wrappers (wgmma_fp8.cuh) are specialized on them.
#pragma once

namespace fp8gemm::sm90 {

struct E4M3 {};
struct E5M2 {};

}  // namespace fp8gemm::sm90
