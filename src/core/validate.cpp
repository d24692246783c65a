#include "core/validate.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "fp8gemm/check.h"

namespace fp8gemm {

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

const char* kind_name(PointerInfo::Kind k) {
  switch (k) {
    case PointerInfo::Kind::kDevice: return "device";
    case PointerInfo::Kind::kManaged: return "managed";
    case PointerInfo::Kind::kHost: return "pinned host";
    case PointerInfo::Kind::kUnregistered: return "unregistered host";
  }
  return "?";
}

void require_device_pointer(const char* arg, const void* ptr, const DeviceInfo& device,
                            const PointerInspector& inspect) {
  FP8GEMM_REQUIRE(ptr != nullptr, kInvalidArgument, arg, " is null: it must point to device memory");
  const PointerInfo info = inspect(ptr);
  const bool on_device = info.kind == PointerInfo::Kind::kDevice || info.kind == PointerInfo::Kind::kManaged;
  FP8GEMM_REQUIRE(on_device, kInvalidArgument, arg, " points to ", kind_name(info.kind),
                  " memory: it must point to device memory of GPU ", device.device);
  FP8GEMM_REQUIRE(info.kind == PointerInfo::Kind::kManaged || info.device == device.device,
                  kInvalidArgument, arg, " is memory of GPU ", info.device,
                  " but the call runs on GPU ", device.device);
}

void require_aligned(const char* arg, const void* ptr) {
  const auto addr = reinterpret_cast<uintptr_t>(ptr);
  FP8GEMM_REQUIRE(addr % 16 == 0, kInvalidArgument, arg,
                  " must be 16-byte aligned (FP8 tensor-core loads), but its address % 16 = ", addr % 16);
}

bool overlaps(const void* p, size_t p_bytes, const void* q, size_t q_bytes) {
  const auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(q);
  return a < b + q_bytes && b < a + p_bytes;
}

void require_fits_int32(const char* what, int64_t value) {
  FP8GEMM_REQUIRE(value <= kInt32Max, kInvalidArgument, what, " = ", value,
                  " exceeds 2^31-1: sizes and strides must fit in 32 bits");
}

}  // namespace

int64_t max_call_rows(int64_t n, int64_t k) {
  const int64_t rows = std::min(kInt32Max / std::max<int64_t>(n, 1), kInt32Max / std::max<int64_t>(k, 1));
  return rows >= 64 ? rows / 64 * 64 : std::max<int64_t>(rows, 1);
}

void require_one_call(const Problem& p) {
  const int64_t rows = max_call_rows(p.n, p.k);
  FP8GEMM_REQUIRE(p.m <= rows, kInvalidArgument, "m=", p.m, " with n=", p.n, " and k=", p.k,
                  ": one backend call takes at most ", rows,
                  " rows (m*k and m*n within 2^31-1); bmm_fp8 and linear_fp8 run a larger m as several calls");
}

PointerInspector pointer_inspector(PointerPlacement placement, const DeviceInfo& device) {
  if (placement == PointerPlacement::kAskDriver) return inspect_cuda_pointer;
  return [dev = device.device](const void*) { return PointerInfo{PointerInfo::Kind::kDevice, dev}; };
}

PointerInfo inspect_cuda_pointer(const void* ptr) {
  cudaPointerAttributes attr{};
  cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    cudaGetLastError();  // not sticky; leave the context clean
    return {PointerInfo::Kind::kUnregistered, -1};
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice: return {PointerInfo::Kind::kDevice, attr.device};
    case cudaMemoryTypeManaged: return {PointerInfo::Kind::kManaged, attr.device};
    case cudaMemoryTypeHost: return {PointerInfo::Kind::kHost, attr.device};
    default: return {PointerInfo::Kind::kUnregistered, -1};
  }
}

