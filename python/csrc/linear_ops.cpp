// torch.ops.fp8gemm.{linear_fp8, linear_fp8_dynamic, quantize_fp8, quantize_fp8_dynamic}: the FP8
// linear layer (include/fp8gemm/linear.h) and its activation quantization on their own, on torch's
// current stream with scratch from torch's allocator (legal in CUDA-graph capture); Meta
// implementations for fake tensors and torch.compile; the quantization also on the CPU (the host
// references of fp8gemm/quantize.h, which the GPU kernels match bit for bit).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "args.h"
#include "fp8gemm/fp8gemm.h"

namespace fp8gemm::torch_ops {
namespace {

using OptTensor = std::optional<at::Tensor>;

std::string py(at::ScalarType t) { return c10::str("torch.", c10::toString(t)); }

void check_activations(const char* op, const at::Tensor& x) {
  TORCH_CHECK_TYPE(x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf, op,
                   ": x must be torch.bfloat16 or torch.float16 (the activations to quantize), got ",
                   py(x.scalar_type()));
  TORCH_CHECK_VALUE(x.dim() >= 1, op, ": x must have at least one dimension (its last is k), got a 0-d tensor");
  TORCH_CHECK_VALUE(x.sym_size(-1) > 0 && x.sym_size(-1) % 16 == 0, op,
                    ": x's last dim must be a positive multiple of 16, got shape ", x.sym_sizes());
  TORCH_CHECK_VALUE(x.is_contiguous(), op, ": x must be contiguous, got strides ", x.sym_strides(),
                    ": pass x.contiguous()");
}

void check_scale(const char* op, const char* name, const at::Tensor& s) {
  TORCH_CHECK_TYPE(s.scalar_type() == at::kFloat, op, ": ", name, " must be torch.float32 (a per-tensor scale), got ",
                   py(s.scalar_type()));
  TORCH_CHECK_VALUE(s.sym_numel() == 1, op, ": ", name, " must have exactly one element (0-d or shape [1]), got shape ",
                    s.sym_sizes());
}

// Every tensor on one device: all meta (tracing), or all on x's GPU.
void check_devices(const char* op, std::initializer_list<std::pair<const char*, const at::Tensor*>> tensors) {
  const at::Tensor& x = *tensors.begin()->second;
  for (const auto& [name, t] : tensors) {
    if (!t) continue;
    if (x.is_meta() || t->is_meta()) {
      TORCH_CHECK_VALUE(x.is_meta() && t->is_meta(), op, ": ", name, " is on ", t->device(), " but x is on ",
                        x.device(), ": every tensor must be on one device (all meta to trace, all on one GPU to run)");
      continue;
    }
    TORCH_CHECK_VALUE(t->is_cuda(), op, ": ", name, " must be a CUDA tensor, got one on ", t->device(),
                      t == tensors.begin()->second ? "" : " (scales are read on the GPU only: no host sync)");
    TORCH_CHECK_VALUE(t->device() == x.device(), op, ": ", name, " is on ", t->device(), " but x is on ", x.device(),
                      ": every tensor must be on x's GPU");
  }
}

struct LinearCall {
  c10::SymInt m, n, k;
  at::ScalarType out_dtype;
};

// Everything that needs no memory, for the CUDA and Meta implementations alike.
LinearCall check_linear(const char* op, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& weight_scale,
                        const OptTensor& input_scale, const OptTensor& bias, std::optional<at::ScalarType> out_dtype,
                        const std::string& backend) {
  check_activations(op, x);
  TORCH_CHECK_TYPE(weight.scalar_type() == at::kFloat8_e4m3fn || weight.scalar_type() == at::kFloat8_e5m2, op,
                   ": weight must be torch.float8_e4m3fn or torch.float8_e5m2, got ", py(weight.scalar_type()));
  const at::ScalarType out = out_dtype.value_or(x.scalar_type());
  TORCH_CHECK_TYPE(out == at::kBFloat16 || out == at::kHalf, op,
                   ": out_dtype must be torch.bfloat16 or torch.float16, got ", py(out));
  check_scale(op, "weight_scale", weight_scale);
  if (input_scale) check_scale(op, "input_scale", *input_scale);
  TORCH_CHECK_VALUE(weight.dim() == 2, op, ": weight must be 2-D [out_features, in_features], got shape ",
                    weight.sym_sizes());
  TORCH_CHECK_VALUE(weight.sym_size(1) == x.sym_size(-1), op, ": x's last dim (", x.sym_size(-1),
                    ") must equal weight's in_features (weight is [out_features, in_features] = ", weight.sym_sizes(),
                    ")");
  TORCH_CHECK_VALUE(weight.is_contiguous(), op,
                    ": weight must be the contiguous [out_features, in_features] weight as stored (not W.t()), got "
                    "strides ", weight.sym_strides());
  LinearCall c{x.sym_numel() / x.sym_size(-1), weight.sym_size(0), weight.sym_size(1), out};
  if (bias) {
    TORCH_CHECK_TYPE(bias->scalar_type() == out, op, ": bias must have out_dtype (", py(out), "), got ",
                     py(bias->scalar_type()));
    TORCH_CHECK_VALUE(bias->dim() == 1 && bias->sym_size(0) == c.n, op, ": bias must be 1-D [out_features] = [", c.n,
                      "], got shape ", bias->sym_sizes());
    TORCH_CHECK_VALUE(bias->is_contiguous(), op, ": bias must be contiguous, got strides ", bias->sym_strides());
  }
  BmmFp8Args a;  // the GEMM's rules on the quantized activations (n, k, 32-bit sizes, dtypes)
  a.m = c.m.maybe_as_int().value_or(0);
  a.n = c.n.guard_int(__FILE__, __LINE__);
  a.k = c.k.guard_int(__FILE__, __LINE__);
  a.a_type = DType::kE4M3;
  a.b_type = to_dtype(weight.scalar_type());
  a.out_type = to_dtype(out);
  try {
    problem_without_gpu(a);
    check_backend(backend);
  } catch (const Error& e) {
    throw_torch_error(e);
  }
  return c;
}

std::vector<c10::SymInt> out_shape(const at::Tensor& x, const c10::SymInt& n) {
  std::vector<c10::SymInt> shape(x.sym_sizes().begin(), x.sym_sizes().end());
  shape.back() = n;
  return shape;
}

// The layer on x's GPU: scratch from torch's allocator, the library's rules on the pointers
// (torch placed every tensor on this GPU: no driver queries), then the quantization and GEMM.
void run(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& weight_scale, const at::Tensor& x_scale,
         bool dynamic, const OptTensor& bias, const at::Tensor& out, const LinearCall& c, const std::string& backend) {
  const c10::cuda::CUDAGuard guard(x.device());
  const int dev = x.device().index();
  try {
    Context& ctx = default_context(dev);
    LinearArgs a;
    a.m = c.m.expect_int();
    a.n = c.n.expect_int();
    a.k = c.k.expect_int();
    a.x_type = to_dtype(x.scalar_type());
    a.w_type = to_dtype(weight.scalar_type());
    a.out_type = to_dtype(c.out_dtype);
    a.scale = dynamic ? ActivationScale::kDynamic : ActivationScale::kStatic;
    a.x = x.data_ptr();
    a.w = weight.data_ptr();
    a.w_scale = weight_scale.data_ptr<float>();
    a.x_scale = x_scale.data_ptr<float>();
    a.bias = bias ? bias->data_ptr() : nullptr;
    a.out = out.data_ptr();
    at::Tensor scratch;
    if (a.m > 0) {
      const size_t bytes = linear_scratch_bytes(a.m, a.k, a.scale, ctx.device().sm_count);
      scratch = at::empty({int64_t(bytes)}, x.options().dtype(at::kByte));
      a.scratch = scratch.data_ptr();
    }
    // Torch already placed every tensor on this GPU: skip the driver's pointer queries.
    linear_fp8(a, at::cuda::getCurrentCUDAStream(dev).stream(), backend, &ctx, PointerPlacement::kOnDevice);
  } catch (const Error& e) {
    throw_torch_error(e);
  }
}

at::Tensor linear_cuda(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& weight_scale,
                       const OptTensor& input_scale, const OptTensor& bias, std::optional<at::ScalarType> out_dtype,
                       std::string backend) {
  const char* op = "linear_fp8";
  const LinearCall c = check_linear(op, x, weight, weight_scale, input_scale, bias, out_dtype, backend);
  check_devices(op, {{"x", &x}, {"weight", &weight}, {"weight_scale", &weight_scale},
                     {"input_scale", input_scale ? &*input_scale : nullptr}, {"bias", bias ? &*bias : nullptr}});
  at::Tensor out = at::empty_symint(out_shape(x, c.n), x.options().dtype(c.out_dtype));
  const at::Tensor scale = input_scale ? *input_scale : at::empty({}, x.options().dtype(at::kFloat));
  run(x, weight, weight_scale, scale, !input_scale, bias, out, c, backend);
  return out;
}

std::tuple<at::Tensor, at::Tensor> linear_dynamic_cuda(const at::Tensor& x, const at::Tensor& weight,
                                                       const at::Tensor& weight_scale, const OptTensor& bias,
                                                       std::optional<at::ScalarType> out_dtype, std::string backend) {
  const char* op = "linear_fp8_dynamic";
  const LinearCall c = check_linear(op, x, weight, weight_scale, std::nullopt, bias, out_dtype, backend);
  check_devices(op, {{"x", &x}, {"weight", &weight}, {"weight_scale", &weight_scale},
                     {"bias", bias ? &*bias : nullptr}});
  at::Tensor out = at::empty_symint(out_shape(x, c.n), x.options().dtype(c.out_dtype));
  at::Tensor scale = at::empty({}, x.options().dtype(at::kFloat));
  run(x, weight, weight_scale, scale, true, bias, out, c, backend);
  return {out, scale};
}

at::Tensor linear_meta(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& weight_scale,
                       const OptTensor& input_scale, const OptTensor& bias, std::optional<at::ScalarType> out_dtype,
                       std::string backend) {
  const char* op = "linear_fp8";
  const LinearCall c = check_linear(op, x, weight, weight_scale, input_scale, bias, out_dtype, backend);
  check_devices(op, {{"x", &x}, {"weight", &weight}, {"weight_scale", &weight_scale},
                     {"input_scale", input_scale ? &*input_scale : nullptr}, {"bias", bias ? &*bias : nullptr}});
  return at::empty_symint(out_shape(x, c.n), x.options().dtype(c.out_dtype));
}

std::tuple<at::Tensor, at::Tensor> linear_dynamic_meta(const at::Tensor& x, const at::Tensor& weight,
                                                       const at::Tensor& weight_scale, const OptTensor& bias,
                                                       std::optional<at::ScalarType> out_dtype, std::string backend) {
  const char* op = "linear_fp8_dynamic";
  const LinearCall c = check_linear(op, x, weight, weight_scale, std::nullopt, bias, out_dtype, backend);
  check_devices(op, {{"x", &x}, {"weight", &weight}, {"weight_scale", &weight_scale},
                     {"bias", bias ? &*bias : nullptr}});
  return {at::empty_symint(out_shape(x, c.n), x.options().dtype(c.out_dtype)),
          at::empty({}, x.options().dtype(at::kFloat))};
}

// ---- quantize_fp8 / quantize_fp8_dynamic ----------------------------------------------------

at::Tensor empty_fp8(const at::Tensor& x) {
  return at::empty_symint(x.sym_sizes(), x.options().dtype(at::kFloat8_e4m3fn));
}

void quantize_on_gpu(const at::Tensor& x, const at::Tensor& scale, bool dynamic, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(x.device());
  const int dev = x.device().index();
  try {
    Context& ctx = default_context(dev);
    TORCH_CHECK_VALUE(reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0,
                      "quantize_fp8: x must be 16-byte aligned (a view that starts mid-row is not): pass x.clone()");
    QuantizeArgs q;
    q.x = x.data_ptr();
    q.x_type = to_dtype(x.scalar_type());
    q.count = x.numel();
    q.scale = scale.data_ptr<float>();
    q.out = out.data_ptr();
    q.scale_kind = dynamic ? ActivationScale::kDynamic : ActivationScale::kStatic;
    at::Tensor scratch;
    if (const size_t bytes = quantize_scratch_bytes(q.count, q.scale_kind, ctx.device().sm_count)) {
      scratch = at::empty({int64_t(bytes)}, x.options().dtype(at::kByte));
      q.scratch = scratch.data_ptr();
    }
    quantize_fp8(q, at::cuda::getCurrentCUDAStream(dev).stream(), &ctx);
  } catch (const Error& e) {
    throw_torch_error(e);
  }
}

at::Tensor quantize_static(const at::Tensor& x, const at::Tensor& scale) {
  const char* op = "quantize_fp8";
  check_activations(op, x);
  check_scale(op, "scale", scale);
  at::Tensor out = empty_fp8(x);
  if (x.device().is_cpu()) {
    TORCH_CHECK_VALUE(scale.device().is_cpu(), op, ": scale is on ", scale.device(), " but x is on the CPU");
    quantize_reference(x.data_ptr(), to_dtype(x.scalar_type()), size_t(x.numel()), scale.item<float>(),
                       static_cast<uint8_t*>(out.data_ptr()));
    return out;
  }
  check_devices(op, {{"x", &x}, {"scale", &scale}});
  if (!x.is_meta()) quantize_on_gpu(x, scale, false, out);
  return out;
}

std::tuple<at::Tensor, at::Tensor> quantize_dynamic(const at::Tensor& x) {
  const char* op = "quantize_fp8_dynamic";
  check_activations(op, x);
  at::Tensor out = empty_fp8(x);
  at::Tensor scale = at::empty({}, x.options().dtype(at::kFloat));
  if (x.device().is_cpu()) {
    const float s = dynamic_scale_reference(x.data_ptr(), to_dtype(x.scalar_type()), size_t(x.numel()));
    scale.fill_(s);
    quantize_reference(x.data_ptr(), to_dtype(x.scalar_type()), size_t(x.numel()), s,
                       static_cast<uint8_t*>(out.data_ptr()));
    return {out, scale};
  }
  check_devices(op, {{"x", &x}});
  if (!x.is_meta()) quantize_on_gpu(x, scale, true, out);
  return {out, scale};
}

}  // namespace
}  // namespace fp8gemm::torch_ops

