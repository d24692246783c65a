// Every validation rule of docs/design.md "Semantics", table-driven, with a fake pointer inspector
// so it runs without a GPU. Each case checks the error kind and that the message names the argument.
#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fp8gemm/row_chunks.h"
#include "core/validate.h"
#include "fake_device.h"

namespace fp8gemm {
namespace {

using testing::fake_inspect;
DeviceInfo h200() { return testing::fake_h200(); }

const void* at(uintptr_t a) { return reinterpret_cast<const void*>(a); }

BmmFp8Args valid_args() {
  BmmFp8Args a;
  a.batch = 2, a.m = 16, a.n = 256, a.k = 512;
  a.a = at(0x10000000);                       // 2*16*512 = 16 KiB
  a.b = at(0x10100000);                       // 2*256*512 = 256 KiB
  a.out = const_cast<void*>(at(0x10200000));  // 2*16*256*2 = 16 KiB
  a.a_scale = static_cast<const float*>(at(0x10300000));
  a.b_scale = static_cast<const float*>(at(0x10300004));
  return a;
}

struct Case {
  const char* name;
  std::function<void(BmmFp8Args&, DeviceInfo&)> mutate;
  ErrorKind kind;
  const char* message_part;  // the argument and the rule must both be named
};

class ValidateTest : public ::testing::TestWithParam<Case> {};

TEST_P(ValidateTest, RejectsWithClearError) {
  const Case& c = GetParam();
  BmmFp8Args args = valid_args();
  DeviceInfo dev = h200();
  c.mutate(args, dev);
  try {
    validate(args, dev, fake_inspect);
    FAIL() << c.name << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), c.kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos)
        << c.name << ": message '" << e.what() << "' lacks '" << c.message_part << "'";
  }
}

