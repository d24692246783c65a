// torch.ops.fp8gemm.m_bucket(m): the library's one map from M to its tuning bucket (the smallest
// bucket edge >= m), for Python code that names keys (fp8gemm.tune_model, the choice log) without
// a second copy of the edges. Pure host code: works without a GPU.
#include <torch/library.h>

#include "fp8gemm/tune.h"

namespace fp8gemm::torch_ops {
namespace {

int64_t m_bucket_op(int64_t m) {
  TORCH_CHECK_VALUE(m >= 1, "m_bucket: m must be >= 1, got ", m);
  return m_bucket(m);
}

}  // namespace
}  // namespace fp8gemm::torch_ops

TORCH_LIBRARY_FRAGMENT(fp8gemm, m) {
  m.def("m_bucket(int m) -> int", &fp8gemm::torch_ops::m_bucket_op);
}
