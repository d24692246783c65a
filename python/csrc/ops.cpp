// torch.ops.fp8gemm.{bmm_fp8, bmm_fp8_out, gemm_fp8, gemm_fp8_out}: CUDA implementations on the
// library, Meta implementations (shape/dtype inference with the same checks) for fake tensors
// and torch.compile.
//
// The out= form is its own op (bmm_fp8_out, mutating `out`, returning nothing) because a custom
// op may not return an alias of an input: torch.compile could not functionalize it. The Python
// bmm_fp8(..., out=None) picks one of the two (python/fp8gemm/__init__.py).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "args.h"
#include "fp8gemm/check.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/row_chunks.h"

namespace fp8gemm::torch_ops {
namespace {

void check_device(const char* name, const at::Tensor& t, const at::Device& device, const char* why = "") {
  TORCH_CHECK_VALUE(t.is_cuda(), name, " must be a CUDA tensor, got one on ", t.device(), why);
  TORCH_CHECK_VALUE(t.device() == device, name, " is on ", t.device(), " but A is on ", device,
                    ": every tensor must be on A's GPU");
}

// Every tensor on A's GPU; `out` may be null (the functional op, before it allocates).
void check_devices(const at::Tensor& A, const at::Tensor& B, const at::Tensor& A_scale, const at::Tensor& B_scale,
                   const at::Tensor* out) {
  const at::Device device = A.device();
  check_device("A", A, device);
  check_device("B", B, device);
  const char* scale_why = " (scales are read on the GPU only: no host sync)";
  check_device("A_scale", A_scale, device, scale_why);
  check_device("B_scale", B_scale, device, scale_why);
  if (out) check_device("out", *out, device);
}

// The Meta implementations run when any tensor is a meta tensor (Meta outranks CPU and CUDA in
// dispatch): all of them must be, or a call with real inputs and a meta `out` would return
// having computed nothing.
void check_all_meta(const at::Tensor& A, const at::Tensor& B, const at::Tensor& A_scale, const at::Tensor& B_scale,
                    const at::Tensor* out) {
  const std::pair<const char*, const at::Tensor*> tensors[] = {
      {"A", &A}, {"B", &B}, {"A_scale", &A_scale}, {"B_scale", &B_scale}, {"out", out}};
  const char* meta = nullptr;
  for (const auto& [name, t] : tensors)
    if (t && t->is_meta() && !meta) meta = name;
  if (!meta) return;  // not reached (this kernel runs because one is; fake tensors are meta in it)
  for (const auto& [name, t] : tensors)
    TORCH_CHECK_VALUE(!t || t->is_meta(), name, " is on ", t->device(), " but ", meta, " is a meta tensor: ",
                      "every tensor must be on one device (all meta to trace, all on one GPU to run)");
}

// Validates with the library's rules and enqueues the GEMM on torch's current stream, with a
// workspace from torch's caching allocator (graph-capture safe, nothing cudaMalloc'ed per call).
// The caller has run check_tensors, check_problem and check_devices.
void run(const at::Tensor& A, const at::Tensor& B, const at::Tensor& A_scale, const at::Tensor& B_scale,
         const at::Tensor& out, const CallDims& dims, at::ScalarType out_dtype, const std::string& backend) {
  const at::Device device = A.device();
  const c10::cuda::CUDAGuard guard(device);
  const int dev = device.index();
  try {
    Context& ctx = default_context(dev);
    BmmFp8Args args = library_args(dims, A, B, out_dtype);
    args.a = A.data_ptr();
    args.b = B.data_ptr();
    args.a_scale = A_scale.data_ptr<float>();
    args.b_scale = B_scale.data_ptr<float>();
    args.out = out.data_ptr();
    // Torch already placed every tensor on this GPU: skip the driver's pointer queries.
    const Problem p = validate(args, ctx.device(), PointerPlacement::kOnDevice);
    if (p.empty()) return;
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream(dev).stream();
    const GemmArgs gemm{args.a, args.b, args.a_scale, args.b_scale, args.out};
    if (splits_rows(p)) resolve_every_part(ctx, p, gemm, backend, stream);  // fp8gemm/row_chunks.h
    for_each_row_chunk(p, gemm, [&](const Problem& part, const GemmArgs& g) {
      // Memoized choice (Context::resolve): a steady-state call asks no selector and copies no name.
      const std::shared_ptr<const Context::Resolved> r = ctx.resolve(part, backend, stream);
      const size_t need = r->workspace_bytes;
      at::Tensor workspace;
      if (need) workspace = at::empty({static_cast<int64_t>(need)}, A.options().dtype(at::kByte));
      // Scratch from torch's allocator (stream-ordered, graph-pool aware); the flags, which must
      // stay zero between launches, from the context.
      Workspace ws = need ? ctx.flags(stream) : Workspace{};
      ws.ptr = need ? workspace.data_ptr() : nullptr;
      ws.bytes = need;
      r->backend->run(part, r->tactic, g, ws, stream);
    });
  } catch (const Error& e) {
    throw_torch_error(e);
  }
}

// Every argument is checked before `out` is allocated or the GPU is touched.
template <int Rank>
at::Tensor op_cuda(const at::Tensor& A, const at::Tensor& B, const at::Tensor& A_scale, const at::Tensor& B_scale,
                   at::ScalarType out_dtype, std::string backend) {
  const CallDims d = check_tensors(A, B, A_scale, B_scale, out_dtype, nullptr, Rank);
  check_problem(d, A, B, out_dtype, backend);
  check_devices(A, B, A_scale, B_scale, nullptr);
  at::Tensor out = Rank == 3 ? at::empty({d.batch.expect_int(), d.m.expect_int(), d.n.expect_int()},
                                         A.options().dtype(out_dtype))
                             : at::empty({d.m.expect_int(), d.n.expect_int()}, A.options().dtype(out_dtype));
  run(A, B, A_scale, B_scale, out, d, out_dtype, backend);
  return out;
}

template <int Rank>
void op_out_cuda(const at::Tensor& A, const at::Tensor& B, const at::Tensor& A_scale, const at::Tensor& B_scale,
                 at::ScalarType out_dtype, const at::Tensor& out, std::string backend) {
  const CallDims d = check_tensors(A, B, A_scale, B_scale, out_dtype, &out, Rank);
  check_problem(d, A, B, out_dtype, backend);
  check_devices(A, B, A_scale, B_scale, &out);
  run(A, B, A_scale, B_scale, out, d, out_dtype, backend);
}

template <int Rank>
at::Tensor op_meta(const at::Tensor& A, const at::Tensor& B, const at::Tensor& A_scale, const at::Tensor& B_scale,
                   at::ScalarType out_dtype, std::string backend) {
  const CallDims d = check_tensors(A, B, A_scale, B_scale, out_dtype, nullptr, Rank);
  check_problem(d, A, B, out_dtype, backend);
  check_all_meta(A, B, A_scale, B_scale, nullptr);
  if (Rank == 3) return at::empty_symint({d.batch, d.m, d.n}, A.options().dtype(out_dtype));
  return at::empty_symint({d.m, d.n}, A.options().dtype(out_dtype));
}

template <int Rank>
void op_out_meta(const at::Tensor& A, const at::Tensor& B, const at::Tensor& A_scale, const at::Tensor& B_scale,
                 at::ScalarType out_dtype, const at::Tensor& out, std::string backend) {
  const CallDims d = check_tensors(A, B, A_scale, B_scale, out_dtype, &out, Rank);
  check_problem(d, A, B, out_dtype, backend);
  check_all_meta(A, B, A_scale, B_scale, &out);
}

}  // namespace
}  // namespace fp8gemm::torch_ops