const Case kCases[] = {
    {"negative batch", [](BmmFp8Args& a, DeviceInfo&) { a.batch = -1; }, ErrorKind::kInvalidArgument, "batch must be >= 0"},
    {"negative m", [](BmmFp8Args& a, DeviceInfo&) { a.m = -3; }, ErrorKind::kInvalidArgument, "m must be >= 0"},
    {"zero n", [](BmmFp8Args& a, DeviceInfo&) { a.n = 0; }, ErrorKind::kInvalidArgument, "n must be positive"},
    {"negative k", [](BmmFp8Args& a, DeviceInfo&) { a.k = -16; }, ErrorKind::kInvalidArgument, "k must be positive"},
    {"k not multiple of 16", [](BmmFp8Args& a, DeviceInfo&) { a.k = 520; }, ErrorKind::kInvalidArgument, "k must be a multiple of 16"},
    {"n not multiple of 16", [](BmmFp8Args& a, DeviceInfo&) { a.n = 250; }, ErrorKind::kInvalidArgument, "n must be a multiple of 16"},
    {"e5m2 x e5m2", [](BmmFp8Args& a, DeviceInfo&) { a.a_type = a.b_type = DType::kE5M2; }, ErrorKind::kInvalidArgument, "e5m2 x e5m2 is not supported"},
    {"a not fp8", [](BmmFp8Args& a, DeviceInfo&) { a.a_type = DType::kBF16; }, ErrorKind::kInvalidArgument, "a_type must be e4m3 or e5m2"},
    {"b not fp8", [](BmmFp8Args& a, DeviceInfo&) { a.b_type = DType::kFP16; }, ErrorKind::kInvalidArgument, "b_type must be e4m3 or e5m2"},
    {"out fp8", [](BmmFp8Args& a, DeviceInfo&) { a.out_type = DType::kE4M3; }, ErrorKind::kInvalidArgument, "out_type must be bf16 or fp16"},
    {"null a", [](BmmFp8Args& a, DeviceInfo&) { a.a = nullptr; }, ErrorKind::kInvalidArgument, "a is null"},
    {"null b", [](BmmFp8Args& a, DeviceInfo&) { a.b = nullptr; }, ErrorKind::kInvalidArgument, "b is null"},
    {"null out", [](BmmFp8Args& a, DeviceInfo&) { a.out = nullptr; }, ErrorKind::kInvalidArgument, "out is null"},
    {"null a_scale", [](BmmFp8Args& a, DeviceInfo&) { a.a_scale = nullptr; }, ErrorKind::kInvalidArgument, "a_scale is null"},
    {"null b_scale", [](BmmFp8Args& a, DeviceInfo&) { a.b_scale = nullptr; }, ErrorKind::kInvalidArgument, "b_scale is null"},
    {"a in host memory", [](BmmFp8Args& a, DeviceInfo&) { a.a = at(0x50000000); }, ErrorKind::kInvalidArgument, "a points to unregistered host memory"},
    {"b in pinned host memory", [](BmmFp8Args& a, DeviceInfo&) { a.b = at(0x30000000); }, ErrorKind::kInvalidArgument, "b points to pinned host memory"},
    {"scale in host memory", [](BmmFp8Args& a, DeviceInfo&) { a.b_scale = static_cast<const float*>(at(0x50000004)); }, ErrorKind::kInvalidArgument, "b_scale points to unregistered host memory"},
    {"out on another GPU", [](BmmFp8Args& a, DeviceInfo&) { a.out = const_cast<void*>(at(0x20000000)); }, ErrorKind::kInvalidArgument, "out is memory of GPU 1"},
    {"a misaligned", [](BmmFp8Args& a, DeviceInfo&) { a.a = at(0x10000008); }, ErrorKind::kInvalidArgument, "a must be 16-byte aligned"},
    {"b misaligned", [](BmmFp8Args& a, DeviceInfo&) { a.b = at(0x10100004); }, ErrorKind::kInvalidArgument, "b must be 16-byte aligned"},
    {"out misaligned", [](BmmFp8Args& a, DeviceInfo&) { a.out = const_cast<void*>(at(0x10200002)); }, ErrorKind::kInvalidArgument, "out must be 16-byte aligned"},
    {"scale misaligned", [](BmmFp8Args& a, DeviceInfo&) { a.a_scale = static_cast<const float*>(at(0x10300002)); }, ErrorKind::kInvalidArgument, "a_scale must be 4-byte aligned"},
    {"out overlaps a", [](BmmFp8Args& a, DeviceInfo&) { a.out = const_cast<void*>(at(0x10000010)); }, ErrorKind::kInvalidArgument, "out overlaps a"},
    {"out overlaps b", [](BmmFp8Args& a, DeviceInfo&) { a.out = const_cast<void*>(at(0x10100000 + 0x100)); }, ErrorKind::kInvalidArgument, "out overlaps b"},
    {"out overlaps a scale", [](BmmFp8Args& a, DeviceInfo&) { a.a_scale = static_cast<const float*>(at(0x10200010)); }, ErrorKind::kInvalidArgument, "out overlaps a_scale or b_scale"},
    {"n*k overflows int32", [](BmmFp8Args& a, DeviceInfo&) { a.n = 1 << 16; a.k = 1 << 16; }, ErrorKind::kInvalidArgument, "n*k (batch stride of B)"},
    {"m above int32", [](BmmFp8Args& a, DeviceInfo&) { a.m = int64_t(1) << 32; }, ErrorKind::kInvalidArgument, "m = 4294967296 exceeds 2^31-1"},
    {"batch above int32", [](BmmFp8Args& a, DeviceInfo&) { a.batch = int64_t(1) << 31; }, ErrorKind::kInvalidArgument, "batch = 2147483648 exceeds 2^31-1"},
    {"compute capability 8.0", [](BmmFp8Args&, DeviceInfo& d) { d.cc_major = 8; d.cc_minor = 0; d.name = "A100"; }, ErrorKind::kUnsupported, "compute capability 8.0: FP8 GEMMs need 8.9 or newer"},
};

INSTANTIATE_TEST_SUITE_P(EveryRule, ValidateTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string s = info.param.name;
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

TEST(Validate, AcceptsValidArgsAndReportsProblem) {
  const Problem p = validate(valid_args(), h200(), fake_inspect);
  EXPECT_EQ(p.batch, 2);
  EXPECT_EQ(p.m, 16);
  EXPECT_EQ(p.n, 256);
  EXPECT_EQ(p.k, 512);
  EXPECT_EQ(p.alignment, 16);
}

TEST(Validate, AcceptsEveryAllowedTypeCombination) {
  for (DType a : {DType::kE4M3, DType::kE5M2})
    for (DType b : {DType::kE4M3, DType::kE5M2})
      for (DType o : {DType::kBF16, DType::kFP16}) {
        if (a == DType::kE5M2 && b == DType::kE5M2) continue;
        BmmFp8Args args = valid_args();
        args.a_type = a, args.b_type = b, args.out_type = o;
        EXPECT_NO_THROW(validate(args, h200(), fake_inspect)) << to_string(a) << "x" << to_string(b);
      }
}

TEST(Validate, EmptyProblemsAreValidNoOpsEvenWithNullPointers) {
  for (auto [batch, m] : {std::pair<int64_t, int64_t>{0, 16}, {2, 0}, {0, 0}}) {
    BmmFp8Args args;
    args.batch = batch, args.m = m, args.n = 256, args.k = 512;
    const Problem p = validate(args, h200(), fake_inspect);
    EXPECT_TRUE(p.empty());
  }
}

TEST(Validate, EmptyProblemStillChecksTypesAndDims) {
  BmmFp8Args args;
  args.batch = 0, args.m = 0, args.n = 100, args.k = 512;
  EXPECT_THROW(validate(args, h200(), fake_inspect), Error);
  args.n = 256;
  args.a_type = args.b_type = DType::kE5M2;
  EXPECT_THROW(validate(args, h200(), fake_inspect), Error);
}

TEST(Validate, AdjacentButNotOverlappingBuffersPass) {
  BmmFp8Args args = valid_args();
  args.out = const_cast<void*>(at(0x10000000 + 2 * 16 * 512));  // right after A
  EXPECT_NO_THROW(validate(args, h200(), fake_inspect));
}

}  // namespace
}  // namespace fp8gemm

