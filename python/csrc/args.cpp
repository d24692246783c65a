#include "args.h"

#include <c10/util/Exception.h>

#include "fp8gemm/check.h"
#include "fp8gemm/fp8gemm.h"

namespace fp8gemm::torch_ops {

namespace {

// Python's spelling of a dtype (torch.float8_e4m3fn), as users write it.
std::string py(at::ScalarType t) {
  switch (t) {
    case at::kFloat8_e4m3fn: return "torch.float8_e4m3fn";
    case at::kFloat8_e5m2: return "torch.float8_e5m2";
    case at::kFloat8_e4m3fnuz: return "torch.float8_e4m3fnuz";
    case at::kFloat8_e5m2fnuz: return "torch.float8_e5m2fnuz";
    case at::kBFloat16: return "torch.bfloat16";
    case at::kHalf: return "torch.float16";
    case at::kFloat: return "torch.float32";
    case at::kDouble: return "torch.float64";
    default: return c10::str("torch.", c10::toString(t));
  }
}

bool is_fp8(at::ScalarType t) { return t == at::kFloat8_e4m3fn || t == at::kFloat8_e5m2; }

// Whether `t` is packed with its dims laid out `outer_to_inner` (the last one contiguous).
// Strides of size-1 dims and of empty tensors are free, as in Tensor::is_contiguous().
bool packed(const at::Tensor& t, std::initializer_list<int64_t> outer_to_inner) {
  if (t.sym_numel() == 0) return true;
  c10::SymInt expected = 1;
  for (auto it = std::rbegin(outer_to_inner); it != std::rend(outer_to_inner); ++it) {
    const c10::SymInt& size = t.sym_size(*it);
    if (size != 1 && t.sym_stride(*it) != expected) return false;
    expected *= size;
  }
  return true;
}

void check_scale(const char* name, const at::Tensor& s) {
  TORCH_CHECK_TYPE(s.scalar_type() == at::kFloat, name, " must be torch.float32 (a per-tensor scale), got ",
                   py(s.scalar_type()));
  TORCH_CHECK_VALUE(s.sym_numel() == 1, name,
                    " must have exactly one element (a 0-d tensor or shape [1]), got shape ", s.sym_sizes());
}

}  // namespace

DType to_dtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat8_e4m3fn: return DType::kE4M3;
    case at::kFloat8_e5m2: return DType::kE5M2;
    case at::kBFloat16: return DType::kBF16;
    case at::kHalf: return DType::kFP16;
    default: C10_THROW_ERROR(TypeError, c10::str("fp8gemm has no dtype ", py(t)));
  }
}

CallDims check_tensors(const at::Tensor& A, const at::Tensor& B, const at::Tensor& A_scale,
                       const at::Tensor& B_scale, at::ScalarType out_dtype, const at::Tensor* out, int rank) {
  const bool batched = rank == 3;
  const char* a_dims = batched ? "[b, m, k]" : "[m, k]";
  const char* b_dims = batched ? "[b, k, n]" : "[k, n]";
  TORCH_CHECK_TYPE(is_fp8(A.scalar_type()), "A must be torch.float8_e4m3fn or torch.float8_e5m2, got ",
                   py(A.scalar_type()));
  TORCH_CHECK_TYPE(is_fp8(B.scalar_type()), "B must be torch.float8_e4m3fn or torch.float8_e5m2, got ",
                   py(B.scalar_type()));
  TORCH_CHECK_TYPE(out_dtype == at::kBFloat16 || out_dtype == at::kHalf,
                   "dtype (the output type) must be torch.bfloat16 or torch.float16, got ", py(out_dtype));
  check_scale("A_scale", A_scale);
  check_scale("B_scale", B_scale);
  TORCH_CHECK_VALUE(A.dim() == rank, "A must be ", rank, "-D ", a_dims, ", got shape ", A.sym_sizes());
  TORCH_CHECK_VALUE(B.dim() == rank, "B must be ", rank, "-D ", b_dims, ", got shape ", B.sym_sizes());

  const int64_t o = batched ? 1 : 0;  // index of m in A and of k in B
  CallDims d{batched ? A.sym_size(0) : c10::SymInt(1), A.sym_size(o), B.sym_size(o + 1), A.sym_size(o + 1)};
  if (batched)
    TORCH_CHECK_VALUE(B.sym_size(0) == d.batch, "A and B must have the same batch size: A is ", A.sym_sizes(),
                      " ", a_dims, ", B is ", B.sym_sizes(), " ", b_dims);
  // The usual mistake: a weight W [n, k] passed as it is rather than as W.t().
  TORCH_CHECK_VALUE(B.sym_size(o) == d.k, "B's k must equal A's k: A is ", A.sym_sizes(), " ", a_dims, ", B is ",
                    B.sym_sizes(), " ", b_dims,
                    B.sym_size(o + 1) == d.k ? c10::str(": B looks like a weight W ", batched ? "[b, n, k]" : "[n, k]",
                                                 ", pass ", batched ? "W.transpose(-2, -1)" : "W.t()")
                                      : std::string());
  TORCH_CHECK_VALUE(batched ? packed(A, {0, 1, 2}) : packed(A, {0, 1}), "A must be contiguous (row-major ",
                    a_dims, " with k contiguous), got strides ", A.sym_strides(), ": pass A.contiguous()");
  TORCH_CHECK_VALUE(batched ? packed(B, {0, 2, 1}) : packed(B, {1, 0}), "B must be column-major ", b_dims,
                    " (k contiguous), got strides ", B.sym_strides(), " for shape ", B.sym_sizes(), ": pass ",
                    batched ? "W.transpose(-2, -1) of a contiguous [b, n, k] weight W" : "W.t() of a contiguous [n, k] weight W");
  if (out) {
    TORCH_CHECK_TYPE(out->scalar_type() == out_dtype, "out has dtype ", py(out->scalar_type()), " but dtype is ",
                     py(out_dtype), ": they must match");
    const bool shape_ok = out->dim() == rank && (!batched || out->sym_size(0) == d.batch) &&
                          out->sym_size(o) == d.m && out->sym_size(o + 1) == d.n;
    TORCH_CHECK_VALUE(shape_ok, "out must have shape ",
                      batched ? c10::str("[b, m, n] = [", d.batch, ", ") : std::string("[m, n] = ["), d.m, ", ",
                      d.n, "], got ", out->sym_sizes());
    TORCH_CHECK_VALUE(batched ? packed(*out, {0, 1, 2}) : packed(*out, {0, 1}),
                      "out must be contiguous (row-major), got strides ", out->sym_strides());
  }
  return d;
}

