// The C++ entry point: validate, then run on the given Context or the device's default one.
#include "api/call_context.h"
#include "fp8gemm/check.h"
#include "core/validate.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/row_chunks.h"

namespace fp8gemm {

Context& call_context(Context* ctx) {
  if (!ctx) ctx = &default_context();
  int current = -1;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&current));
  FP8GEMM_REQUIRE(current == ctx->device().device, kInvalidArgument, "the current device is GPU ",
                  current, " but the context belongs to GPU ", ctx->device().device,
                  ": call cudaSetDevice first or pass that device's context");
  return *ctx;
}

Problem validate(const BmmFp8Args& args, const DeviceInfo& device, PointerPlacement pointers) {
  return validate(args, device, pointer_inspector(pointers, device));
}

void bmm_fp8(const BmmFp8Args& args, cudaStream_t stream, const std::string& backend, Context* ctx) {
  Context& context = call_context(ctx);
  const Problem p = validate(args, context.device());
  if (p.empty()) return;
  const GemmArgs gemm{args.a, args.b, args.a_scale, args.b_scale, args.out};
  if (splits_rows(p)) resolve_every_part(context, p, gemm, backend, stream);  // one call resolves as it runs
  for_each_row_chunk(p, gemm, [&](const Problem& part, const GemmArgs& g) { context.run(part, g, stream, backend); });
}

}  // namespace fp8gemm
