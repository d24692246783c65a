// Built only by the test Build.FrontEndPublicIncludeBuilds: the control of
// Build.FrontEndIncludeOfSrcFails (the same set-up compiles the public headers and the tools'
// own, so that test fails for the include of src/ alone).
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/quantize.h"
#include "fp8gemm/row_chunks.h"
#include "tools/common/shapes.h"
