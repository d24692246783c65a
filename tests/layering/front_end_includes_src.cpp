// Built only by the test Build.FrontEndIncludeOfSrcFails, with the front ends' include path (the
// CLI's tools and the public headers): a front end uses the public API only, so this include of
// the library's internals must not compile (cmake/layers.cmake fp8gemm_tools_view).
#include "fp8gemm/fp8gemm.h"
#include "tools/common/shapes.h"
#include "src/core/validate.h"
