// The linear layer's entry point: validate, choose the GEMM, quantize the activations with
// src/quantize's kernels, then run the GEMM on them with the bias in its epilogue.
#include "fp8gemm/check.h"
#include "core/validate.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/linear.h"
#include "fp8gemm/row_chunks.h"
#include "api/call_context.h"
#include "quantize/quantize.h"

namespace fp8gemm {

namespace {

// The quantized activations' bytes in the scratch, before the dynamic path's partial maxima.
size_t fp8_bytes(int64_t m, int64_t k) { return (size_t(m * k) + 255) / 256 * 256; }

// linear_fp8 on arguments that validate accepted as problem `p`.
void run_linear(Context& ctx, const LinearArgs& args, const Problem& p, cudaStream_t stream,
                const std::string& backend) {
  const int sms = ctx.device().sm_count;
  const bool dynamic = args.scale == ActivationScale::kDynamic;
  if (p.empty()) {
    if (dynamic) quantize::launch_dynamic(nullptr, args.x_type, 0, args.x_scale, nullptr, nullptr, sms, stream);
    return;
  }
  // The GEMM's choice first (each part's, for a call split by rows): a backend or tactic that cannot
  // run the layer fails before any GPU work.
  const GemmArgs gemm{args.scratch, args.w, args.x_scale, args.w_scale, args.out, args.bias};
  resolve_every_part(ctx, p, gemm, backend, stream);
  const int64_t count = p.m * p.k;
  if (dynamic)
    quantize::launch_dynamic(args.x, args.x_type, count, args.x_scale, args.scratch,
                             static_cast<char*>(args.scratch) + fp8_bytes(p.m, p.k), sms, stream);
  else
    quantize::launch_static(args.x, args.x_type, count, args.x_scale, args.scratch, sms, stream);
  // The whole x is quantized (a dynamic scale is that of all of it) before the GEMM's parts.
  for_each_row_chunk(p, gemm, [&](const Problem& part, const GemmArgs& g) { ctx.run(part, g, stream, backend); });
}

}  // namespace

const char* to_string(ActivationScale s) { return s == ActivationScale::kStatic ? "static" : "dynamic"; }

size_t linear_scratch_bytes(int64_t m, int64_t k, ActivationScale scale, int sm_count) {
  FP8GEMM_REQUIRE(m >= 0 && k >= 0, kInvalidArgument, "linear_scratch_bytes: m and k must be >= 0, got ", m, ", ",
                  k);
  const size_t partials = scale == ActivationScale::kDynamic ? quantize::dynamic_scratch_bytes(m * k, sm_count) : 0;
  return fp8_bytes(m, k) + partials;
}

Problem with_layer(Problem p, const std::string& layer) {
  if (layer.empty()) return p;
  const std::string scale = layer.substr(0, layer.find('+'));
  const bool bias = layer == "bias" || layer.size() > scale.size();
  FP8GEMM_REQUIRE((scale == "static" || scale == "dynamic" || layer == "bias") &&
                      (!bias || layer == "bias" || layer == scale + "+bias"),
                  kInvalidArgument, "layer '", layer,
                  "' is not one of static, dynamic, static+bias, dynamic+bias or bias (the GEMM with a bias)");
  p.bias = bias;
  if (layer == "bias") return p;
  FP8GEMM_REQUIRE(p.a_type == DType::kE4M3, kInvalidArgument, "layer '", layer,
                  "': the layer quantizes its activations to e4m3, so A must be e4m3, not ", p.a_type);
  p.prologue = scale == "static" ? Problem::Prologue::kQuantizeStatic : Problem::Prologue::kQuantizeDynamic;
  p.x_type = p.out_type;
  return p;
}

Problem validate(const LinearArgs& args, const DeviceInfo& device, PointerPlacement pointers) {
  return validate(args, device, pointer_inspector(pointers, device));
}

void linear_fp8(const LinearArgs& args, cudaStream_t stream, const std::string& backend, Context* ctx,
                PointerPlacement pointers) {
  Context& context = call_context(ctx);
  run_linear(context, args, validate(args, context.device(), pointers), stream, backend);
}

}  // namespace fp8gemm