namespace fp8gemm {
namespace {

TEST(Validate, RecordsScaleAlignmentForBackendsThatNeedIt) {
  BmmFp8Args args = valid_args();  // scales at 0x10300000 and +4
  EXPECT_EQ(validate(args, h200(), fake_inspect).scale_alignment, 4);
  args.b_scale = static_cast<const float*>(at(0x10300008));
  EXPECT_EQ(validate(args, h200(), fake_inspect).scale_alignment, 8);
  args.b_scale = static_cast<const float*>(at(0x10300010));
  EXPECT_EQ(validate(args, h200(), fake_inspect).scale_alignment, 16);
}

// m*k or m*n past 2^31-1 (a long prefill through a wide layer) is valid: the call runs as several
// on whole rows of at most max_call_rows, A and out moved to each part's first row.
TEST(Validate, LargeMRunsAsPartsOnWholeRows) {
  const DeviceInfo dev = h200();
  BmmFp8Args args;
  args.m = 37450, args.n = 57344, args.k = 8192;  // m*n = 2,147,532,800
  const Problem p = validate_problem(args, dev);
  EXPECT_EQ(p.m, 37450);
  EXPECT_EQ(max_call_rows(57344, 8192), 37440);  // 2^31-1 / 57344 = 37449, down to a multiple of 64
  EXPECT_EQ(max_call_rows(16, 16), 134217664);
  EXPECT_EQ(max_call_rows(int64_t(1) << 30, 16), 1);
  EXPECT_TRUE(splits_rows(p));
  Problem small = p;
  small.m = 37440;
  EXPECT_FALSE(splits_rows(small));
  // What a backend, the tuner or a benchmark is given directly must be one call.
  EXPECT_NO_THROW(require_one_call(small));
  try {
    require_one_call(p);
    ADD_FAILURE() << "a problem of more rows than one call takes passed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("one backend call takes at most 37440 rows"), std::string::npos) << e.what();
  }

  Problem batched = p;
  batched.batch = 2;
  std::vector<std::pair<int64_t, int64_t>> parts;  // (rows, A offset in bytes); out offset checked inline
  GemmArgs g;
  g.a = reinterpret_cast<const void*>(uintptr_t(0x10000000));
  g.out = reinterpret_cast<void*>(uintptr_t(0x80000000));
  for_each_row_chunk(batched, g, [&](const Problem& part, const GemmArgs& a) {
    EXPECT_EQ(part.batch, 1);
    EXPECT_LE(part.m * part.n, int64_t(INT32_MAX));
    const int64_t a_off = int64_t(uintptr_t(a.a) - 0x10000000), out_off = int64_t(uintptr_t(a.out) - 0x80000000);
    EXPECT_EQ(out_off, a_off / 8192 * 57344 * 2);  // the same first row, bf16 out
    parts.push_back({part.m, a_off});
  });
  const std::vector<std::pair<int64_t, int64_t>> want = {
      {37440, 0}, {10, int64_t(37440) * 8192}, {37440, int64_t(37450) * 8192}, {10, int64_t(37450 + 37440) * 8192}};
  EXPECT_EQ(parts, want);
  int calls = 0;
  for_each_row_chunk(small, g, [&](const Problem& part, const GemmArgs& a) {
    EXPECT_EQ(part, small);
    EXPECT_EQ(a.a, g.a);
    ++calls;
  });
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace fp8gemm