TORCH_LIBRARY(fp8gemm, m) {
  // out[b, m, n] = A_scale * B_scale * A[b] @ B[b]; A [b, m, k] contiguous, B [b, k, n] column-major.
  m.def("bmm_fp8(Tensor A, Tensor B, Tensor A_scale, Tensor B_scale, ScalarType out_dtype, "
        "str backend=\"auto\") -> Tensor");
  m.def("bmm_fp8_out(Tensor A, Tensor B, Tensor A_scale, Tensor B_scale, ScalarType out_dtype, "
        "Tensor(a!) out, str backend=\"auto\") -> ()");
  // The same without the batch dimension: A [m, k] contiguous, B [k, n] column-major (W.t()).
  m.def("gemm_fp8(Tensor A, Tensor B, Tensor A_scale, Tensor B_scale, ScalarType out_dtype, "
        "str backend=\"auto\") -> Tensor");
  m.def("gemm_fp8_out(Tensor A, Tensor B, Tensor A_scale, Tensor B_scale, ScalarType out_dtype, "
        "Tensor(a!) out, str backend=\"auto\") -> ()");
}

TORCH_LIBRARY_IMPL(fp8gemm, CUDA, m) {
  using namespace fp8gemm::torch_ops;
  m.impl("bmm_fp8", &op_cuda<3>);
  m.impl("bmm_fp8_out", &op_out_cuda<3>);
  m.impl("gemm_fp8", &op_cuda<2>);
  m.impl("gemm_fp8_out", &op_out_cuda<2>);
}

// CPU tensors reach the CUDA kernels' device checks, which say what is wrong (rather than the
// dispatcher's "could not run with arguments from the CPU backend").
TORCH_LIBRARY_IMPL(fp8gemm, CPU, m) {
  using namespace fp8gemm::torch_ops;
  m.impl("bmm_fp8", &op_cuda<3>);
  m.impl("bmm_fp8_out", &op_out_cuda<3>);
  m.impl("gemm_fp8", &op_cuda<2>);
  m.impl("gemm_fp8_out", &op_out_cuda<2>);
}

TORCH_LIBRARY_IMPL(fp8gemm, Meta, m) {
  using namespace fp8gemm::torch_ops;
  m.impl("bmm_fp8", &op_meta<3>);
  m.impl("bmm_fp8_out", &op_out_meta<3>);
  m.impl("gemm_fp8", &op_meta<2>);
  m.impl("gemm_fp8_out", &op_out_meta<2>);
}
