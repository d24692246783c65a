// The selector's timer and the keys it failed on, with fake backends and timers: a key whose
// measurement fails is measured once per process (not on every lazy call), and the timer's GPU
// buffers go when the last AutotuneScope ends, when tune() returns, and on request.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "fp8gemm/error.h"
#include "test_tune_fakes.h"
#include "tune/tuning_selector.h"
#include "tune/cache/warnings.h"

namespace fp8gemm::testing {
namespace {

using tuning::SelectorConfig;
using tuning::TuningSelector;

// A fake timer that counts its measurements and its own destruction, and throws when told to
// (an out-of-memory while allocating the weight copies, say).
struct CountingTimer : FakeTimer {
  std::atomic<int>* measures = nullptr;
  std::atomic<int>* destroyed = nullptr;
  bool out_of_memory = false;
  std::function<void()> on_measure;  // runs before each measurement (a test's hook)

  ~CountingTimer() override { ++*destroyed; }
  std::vector<Timing> measure(const Problem& p, const std::vector<Tactic>& c, const MeasureOptions& o) override {
    ++*measures;
    if (on_measure) on_measure();
    if (out_of_memory) throw Error(ErrorKind::kCuda, "cudaMalloc: out of memory");
    return FakeTimer::measure(p, c, o);
  }
};

struct TunerLifetimeTest : ::testing::Test {
  FakeBackend cublaslt{"cublaslt", {"enum0", "heur", "h1"}, "heur"};
  FakeBackend cutlass{"cutlass", {"c0", "c1"}, "c1"};
  std::atomic<int> measures{0}, made{0}, destroyed{0};
  bool out_of_memory = false;
  bool cannot_make = false;
  std::function<void()> on_measure;
  std::vector<std::string> warnings;
  tuning::WarningSink previous_sink;

  SelectorConfig config() {
    SelectorConfig c;
    c.backends = {&cublaslt, &cutlass};
    c.device.name = "Fake H200";
    c.device.cc_major = 9;
    c.make_timer = [this]() -> std::unique_ptr<Timer> {
      ++made;
      if (cannot_make) throw Error(ErrorKind::kCuda, "cudaStreamCreate: out of memory");
      return timer();
    };
    c.is_capturing = [](cudaStream_t) { return false; };
    return c;
  }
  std::unique_ptr<CountingTimer> timer() {
    auto t = std::make_unique<CountingTimer>();
    t->true_us = {{"cublaslt:heur", 10}, {"cublaslt:enum0", 12}, {"cublaslt:h1", 10.5}, {"cutlass:c0", 7},
                  {"cutlass:c1", 11}};
    t->measures = &measures;
    t->destroyed = &destroyed;
    t->out_of_memory = out_of_memory;
    t->on_measure = on_measure;
    return t;
  }
  void SetUp() override {
    tuning::reset_warnings();
    previous_sink = tuning::set_warning_sink([this](const std::string& w) { warnings.push_back(w); });
  }
  void TearDown() override {
    tuning::set_warning_sink(previous_sink);
    tuning::reset_warnings();
  }
};

// Issue 44: a lazily tuned key whose measurement threw was measured again on every call, so an
// out-of-memory during warm-up repeated forever.
TEST_F(TunerLifetimeTest, LazyTuningMeasuresAFailingKeyOnce) {
  SelectorConfig c = config();
  c.lazy = true;  // FP8GEMM_TUNE=1
  TuningSelector sel(c);
  out_of_memory = true;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(sel.select(problem(60 + i), "auto", nullptr), std::nullopt);  // bucket 64
  EXPECT_EQ(measures.load(), 1);
  EXPECT_EQ(sel.cache().size(), 0u);
  const auto failed = sel.failed_keys();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed.begin()->first, tuning::key_of(problem(64)).to_string());
  EXPECT_NE(failed.begin()->second.find("out of memory"), std::string::npos) << failed.begin()->second;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("out of memory"), std::string::npos) << warnings[0];
  EXPECT_EQ(destroyed.load(), 1) << "a timer that failed keeps no buffers";

