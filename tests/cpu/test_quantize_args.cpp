// The public quantization's argument rules (include/fp8gemm/quantize.h), checked before any GPU
// work (so they run without a GPU), and validation with pointers the caller places on the device
// (PointerPlacement::kOnDevice, the PyTorch op's path), which asks the driver nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "fake_device.h"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/quantize.h"
#include "quantize/quantize.h"

namespace fp8gemm {
namespace {

void* at(uintptr_t a) { return reinterpret_cast<void*>(a); }

QuantizeArgs valid_quantize() {
  QuantizeArgs q;
  q.x = at(0x10000000);
  q.out = at(0x10100000);
  q.scale = static_cast<float*>(at(0x10200000));
  q.count = 4096;
  return q;
}

void expect_rejected(const std::function<void(QuantizeArgs&)>& mutate, const std::string& message_part) {
  QuantizeArgs q = valid_quantize();
  mutate(q);
  try {
    quantize_fp8(q);
    ADD_FAILURE() << "no error; wanted '" << message_part << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos) << e.what();
  }
}

TEST(QuantizeArgs, RejectsBeforeAnyGpuWork) {
  expect_rejected([](QuantizeArgs& q) { q.x_type = DType::kE4M3; }, "x_type must be bf16 or fp16");
  expect_rejected([](QuantizeArgs& q) { q.count = 12; }, "count must be a non-negative multiple of 8");
  expect_rejected([](QuantizeArgs& q) { q.count = -8; }, "count must be a non-negative multiple of 8");
  expect_rejected([](QuantizeArgs& q) { q.scale = nullptr; }, "scale is null");
  expect_rejected([](QuantizeArgs& q) { q.x = nullptr; }, "x is null");
  expect_rejected([](QuantizeArgs& q) { q.out = nullptr; }, "out is null");
  expect_rejected([](QuantizeArgs& q) { q.x = at(0x10000008); }, "x must be 16-byte aligned");
  expect_rejected([](QuantizeArgs& q) { q.out = at(0x10100004); }, "out must be 8-byte aligned");
}

TEST(QuantizeArgs, ScratchIsTheDynamicPathsPartials) {
  EXPECT_EQ(quantize_scratch_bytes(int64_t(1) << 24, ActivationScale::kStatic, 132), size_t(0));
  EXPECT_EQ(quantize_scratch_bytes(4096, ActivationScale::kDynamic, 132), size_t(0));  // one kernel
  EXPECT_EQ(quantize_scratch_bytes(int64_t(1) << 24, ActivationScale::kDynamic, 132),
            quantize::dynamic_scratch_bytes(int64_t(1) << 24, 132));
  EXPECT_GT(quantize_scratch_bytes(int64_t(1) << 24, ActivationScale::kDynamic, 132), size_t(0));
  EXPECT_THROW(quantize_scratch_bytes(-1, ActivationScale::kDynamic, 132), Error);
  EXPECT_THROW(quantize_scratch_bytes(8, ActivationScale::kDynamic, 0), Error);
}

BmmFp8Args valid_gemm() {
  BmmFp8Args a;
  a.m = 16, a.n = 256, a.k = 512;
  a.a = at(0x10000000);
  a.b = at(0x10100000);
  a.out = at(0x10200000);
  a.a_scale = static_cast<const float*>(at(0x10300000));
  a.b_scale = static_cast<const float*>(at(0x10300010));
  return a;
}

TEST(PointerPlacement, OnDeviceAsksNothingAndKeepsTheOtherPointerRules) {
  const DeviceInfo device = testing::fake_h200();
  // Addresses no driver knows: accepted only because the caller vouches for them.
  EXPECT_EQ(validate(valid_gemm(), device, PointerPlacement::kOnDevice).m, 16);
  BmmFp8Args null_a = valid_gemm();
  null_a.a = nullptr;
  EXPECT_THROW(validate(null_a, device, PointerPlacement::kOnDevice), Error);
  BmmFp8Args overlap = valid_gemm();
  overlap.out = const_cast<void*>(overlap.a);
  EXPECT_THROW(validate(overlap, device, PointerPlacement::kOnDevice), Error);

  LinearArgs layer;
  layer.m = 16, layer.n = 256, layer.k = 512;
  layer.x = at(0x10000000);
  layer.w = at(0x10100000);
  layer.out = at(0x10200000);
  layer.scratch = at(0x10300000);
  layer.w_scale = static_cast<const float*>(at(0x10500000));
  layer.x_scale = static_cast<float*>(at(0x10500010));
  EXPECT_EQ(validate(layer, device, PointerPlacement::kOnDevice).k, 512);
  layer.scratch = nullptr;
  EXPECT_THROW(validate(layer, device, PointerPlacement::kOnDevice), Error);
}

}  // namespace
}  // namespace fp8gemm