Problem validate_problem(const BmmFp8Args& args, const DeviceInfo& device) {
  FP8GEMM_REQUIRE(device.compute_capability() >= 89, kUnsupported, "GPU ", device.device, " (",
                  device.name, ") has compute capability ", device.cc_major, ".", device.cc_minor,
                  ": FP8 GEMMs need 8.9 or newer");
  FP8GEMM_REQUIRE(is_fp8(args.a_type), kInvalidArgument, "a_type must be e4m3 or e5m2, got ", args.a_type);
  FP8GEMM_REQUIRE(is_fp8(args.b_type), kInvalidArgument, "b_type must be e4m3 or e5m2, got ", args.b_type);
  FP8GEMM_REQUIRE(!(args.a_type == DType::kE5M2 && args.b_type == DType::kE5M2), kInvalidArgument,
                  "a_type and b_type are both e5m2: e5m2 x e5m2 is not supported (use e4m3 for one "
                  "operand)");
  FP8GEMM_REQUIRE(args.out_type == DType::kBF16 || args.out_type == DType::kFP16, kInvalidArgument,
                  "out_type must be bf16 or fp16, got ", args.out_type);

  FP8GEMM_REQUIRE(args.batch >= 0, kInvalidArgument, "batch must be >= 0, got ", args.batch);
  FP8GEMM_REQUIRE(args.m >= 0, kInvalidArgument, "m must be >= 0, got ", args.m);
  FP8GEMM_REQUIRE(args.n > 0, kInvalidArgument, "n must be positive, got ", args.n);
  FP8GEMM_REQUIRE(args.k > 0, kInvalidArgument, "k must be positive, got ", args.k);
  FP8GEMM_REQUIRE(args.k % 16 == 0, kInvalidArgument,
                  "k must be a multiple of 16 (rows of A and B are read in 16-byte vectors), got ", args.k);
  FP8GEMM_REQUIRE(args.n % 16 == 0, kInvalidArgument,
                  "n must be a multiple of 16 (FP8 tensor-core tiles and 16-byte output rows), got ", args.n);
  for (auto [what, v] : {std::pair<const char*, int64_t>{"batch", args.batch}, {"m", args.m},
                         {"n", args.n}, {"k", args.k}})
    require_fits_int32(what, v);
  // The weights are one call's operand; the activations and the output may be split by rows
  // (max_call_rows). Products of two int32 values fit in int64.
  require_fits_int32("n*k (batch stride of B)", args.n * args.k);

  Problem p;
  p.batch = args.batch;
  p.m = args.m;
  p.n = args.n;
  p.k = args.k;
  p.a_type = args.a_type;
  p.b_type = args.b_type;
  p.out_type = args.out_type;
  p.alignment = 16;
  return p;
}

Problem validate(const BmmFp8Args& args, const DeviceInfo& device, const PointerInspector& inspect) {
  const Problem p = validate_problem(args, device);
  if (p.empty()) return p;  // nothing is read or written: pointers may be null

  require_device_pointer("a", args.a, device, inspect);
  require_device_pointer("b", args.b, device, inspect);
  require_device_pointer("a_scale", args.a_scale, device, inspect);
  require_device_pointer("b_scale", args.b_scale, device, inspect);
  require_device_pointer("out", args.out, device, inspect);
  require_aligned("a", args.a);
  require_aligned("b", args.b);
  require_aligned("out", args.out);
  FP8GEMM_REQUIRE(reinterpret_cast<uintptr_t>(args.a_scale) % 4 == 0, kInvalidArgument,
                  "a_scale must be 4-byte aligned (a float32)");
  FP8GEMM_REQUIRE(reinterpret_cast<uintptr_t>(args.b_scale) % 4 == 0, kInvalidArgument,
                  "b_scale must be 4-byte aligned (a float32)");

  auto align_of = [](const void* ptr) {
    const auto addr = reinterpret_cast<uintptr_t>(ptr);
    return addr % 16 == 0 ? 16 : addr % 8 == 0 ? 8 : 4;
  };
  Problem checked = p;
  checked.scale_alignment = std::min(align_of(args.a_scale), align_of(args.b_scale));

  const size_t a_bytes = size_t(p.batch * p.m * p.k), b_bytes = size_t(p.batch * p.n * p.k);
  const size_t out_bytes = size_t(p.batch * p.m * p.n) * dtype_bytes(p.out_type);
  FP8GEMM_REQUIRE(!overlaps(args.out, out_bytes, args.a, a_bytes), kInvalidArgument,
                  "out overlaps a: the output must not alias an input");
  FP8GEMM_REQUIRE(!overlaps(args.out, out_bytes, args.b, b_bytes), kInvalidArgument,
                  "out overlaps b: the output must not alias an input");
  FP8GEMM_REQUIRE(!overlaps(args.out, out_bytes, args.a_scale, 4) &&
                      !overlaps(args.out, out_bytes, args.b_scale, 4),
                  kInvalidArgument, "out overlaps a_scale or b_scale: the output must not alias an input");
  return checked;
}

