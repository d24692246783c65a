// cudnn backend without a GPU: tactic names (round trip, canonical order, garbage refused with
// the rule), loading libcudnn (a missing file or a library that is not cuDNN gives the reason),
// and the backend's refusals on a device that cannot run it (DeviceInfo filled in by hand).
#include <gtest/gtest.h>

#include <string>

#include "backends/cudnn/cudnn_backend.h"
#include "backends/cudnn/cudnn_library.h"
#include "backends/cudnn/plan_name.h"
#include "fp8gemm/error.h"

namespace fp8gemm::cudnn {
namespace {

TEST(CudnnNames, RoundTripInKnobTypeOrder) {
  PlanConfig c;
  c.engine = 4;
  c.knobs = {{7, 3}, {2, 1}, {1000, 2}};  // stages, tile_size, a frontend-only knob
  const std::string name = format_config(c);
  EXPECT_EQ(name, "eng=4,tile_size=1,stages=3,k1000=2");
  const PlanConfig back = parse_config(name);
  EXPECT_EQ(back.engine, 4);
  ASSERT_EQ(back.knobs.size(), 3u);
  EXPECT_EQ(back.knobs[0], (std::pair<int64_t, int64_t>{2, 1}));
  EXPECT_EQ(format_config(back), name);
  EXPECT_EQ(parse_config("eng=0").engine, 0);
  EXPECT_TRUE(parse_config("eng=0").knobs.empty());
  EXPECT_EQ(knob_name(32), "tile_cga");
  EXPECT_EQ(knob_name(33), "k33");
}

void expect_refused(const std::string& config, const std::string& says) {
  try {
    parse_config(config);
    ADD_FAILURE() << "'" << config << "' was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << config;
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << config << ": " << e.what();
  }
}

TEST(CudnnNames, GarbageIsRefusedWithTheRule) {
  expect_refused("", "is not key=value");
  expect_refused("tile_size=1", "must start with eng=");
  expect_refused("eng=x", "engine id 'x' is not an integer");
  expect_refused("eng=-1", "must be >= 0");
  expect_refused("eng=1,colour=2", "unknown knob 'colour'");
  expect_refused("eng=1,stages=", "knob value '' is not an integer");
  expect_refused("eng=1,stages=2,stages=3", "given twice");
  expect_refused("eng=1,stages=2,tile_size=1", "write it as 'eng=1,tile_size=1,stages=2'");
  expect_refused("eng=1,k7=2", "write it as 'eng=1,stages=2'");
  expect_refused("eng=1,", "is not key=value");
}

TEST(CudnnLibrary, AMissingFileSaysWhatToInstall) {
  const Library lib = open_library("/nonexistent/libcudnn.so.9");
  EXPECT_FALSE(lib.verdict.ok);
  EXPECT_EQ(lib.handle, nullptr);
  EXPECT_NE(lib.verdict.reason.find("cannot load /nonexistent/libcudnn.so.9"), std::string::npos) << lib.verdict.reason;
  EXPECT_NE(lib.verdict.reason.find("FP8GEMM_CUDNN_LIBRARY"), std::string::npos) << lib.verdict.reason;
}

TEST(CudnnLibrary, ALibraryThatIsNotCudnnIsRefused) {
  const Library lib = open_library("libm.so.6");
  EXPECT_FALSE(lib.verdict.ok);
  EXPECT_NE(lib.verdict.reason.find("is not cuDNN"), std::string::npos) << lib.verdict.reason;
}

// Where the machine has cuDNN on the loader path (the development and CI machines do), the
// default name opens it and reads a 9.x version; elsewhere the test says why it skipped.
TEST(CudnnLibrary, TheDefaultLibraryOpensWhereInstalled) {
  const Library lib = open_library(library_name());
  if (!lib.verdict.ok) GTEST_SKIP() << lib.verdict.reason;
  EXPECT_NE(lib.handle, nullptr);
  EXPECT_GE(lib.version, 90000);
}

TEST(CudnnBackend, UnavailableBeforeHopperWithTheReason) {
  DeviceInfo ampere;
  ampere.name = "A100";
  ampere.cc_major = 8;
  ampere.cc_minor = 0;
  ampere.sm_count = 108;
  auto b = make_cudnn_backend(ampere, BackendOptions{});
  EXPECT_EQ(b->name(), "cudnn");
  EXPECT_FALSE(b->available().ok);
  EXPECT_NE(b->available().reason.find("compute capability 9.0+"), std::string::npos) << b->available().reason;
  Problem p;
  p.m = 16, p.n = 4096, p.k = 4096;
  EXPECT_TRUE(b->tactics(p).empty());
  EXPECT_FALSE(b->can_implement(p, Tactic{"cudnn", "eng=0"}).ok);
  EXPECT_NE(b->can_implement(p, Tactic{"cublaslt", "heuristic"}).reason.find("not a cudnn tactic"), std::string::npos);
  EXPECT_THROW(b->default_tactic(p), Error);
}

}  // namespace
}  // namespace fp8gemm::cudnn