  // Other keys are still tuned (with a timer that works again).
  out_of_memory = false;
  EXPECT_EQ(sel.select(problem(128), "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(sel.select(problem(64), "auto", nullptr), std::nullopt);  // still the default
}

TEST_F(TunerLifetimeTest, ATimerThatCannotBeMadeIsTriedOncePerKey) {
  SelectorConfig c = config();
  c.lazy = true;
  TuningSelector sel(c);
  cannot_make = true;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(sel.select(problem(64), "auto", nullptr), std::nullopt);
  EXPECT_EQ(made.load(), 1);
  ASSERT_EQ(sel.failed_keys().size(), 1u);
  EXPECT_NE(sel.failed_keys().begin()->second.find("cudaStreamCreate"), std::string::npos);
}

// An explicit tune reports a key that failed without measuring it again; retune measures it.
TEST_F(TunerLifetimeTest, TuneReportsAFailedKeyUntilRetune) {
  SelectorConfig c = config();
  c.lazy = true;
  TuningSelector sel(c);
  out_of_memory = true;
  ASSERT_EQ(sel.select(problem(64), "auto", nullptr), std::nullopt);
  out_of_memory = false;
  FakeTimer good;
  good.true_us = timer()->true_us;
  Decision d = sel.tune({problem(64)}, good, {}).front();
  EXPECT_EQ(good.measure_calls, 0);
  EXPECT_FALSE(d.measured);
  EXPECT_EQ(d.choice, "cublaslt:heur");
  EXPECT_NE(d.reason.find("failed earlier in this process"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("out of memory"), std::string::npos) << d.reason;

  TuneOptions retune;
  retune.retune = true;
  d = sel.tune({problem(64)}, good, retune).front();
  EXPECT_GT(good.measure_calls, 0);
  EXPECT_TRUE(d.measured);
  EXPECT_TRUE(sel.failed_keys().empty());
  EXPECT_EQ(sel.select(problem(64), "auto", nullptr)->name(), "cutlass:c0");
}

// A failure in an explicit tune is remembered too: lazy tuning does not measure the key again.
TEST_F(TunerLifetimeTest, AFailureInAnExplicitTuneIsNotRetriedLazily) {
  SelectorConfig c = config();
  c.lazy = true;
  TuningSelector sel(c);
  std::unique_ptr<CountingTimer> failing = timer();
  failing->out_of_memory = true;
  const Decision d = sel.tune({problem(64)}, *failing, {}).front();
  EXPECT_FALSE(d.measured);
  EXPECT_EQ(measures.load(), 1);
  EXPECT_EQ(sel.failed_keys().size(), 1u);
  EXPECT_EQ(sel.select(problem(64), "auto", nullptr), std::nullopt);
  EXPECT_EQ(made.load(), 0);
  EXPECT_EQ(measures.load(), 1);
}

// A backend that counts how often its tactics are listed.
struct CountingBackend : FakeBackend {
  using FakeBackend::FakeBackend;
  int listed = 0;
  std::vector<Tactic> tactics(const Problem& p) override {
    ++listed;
    return FakeBackend::tactics(p);
  }
};

// A key with nothing to measure (one tactic runs it) is not listed again on every lazy call.
TEST_F(TunerLifetimeTest, AKeyWithNothingToMeasureIsListedOnce) {
  CountingBackend only{"cublaslt", {"heur"}, "heur"};
  SelectorConfig c = config();
  c.backends = {&only};
  c.lazy = true;
  TuningSelector sel(c);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(sel.select(problem(64), "auto", nullptr), std::nullopt);
  EXPECT_EQ(only.listed, 1);
  EXPECT_EQ(measures.load(), 0);
  EXPECT_TRUE(sel.failed_keys().empty()) << "nothing failed";
}

TEST_F(TunerLifetimeTest, TheLastScopeToEndReleasesTheTimer) {
  TuningSelector sel(config());
  sel.enter_scope();
  sel.enter_scope();  // nested
  ASSERT_EQ(sel.select(problem(64), "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(made.load(), 1);
  EXPECT_TRUE(sel.has_timer());
  sel.exit_scope();
  EXPECT_EQ(destroyed.load(), 0) << "a scope is still alive";
  ASSERT_EQ(sel.select(problem(128), "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(made.load(), 1) << "one timer for the scope's keys";
  sel.exit_scope();
  EXPECT_EQ(destroyed.load(), 1);
  EXPECT_FALSE(sel.has_timer());
}

TEST_F(TunerLifetimeTest, TuneReleasesItsTimerUnlessAScopeIsActive) {
  TuningSelector sel(config());
  EXPECT_TRUE(sel.tune({problem(64)}, TuneOptions{}).front().measured);
  EXPECT_EQ(made.load(), 1);
  EXPECT_EQ(destroyed.load(), 1);

  sel.enter_scope();
  EXPECT_TRUE(sel.tune({problem(128)}, TuneOptions{}).front().measured);
  EXPECT_EQ(destroyed.load(), 1) << "the scope's lazy tuning reuses it";
  EXPECT_TRUE(sel.has_timer());
  sel.exit_scope();
  EXPECT_EQ(destroyed.load(), 2);
}

// FP8GEMM_TUNE=1 keeps lazy tuning on for the whole process: the timer stays until released.
TEST_F(TunerLifetimeTest, ReleaseTimerFreesTheLazyTimerOnRequest) {
  SelectorConfig c = config();
  c.lazy = true;
  TuningSelector sel(c);
  ASSERT_TRUE(sel.select(problem(64), "auto", nullptr));
  EXPECT_TRUE(sel.has_timer());
  EXPECT_TRUE(sel.release_timer());
  EXPECT_EQ(destroyed.load(), 1);
  EXPECT_FALSE(sel.release_timer()) << "nothing left to release";
  ASSERT_TRUE(sel.select(problem(128), "auto", nullptr));  // the next key makes a new one
  EXPECT_EQ(made.load(), 2);
}

// The last scope ends while another thread measures: the scope's end does not wait, and the
// timer goes as soon as that measurement is over.
TEST_F(TunerLifetimeTest, AScopeEndingDuringAMeasurementReleasesTheTimerAfterIt) {
  std::atomic<bool> measuring{false}, go_on{false};
  on_measure = [&] {
    measuring = true;
    while (!go_on) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  TuningSelector sel(config());
  sel.enter_scope();
  std::thread caller([&] { EXPECT_TRUE(sel.select(problem(64), "auto", nullptr)); });
  while (!measuring) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  sel.exit_scope();  // returns at once: the measurement holds the tuner
  EXPECT_EQ(destroyed.load(), 0);
  go_on = true;
  caller.join();
  EXPECT_EQ(destroyed.load(), 1);
}

}  // namespace
}  // namespace fp8gemm::testing
