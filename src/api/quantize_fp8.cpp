// The activation quantization's public entry point (fp8gemm/quantize.h): the argument rules, then
// src/quantize's kernels on the context's GPU.
#include "fp8gemm/quantize.h"

#include "api/call_context.h"
#include "fp8gemm/check.h"
#include "quantize/quantize.h"

namespace fp8gemm {

size_t quantize_scratch_bytes(int64_t count, ActivationScale scale_kind, int sm_count) {
  FP8GEMM_REQUIRE(count >= 0, kInvalidArgument, "quantize_scratch_bytes: count must be >= 0, got ", count);
  FP8GEMM_REQUIRE(sm_count > 0, kInvalidArgument, "quantize_scratch_bytes: sm_count must be > 0, got ", sm_count);
  return scale_kind == ActivationScale::kDynamic ? quantize::dynamic_scratch_bytes(count, sm_count) : 0;
}

void quantize_fp8(const QuantizeArgs& args, cudaStream_t stream, Context* ctx) {
  quantize::require_layout(args.x, args.x_type, args.count, args.out);  // before any GPU work
  FP8GEMM_REQUIRE(args.scale, kInvalidArgument, "quantize_fp8: scale is null: it must point to a device float");
  FP8GEMM_REQUIRE(args.count == 0 || (args.x && args.out), kInvalidArgument, "quantize_fp8: ",
                  args.x ? "out" : "x", " is null: it must point to device memory");
  Context& context = call_context(ctx);
  const int sms = context.device().sm_count;
  const size_t need = quantize_scratch_bytes(args.count, args.scale_kind, sms);
  FP8GEMM_REQUIRE(need == 0 || (args.scratch && reinterpret_cast<uintptr_t>(args.scratch) % 16 == 0),
                  kInvalidArgument, "quantize_fp8: scratch must be ", need,
                  " bytes of 16-byte aligned device memory (quantize_scratch_bytes), got ",
                  args.scratch ? "a misaligned pointer" : "null");
  if (args.scale_kind == ActivationScale::kDynamic)
    quantize::launch_dynamic(args.x, args.x_type, args.count, args.scale, args.out, args.scratch, sms, stream);
  else
    quantize::launch_static(args.x, args.x_type, args.count, args.scale, args.out, sms, stream);
}

}  // namespace fp8gemm