BmmFp8Args library_args(const CallDims& d, const at::Tensor& A, const at::Tensor& B, at::ScalarType out_dtype) {
  BmmFp8Args a;
  a.batch = d.batch.expect_int();
  a.m = d.m.expect_int();
  a.n = d.n.expect_int();
  a.k = d.k.expect_int();
  a.a_type = to_dtype(A.scalar_type());
  a.b_type = to_dtype(B.scalar_type());
  a.out_type = to_dtype(out_dtype);
  return a;
}

Problem problem_without_gpu(const BmmFp8Args& args) {
  DeviceInfo any_fp8_gpu;  // the rules checked here do not depend on the GPU
  any_fp8_gpu.cc_major = 9;
  return validate_problem(args, any_fp8_gpu);
}

void check_backend(const std::string& backend) {
  const size_t colon = backend.find(':');
  if (colon == std::string::npos) {
    canonical_backend_name(backend);  // throws naming the accepted spellings
    return;
  }
  constexpr const char* kBackends = "cublaslt (or cublas), cutlass, small_m or cudnn";
  FP8GEMM_REQUIRE(colon > 0 && colon + 1 < backend.size(), kInvalidArgument, "backend '", backend,
                  "' is not a tactic name: expected BACKEND:CONFIG (e.g. 'cublaslt:algo=...') with BACKEND ",
                  kBackends);
  const std::string prefix = backend.substr(0, colon);
  std::string name;
  try {
    name = canonical_backend_name(prefix);
  } catch (const Error&) {
    name = "auto";  // refused below, naming the tactic
  }
  FP8GEMM_REQUIRE(name != "auto", kInvalidArgument, "backend '", backend, "' is a tactic name of '", prefix,
                  "', which is not a backend: expected ", kBackends);
}

void check_problem(const CallDims& d, const at::Tensor& A, const at::Tensor& B, at::ScalarType out_dtype,
                   const std::string& backend) {
  BmmFp8Args a;
  a.batch = d.batch.maybe_as_int().value_or(1);
  a.m = d.m.maybe_as_int().value_or(0);
  a.n = d.n.guard_int(__FILE__, __LINE__);
  a.k = d.k.guard_int(__FILE__, __LINE__);
  a.a_type = to_dtype(A.scalar_type());
  a.b_type = to_dtype(B.scalar_type());
  a.out_type = to_dtype(out_dtype);
  try {
    problem_without_gpu(a);
    check_backend(backend);
  } catch (const Error& e) {
    throw_torch_error(e);
  }
}

void throw_torch_error(const Error& e) {
  if (e.kind() == ErrorKind::kInvalidArgument) C10_THROW_ERROR(ValueError, e.what());
  C10_THROW_ERROR(Error, e.what());
}

}  // namespace fp8gemm::torch_ops