Problem validate(const LinearArgs& args, const DeviceInfo& device, const PointerInspector& inspect) {
  FP8GEMM_REQUIRE(args.x_type == DType::kBF16 || args.x_type == DType::kFP16, kInvalidArgument,
                  "x_type must be bf16 or fp16 (the activations the layer quantizes), got ", args.x_type);
  FP8GEMM_REQUIRE(is_fp8(args.w_type), kInvalidArgument, "w_type must be e4m3 or e5m2, got ", args.w_type);
  const bool dynamic = args.scale == ActivationScale::kDynamic;
  BmmFp8Args gemm;  // the GEMM on the quantized activations, which live in the scratch
  gemm.a = args.scratch;
  gemm.b = args.w;
  gemm.a_scale = args.x_scale;
  gemm.b_scale = args.w_scale;
  gemm.out = args.out;
  gemm.m = args.m, gemm.n = args.n, gemm.k = args.k;
  gemm.a_type = DType::kE4M3, gemm.b_type = args.w_type, gemm.out_type = args.out_type;
  // The layer as one problem: its GEMM on the quantized activations with the quantization before.
  const auto as_layer = [&](Problem q) {
    q.bias = args.bias != nullptr;
    q.prologue = dynamic ? Problem::Prologue::kQuantizeDynamic : Problem::Prologue::kQuantizeStatic;
    q.x_type = args.x_type;
    return q;
  };
  Problem p = validate_problem(gemm, device);
  if (p.empty()) {
    // Nothing is read or written, but a dynamic scale (that of an empty x).
    if (dynamic) require_device_pointer("x_scale", args.x_scale, device, inspect);
    return as_layer(p);
  }
  // Named as the layer's arguments, before validate() speaks of the GEMM's a and a_scale.
  for (const auto& [name, ptr] : {std::pair<const char*, const void*>{"x", args.x}, {"w", args.w},
                                   {"w_scale", args.w_scale}, {"x_scale", args.x_scale}, {"out", args.out},
                                   {"scratch", args.scratch}})
    require_device_pointer(name, ptr, device, inspect);
  for (const auto& [name, ptr] : {std::pair<const char*, const void*>{"x", args.x}, {"w", args.w}, {"out", args.out},
                                   {"scratch", args.scratch}})
    require_aligned(name, ptr);
  FP8GEMM_REQUIRE(reinterpret_cast<uintptr_t>(args.x_scale) % 4 == 0, kInvalidArgument,
                  "x_scale must be 4-byte aligned (a float32)");
  FP8GEMM_REQUIRE(reinterpret_cast<uintptr_t>(args.w_scale) % 4 == 0, kInvalidArgument,
                  "w_scale must be 4-byte aligned (a float32)");
  const size_t x_bytes = size_t(p.m * p.k) * dtype_bytes(args.x_type);
  const size_t fp8_bytes = size_t(p.m * p.k);
  const size_t out_bytes = size_t(p.m * p.n) * dtype_bytes(p.out_type);
  const size_t w_bytes = size_t(p.n * p.k);
  const size_t bias_bytes = size_t(p.n) * dtype_bytes(p.out_type);
  using Span = std::pair<const char*, std::pair<const void*, size_t>>;
  for (const auto& [name, span] : {Span{"scratch", {args.scratch, fp8_bytes}}, Span{"w", {args.w, w_bytes}},
                                   Span{"w_scale", {args.w_scale, 4}}, Span{"x_scale", {args.x_scale, 4}}})
    FP8GEMM_REQUIRE(!overlaps(args.out, out_bytes, span.first, span.second), kInvalidArgument, "out overlaps ", name,
                    ": the output must not alias another argument");
  // The GEMM's own rules (its alignment classes among them) on pointers inspected above: no second
  // driver query for each.
  p = validate(gemm, device,
               [&device](const void*) { return PointerInfo{PointerInfo::Kind::kDevice, device.device}; });
  if (args.bias) {
    require_device_pointer("bias", args.bias, device, inspect);
    require_aligned("bias", args.bias);
    FP8GEMM_REQUIRE(!overlaps(args.out, out_bytes, args.bias, bias_bytes), kInvalidArgument,
                    "out overlaps bias: the output must not alias an input");
  }
  FP8GEMM_REQUIRE(!overlaps(args.out, out_bytes, args.x, x_bytes), kInvalidArgument,
                  "out overlaps x: the output must not alias an input");
  FP8GEMM_REQUIRE(!overlaps(args.scratch, fp8_bytes, args.x, x_bytes), kInvalidArgument,
                  "scratch overlaps x: the quantized activations must not overwrite the activations");
  const Span written_by_quantize[] = {
      {"w", {args.w, w_bytes}}, {"w_scale", {args.w_scale, 4}}, {"bias", {args.bias, bias_bytes}}};
  for (const auto& [name, span] : written_by_quantize)
    FP8GEMM_REQUIRE(!span.first || !overlaps(args.scratch, fp8_bytes, span.first, span.second), kInvalidArgument,
                    "scratch overlaps ", name, ": the quantized activations must not overwrite an input");
  if (dynamic) {
    const Span read[] = {
        {"x", {args.x, x_bytes}},       {"w", {args.w, w_bytes}},           {"w_scale", {args.w_scale, 4}},
        {"bias", {args.bias, bias_bytes}}, {"scratch", {args.scratch, fp8_bytes}}, {"out", {args.out, out_bytes}}};
    for (const auto& [name, span] : read)
      FP8GEMM_REQUIRE(!span.first || !overlaps(args.x_scale, 4, span.first, span.second), kInvalidArgument,
                      "x_scale overlaps ", name, ": a dynamic x_scale is written and must not alias another argument");
  } else {
    FP8GEMM_REQUIRE(!overlaps(args.scratch, fp8_bytes, args.x_scale, 4), kInvalidArgument,
                    "scratch overlaps x_scale: the quantized activations must not overwrite an input");
  }
  return as_layer(p);
}

}  // namespace fp8gemm