TORCH_LIBRARY_FRAGMENT(fp8gemm, m) {
  // out[..., n] = e4m3(x / input_scale) @ weight.T * input_scale * weight_scale (+ bias); x [..., k]
  // bf16/fp16 contiguous, weight [n, k] FP8 as stored; input_scale None: dynamic (amax / 448).
  m.def("linear_fp8(Tensor x, Tensor weight, Tensor weight_scale, Tensor? input_scale=None, Tensor? bias=None, "
        "ScalarType? out_dtype=None, str backend=\"auto\") -> Tensor");
  // The dynamic layer that also returns the scale it computed (0-d float32).
  m.def("linear_fp8_dynamic(Tensor x, Tensor weight, Tensor weight_scale, Tensor? bias=None, "
        "ScalarType? out_dtype=None, str backend=\"auto\") -> (Tensor, Tensor)");
  // x / scale in e4m3 (the layer's rule), and the dynamic form with its scale.
  m.def("quantize_fp8(Tensor x, Tensor scale) -> Tensor");
  m.def("quantize_fp8_dynamic(Tensor x) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(fp8gemm, CUDA, m) {
  using namespace fp8gemm::torch_ops;
  m.impl("linear_fp8", &linear_cuda);
  m.impl("linear_fp8_dynamic", &linear_dynamic_cuda);
  m.impl("quantize_fp8", &quantize_static);
  m.impl("quantize_fp8_dynamic", &quantize_dynamic);
}

// CPU: the quantization's host reference; the layer says that it needs CUDA tensors.
TORCH_LIBRARY_IMPL(fp8gemm, CPU, m) {
  using namespace fp8gemm::torch_ops;
  m.impl("linear_fp8", &linear_cuda);
  m.impl("linear_fp8_dynamic", &linear_dynamic_cuda);
  m.impl("quantize_fp8", &quantize_static);
  m.impl("quantize_fp8_dynamic", &quantize_dynamic);
}

TORCH_LIBRARY_IMPL(fp8gemm, Meta, m) {
  using namespace fp8gemm::torch_ops;
  m.impl("linear_fp8", &linear_meta);
  m.impl("linear_fp8_dynamic", &linear_dynamic_meta);
  m.impl("quantize_fp8", &quantize_static);
  m.impl("quantize_fp8_dynamic", &quantize_dynamic);
}
