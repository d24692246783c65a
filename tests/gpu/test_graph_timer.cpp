// GraphTimer on the GPU (filled in with the timer itself).
#include "gpu_test_util.h"

namespace fp8gemm {
namespace {

TEST(GraphTimer, DeviceVisible) {
  FP8GEMM_SKIP_WITHOUT_GPU();
  EXPECT_GT(device_count(), 0);
}

}  // namespace
}  // namespace fp8gemm
