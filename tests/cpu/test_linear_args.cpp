// The linear layer's argument rules (include/fp8gemm/linear.h, docs/linear.md "Arguments"),
// table-driven with a fake pointer inspector, the scratch size, and the quantization rule's host
// reference (core/quantize_rule.h) on the values where it is easiest to get wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/fp8_codec.h"
#include "core/quantize_rule.h"
#include "core/validate.h"
#include "fake_device.h"
#include "quantize/quantize.h"

namespace fp8gemm {
namespace {

using testing::fake_inspect;
DeviceInfo h200() { return testing::fake_h200(); }

void* at(uintptr_t a) { return reinterpret_cast<void*>(a); }

LinearArgs valid_args() {
  LinearArgs a;
  a.m = 16, a.n = 256, a.k = 512;
  a.x = at(0x10000000);        // 16*512*2 = 16 KiB
  a.w = at(0x10100000);        // 256*512 = 128 KiB
  a.out = at(0x10200000);      // 16*256*2 = 8 KiB
  a.scratch = at(0x10300000);  // 8 KiB of FP8 activations
  a.bias = at(0x10400000);
  a.w_scale = static_cast<const float*>(at(0x10500000));
  a.x_scale = static_cast<float*>(at(0x10500010));
  return a;
}

struct Case {
  const char* name;
  std::function<void(LinearArgs&)> mutate;
  const char* message_part;  // the argument and the rule
};

class LinearArgsTest : public ::testing::TestWithParam<Case> {};

TEST_P(LinearArgsTest, RejectsWithClearError) {
  const Case& c = GetParam();
  LinearArgs args = valid_args();
  c.mutate(args);
  try {
    validate(args, h200(), fake_inspect);
    FAIL() << c.name << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos)
        << c.name << ": message '" << e.what() << "' lacks '" << c.message_part << "'";
  }
}

const Case kCases[] = {
    {"x fp8", [](LinearArgs& a) { a.x_type = DType::kE4M3; }, "x_type must be bf16 or fp16"},
    {"w bf16", [](LinearArgs& a) { a.w_type = DType::kBF16; }, "w_type must be e4m3 or e5m2"},
    {"out fp8", [](LinearArgs& a) { a.out_type = DType::kE4M3; }, "out_type must be bf16 or fp16"},
    {"k not multiple of 16", [](LinearArgs& a) { a.k = 520; }, "k must be a multiple of 16"},
    {"n not multiple of 16", [](LinearArgs& a) { a.n = 250; }, "n must be a multiple of 16"},
    {"negative m", [](LinearArgs& a) { a.m = -1; }, "m must be >= 0"},
    {"m beyond 32 bits", [](LinearArgs& a) { a.m = int64_t(1) << 31; }, "m = 2147483648 exceeds 2^31-1"},
    {"null x", [](LinearArgs& a) { a.x = nullptr; }, "x is null"},
    {"x on the host", [](LinearArgs& a) { a.x = at(0x50000000); }, "x points to unregistered host memory"},
    {"x on another GPU", [](LinearArgs& a) { a.x = at(0x20000000); }, "x is memory of GPU 1"},
    {"null w", [](LinearArgs& a) { a.w = nullptr; }, "w is null"},
    {"null w_scale", [](LinearArgs& a) { a.w_scale = nullptr; }, "w_scale is null"},
    {"null x_scale", [](LinearArgs& a) { a.x_scale = nullptr; }, "x_scale is null"},
    {"null out", [](LinearArgs& a) { a.out = nullptr; }, "out is null"},
    {"null scratch", [](LinearArgs& a) { a.scratch = nullptr; }, "scratch is null"},
    {"bias on the host", [](LinearArgs& a) { a.bias = at(0x50000000); }, "bias points to unregistered host memory"},
    {"x misaligned", [](LinearArgs& a) { a.x = at(0x10000008); }, "x must be 16-byte aligned"},
    {"w misaligned", [](LinearArgs& a) { a.w = at(0x10100004); }, "w must be 16-byte aligned"},
    {"out misaligned", [](LinearArgs& a) { a.out = at(0x10200002); }, "out must be 16-byte aligned"},
    {"scratch misaligned", [](LinearArgs& a) { a.scratch = at(0x10300008); }, "scratch must be 16-byte aligned"},
    {"bias misaligned", [](LinearArgs& a) { a.bias = at(0x10400002); }, "bias must be 16-byte aligned"},
    {"x_scale misaligned", [](LinearArgs& a) { a.x_scale = static_cast<float*>(at(0x10500012)); },
     "x_scale must be 4-byte aligned"},
    {"out over x", [](LinearArgs& a) { a.out = at(0x10000000); }, "out overlaps x"},
    {"out over scratch", [](LinearArgs& a) { a.out = at(0x10300000); }, "out overlaps scratch"},
    {"out over bias", [](LinearArgs& a) { a.out = at(0x10400000); }, "out overlaps bias"},
    {"out over w", [](LinearArgs& a) { a.out = at(0x10100000); }, "out overlaps w"},
    {"scratch over x", [](LinearArgs& a) { a.scratch = at(0x10000100); }, "scratch overlaps x"},
    {"scratch over w", [](LinearArgs& a) { a.scratch = at(0x10100000); }, "scratch overlaps w"},
    {"scratch over a static x_scale", [](LinearArgs& a) { a.scratch = at(0x10500000); }, "scratch overlaps"},
    {"dynamic x_scale inside x",
     [](LinearArgs& a) {
       a.scale = ActivationScale::kDynamic;
       a.x_scale = static_cast<float*>(at(0x10000040));
     },
     "x_scale overlaps x"},
    {"dynamic x_scale inside out",
     [](LinearArgs& a) {
       a.scale = ActivationScale::kDynamic;
       a.x_scale = static_cast<float*>(at(0x10200040));
     },
     "out overlaps x_scale"},
    {"empty dynamic call without x_scale",
     [](LinearArgs& a) {
       a.m = 0;
       a.scale = ActivationScale::kDynamic;
       a.x_scale = nullptr;
     },
     "x_scale is null"},
};

INSTANTIATE_TEST_SUITE_P(Rules, LinearArgsTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(LinearArgs, ValidArgumentsGiveTheGemmOnTheQuantizedActivations) {
  LinearArgs args = valid_args();
  Problem p = validate(args, h200(), fake_inspect);
  EXPECT_EQ(p.m, 16);
  EXPECT_EQ(p.n, 256);
  EXPECT_EQ(p.k, 512);
  EXPECT_EQ(p.a_type, DType::kE4M3);
  EXPECT_TRUE(p.bias);
  EXPECT_EQ(p.prologue, Problem::Prologue::kQuantizeStatic);
  EXPECT_EQ(p.x_type, DType::kBF16);
  args.bias = nullptr;
  args.w_type = DType::kE5M2;
  args.out_type = DType::kFP16;
  args.x_type = DType::kFP16;
  args.scale = ActivationScale::kDynamic;
  p = validate(args, h200(), fake_inspect);
  EXPECT_FALSE(p.bias);
  EXPECT_EQ(p.prologue, Problem::Prologue::kQuantizeDynamic);
  EXPECT_EQ(p.x_type, DType::kFP16);
  EXPECT_EQ(p.b_type, DType::kE5M2);
  EXPECT_EQ(p.out_type, DType::kFP16);
}

TEST(LinearArgs, AnEmptyCallNeedsNoPointersButADynamicScale) {
  LinearArgs args;
  args.m = 0, args.n = 256, args.k = 512;
  EXPECT_TRUE(validate(args, h200(), fake_inspect).empty());
  args.scale = ActivationScale::kDynamic;
  args.x_scale = static_cast<float*>(at(0x10500010));
  EXPECT_TRUE(validate(args, h200(), fake_inspect).empty());
}

TEST(LinearArgs, ScratchHoldsTheQuantizedActivationsAndTheDynamicPartials) {
  EXPECT_EQ(linear_scratch_bytes(16, 4096, ActivationScale::kStatic, 132), size_t(16 * 4096));
  EXPECT_EQ(linear_scratch_bytes(1, 16, ActivationScale::kStatic, 132), size_t(256));  // padded to 256 bytes
  EXPECT_EQ(linear_scratch_bytes(0, 4096, ActivationScale::kDynamic, 132), size_t(0));
  // Small x: the one-kernel path needs no partials; large x: one word per block.
  EXPECT_EQ(linear_scratch_bytes(4, 4096, ActivationScale::kDynamic, 132), size_t(4 * 4096));
  const quantize::DynamicPlan large = quantize::dynamic_plan(4096 * 4096, 132);
  EXPECT_FALSE(large.one_kernel);
  EXPECT_EQ(linear_scratch_bytes(4096, 4096, ActivationScale::kDynamic, 132),
            size_t(4096 * 4096) + size_t(large.blocks) * 4);
  EXPECT_THROW(linear_scratch_bytes(-1, 16, ActivationScale::kStatic, 132), Error);
}

TEST(LinearArgs, DynamicPlanUsesOneBlockWhileItHoldsX) {
  using quantize::dynamic_plan;
  EXPECT_TRUE(dynamic_plan(0, 132).one_kernel);
  EXPECT_EQ(dynamic_plan(8, 132).vectors, 1);
  EXPECT_EQ(dynamic_plan(2 * 4096, 132).vectors, 1);  // 1024 threads of 8 elements
  EXPECT_EQ(dynamic_plan(2 * 4096 + 8, 132).vectors, 2);
  EXPECT_EQ(dynamic_plan(8 * 4096, 132).vectors, 4);
  EXPECT_EQ(dynamic_plan(8 * 4096, 132).blocks, 1);
  EXPECT_FALSE(dynamic_plan(8 * 4096 + 8, 132).one_kernel);  // then partial maxima, one word a block
  EXPECT_EQ(dynamic_plan(16 * 4096, 132).blocks, 32);
  EXPECT_LE(dynamic_plan(int64_t(1) << 30, 132).blocks, 1024);
}

TEST(QuantizeRule, ScaleOfAmax) {
  EXPECT_EQ(scale_of_amax(448.0f), 1.0f);
  EXPECT_EQ(scale_of_amax(0.0f), 1e-12f / 448.0f);  // an all-zero x: never a division by zero
  EXPECT_EQ(scale_of_amax(1e-13f), 1e-12f / 448.0f);
  EXPECT_TRUE(std::isnan(scale_of_amax(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isinf(scale_of_amax(std::numeric_limits<float>::infinity())));
  // A division rounded once, not a multiplication by a rounded 1/448 (they differ here).
  const float a = 3.0f;
  EXPECT_EQ(scale_of_amax(a), a / 448.0f);
}

std::vector<uint16_t> bf16(std::initializer_list<float> values) {
  std::vector<uint16_t> out;
  for (float v : values) out.push_back(float_to_bf16(v));
  return out;
}

TEST(QuantizeRule, AmaxPropagatesNaNAndIgnoresSign) {
  const auto x = bf16({1.0f, -6.5f, 2.0f, 0.0f});
  EXPECT_EQ(amax_reference(x.data(), DType::kBF16, x.size()), 6.5f);
  const auto with_nan = bf16({1.0f, std::numeric_limits<float>::quiet_NaN(), 1e30f});
  EXPECT_TRUE(std::isnan(amax_reference(with_nan.data(), DType::kBF16, with_nan.size())));
  EXPECT_EQ(amax_reference(x.data(), DType::kBF16, 0), 0.0f);
  EXPECT_THROW(amax_reference(x.data(), DType::kE4M3, 1), Error);
}

TEST(QuantizeRule, SaturatesRoundsToNearestEvenAndKeepsNaN) {
  // scale 1: 448 and beyond saturate (infinity too; 464 and up would be NaN in a plain cast);
  // 432 is the tie between 416 (1.101b x 2^8) and 448 (1.110b x 2^8): to the even mantissa, 448.
  const float inf = std::numeric_limits<float>::infinity();
  const auto x = bf16({448.0f, 464.0f, 1e6f, inf, -inf, 432.0f, 0.0f, -0.0f});
  std::vector<uint8_t> q(x.size());
  quantize_reference(x.data(), DType::kBF16, x.size(), 1.0f, q.data());
  EXPECT_EQ(q[0], 0x7E);  // 448
  EXPECT_EQ(q[1], 0x7E);
  EXPECT_EQ(q[2], 0x7E);
  EXPECT_EQ(q[3], 0x7E);
  EXPECT_EQ(q[4], 0xFE);
  EXPECT_EQ(fp8_decode(q[5], DType::kE4M3), 448.0f);
  EXPECT_EQ(q[6], 0x00);
  EXPECT_EQ(q[7], 0x80);
  const auto nan = bf16({std::numeric_limits<float>::quiet_NaN()});
  quantize_reference(nan.data(), DType::kBF16, 1, 1.0f, q.data());
  EXPECT_TRUE(std::isnan(fp8_decode(q[0], DType::kE4M3)));
}

TEST(QuantizeRule, DividesInFloat32) {
  // x / 3 rounded once in float32, then to e4m3: for every bf16 value, what the codec gives the
  // float32 quotient.
  std::vector<uint16_t> all(1 << 16);
  for (size_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
  std::vector<uint8_t> q(all.size());
  quantize_reference(all.data(), DType::kBF16, all.size(), 3.0f, q.data());
  for (size_t i = 0; i < all.size(); ++i) {
    const float v = bf16_to_float(all[i]) / 3.0f;
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(fp8_decode(q[i], DType::kE4M3))) << i;
    } else {
      ASSERT_EQ(q[i], fp8_encode(v, DType::kE4M3)) << i;
    }
  }
}

}  // namespace
}  // namespace fp8gemm
