// The selector behind `auto`, with fake backends and timers: FlashInfer faults 1 (a cache miss
// fell back to "first backend, tactic 0") and 2 (entries keyed by exact M), the default table
// and its floor, lazy tuning (opt-in, never during stream capture, once per key across
// threads), run budgets and the M buckets themselves.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "fp8gemm/error.h"
#include "fp8gemm/version.h"
#include "test_tune_fakes.h"
#include "tune/policy/decide.h"
#include "tune/tuning_selector.h"

namespace fp8gemm::testing {
namespace {

using tuning::SelectorConfig;
using tuning::TuningSelector;

struct SelectorTest : ::testing::Test {
  // Each backend lists a tactic first that is NOT its default.
  FakeBackend cublaslt{"cublaslt", {"enum0", "heur", "h1"}, "heur"};
  FakeBackend cutlass{"cutlass", {"c0", "c1"}, "c1"};
  std::shared_ptr<FakeTimer> lazy_timer = std::make_shared<FakeTimer>();
  int timers_made = 0;
  bool capturing = false;

  SelectorConfig config() {
    SelectorConfig c;
    c.backends = {&cublaslt, &cutlass};
    c.device.name = "Fake H200";
    c.device.cc_major = 9;
    c.make_timer = [this]() -> std::unique_ptr<Timer> {
      ++timers_made;
      auto t = std::make_unique<FakeTimer>(*lazy_timer);
      return t;
    };
    c.is_capturing = [this](cudaStream_t) { return capturing; };
    return c;
  }
  static std::map<std::string, double> times() {
    return {{"cublaslt:heur", 10}, {"cublaslt:enum0", 12}, {"cublaslt:h1", 10.5}, {"cutlass:c0", 7}, {"cutlass:c1", 11}};
  }
  void SetUp() override { lazy_timer->true_us = times(); }
};

// FlashInfer fault 1: with no tuned entry it ran "the first backend, tactic 0".
TEST_F(SelectorTest, CacheMissYieldsTheDefaultNeverFirstBackendTacticZero) {
  SelectorConfig c = config();
  c.backends = {&cublaslt, &cutlass};
  TuningSelector sel(c);
  // No opinion: the Context then runs cuBLASLt's heuristic (its default_tactic), the floor.
  EXPECT_EQ(sel.select(problem(100), "auto", nullptr), std::nullopt);
  EXPECT_EQ(sel.default_for(problem(100)).name(), "cublaslt:heur");
  EXPECT_NE(sel.default_for(problem(100)).name(), "cublaslt:enum0");
  EXPECT_EQ(tuning::floor_choice(c.backends, problem(100)).name(), "cublaslt:heur");
}

TEST_F(SelectorTest, FloorSkipsUnavailableBackends) {
  cublaslt.unavailable = true;
  EXPECT_EQ(tuning::floor_choice({&cublaslt, &cutlass}, problem(8)).name(), "cutlass:c1");
  cutlass.unavailable = true;
  EXPECT_THROW(tuning::floor_choice({&cublaslt, &cutlass}, problem(8)), Error);
}

// A backend whose own default cannot run the problem.
struct NoDefaultBackend : FakeBackend {
  using FakeBackend::FakeBackend;
  Tactic default_tactic(const Problem&) override { throw std::runtime_error("fake: no kernel for this shape"); }
};

// The floor is one rule (runtime/floor.h) for the Context and the tuner: a backend without a
// default for the problem is passed over, and when none can run it, each backend's reason is given.
TEST_F(SelectorTest, FloorPassesOverABackendWithoutADefault) {
  NoDefaultBackend lt{"cublaslt", {"enum0"}, "heur"};
  EXPECT_EQ(floor_choice({&lt, &cutlass}, problem(8)).name(), "cutlass:c1");
  cutlass.unavailable = true;
  try {
    floor_choice({&lt, &cutlass}, problem(8));
    ADD_FAILURE() << "no backend can run it, yet the floor chose one";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    const std::string what = e.what();
    EXPECT_NE(what.find("no backend can run"), std::string::npos) << what;
    EXPECT_NE(what.find("cublaslt: fake: no kernel for this shape"), std::string::npos) << what;
    EXPECT_NE(what.find("cutlass: fake: not loaded"), std::string::npos) << what;
  }
  EXPECT_EQ(find_backend({&lt, &cutlass}, "cutlass"), &cutlass);
  EXPECT_EQ(find_backend({&lt, &cutlass}, "small_m"), nullptr);
}

TEST_F(SelectorTest, EmptyDefaultTableUsesTheFloor) {
  SelectorConfig c = config();
  c.exact_table = {};  // as on an architecture without a default table
  TuningSelector sel(c);
  EXPECT_EQ(sel.select(problem(16), "auto", nullptr), std::nullopt);  // the Context's floor
  EXPECT_EQ(sel.default_for(problem(16)).name(), "cublaslt:heur");
  EXPECT_TRUE(decision_tables(75).exact.empty());  // no table for other architectures
}

TEST_F(SelectorTest, DefaultTableRuleCoversItsMRange) {
  SelectorConfig c = config();
  c.backends = {&cublaslt, &cutlass};
  // Exact M bounds: a generated table starts and ends ranges at bucket edges or at the
  // segments inside buckets.
  c.exact_table = {{DType::kE4M3, DType::kE4M3, DType::kBF16, 1, 4096, 4096, 9, 53, "cutlass:c0"},
             {DType::kE4M3, DType::kE4M3, DType::kBF16, 1, 4096, 4096, 54, 64, "cublaslt:h1"}};
  TuningSelector sel(c);
  EXPECT_EQ(sel.select(problem(9), "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(sel.select(problem(53), "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(sel.select(problem(54), "auto", nullptr)->name(), "cublaslt:h1");  // inside bucket 64
  EXPECT_EQ(sel.select(problem(64), "auto", nullptr)->name(), "cublaslt:h1");
  EXPECT_EQ(sel.select(problem(65), "auto", nullptr), std::nullopt);
  EXPECT_EQ(sel.select(problem(8), "auto", nullptr), std::nullopt);
  EXPECT_EQ(sel.select(problem(32, 4096, 8192), "auto", nullptr), std::nullopt);  // other shape
  EXPECT_EQ(sel.default_for(problem(32)).name(), "cutlass:c0");
  // A table tactic the backend refuses (another cuBLASLt, say) falls back to the floor.
  cutlass.cannot_implement.insert("c0");
  EXPECT_EQ(sel.default_for(problem(32)).name(), "cublaslt:heur");
}

// FlashInfer fault 2: entries were keyed by exact M, so an M that was not a bucket value missed.
TEST_F(SelectorTest, MInsideABucketHitsTheBucketsTunedEntry) {
  TuningSelector sel(config());
  FakeTimer timer;
  timer.true_us = times();
  const auto d = sel.tune({problem(20)}, timer, {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].problem.m, 24);  // tuned at the bucket's upper edge
  EXPECT_EQ(d[0].choice, "cutlass:c0");
  for (int64_t m : {17, 20, 23, 24}) {
    auto t = sel.select(problem(m), "auto", nullptr);
    ASSERT_TRUE(t) << m;
    EXPECT_EQ(t->name(), "cutlass:c0") << m;
  }
  EXPECT_EQ(sel.select(problem(25), "auto", nullptr), std::nullopt);
  EXPECT_EQ(sel.select(problem(16), "auto", nullptr), std::nullopt);
  // Other fields of the key still separate entries.
  EXPECT_EQ(sel.select(problem(20, 4096, 8192), "auto", nullptr), std::nullopt);
  Problem batched = problem(20);
  batched.batch = 2;
  EXPECT_EQ(sel.select(batched, "auto", nullptr), std::nullopt);
}

// A bucket whose best tactic changes inside it: the tuned entry keeps each part's choice and
// dispatch follows the call's M (docs/tuning.md "Segments").
TEST_F(SelectorTest, TunedSegmentsFollowTheCallsM) {
  TuningSelector sel(config());
  FakeTimer timer;
  timer.true_us = times();
  timer.at_m = [](const std::string& name, int64_t m, double t) {
    return name == "cutlass:c0" && m < 60 ? 30.0 : name == "cublaslt:h1" && m < 64 ? 6.0 : t;
  };
  const auto d = sel.tune({problem(64)}, timer, {});
  ASSERT_EQ(d[0].segments.size(), 2u) << d[0].reason;
  for (int64_t m : {49, 59}) EXPECT_EQ(sel.select(problem(m), "auto", nullptr)->name(), "cublaslt:h1") << m;
  for (int64_t m : {60, 64}) EXPECT_EQ(sel.select(problem(m), "auto", nullptr)->name(), "cutlass:c0") << m;
  // Asked again, the cached decision reports the same segments without measuring.
  const int before = timer.measure_calls;
  const auto again = sel.tune({problem(50)}, timer, {});
  EXPECT_EQ(timer.measure_calls, before);
  ASSERT_EQ(again[0].segments.size(), 2u);
  EXPECT_EQ(again[0].choice_for(50), "cublaslt:h1");
}

// Buckets of one shape tuned in a row: the previous bucket's choices and best finalists are
// measured first at the next one (they survive a budget that trims the candidate list).
TEST_F(SelectorTest, NeighbouringBucketsBestIsTriedFirst) {
  TuningSelector sel(config());
  FakeTimer timer;
  timer.true_us = times();
  timer.true_us["cublaslt:h1"] = 6;  // listed last by cuBLASLt, best everywhere
  sel.tune({problem(48), problem(64)}, timer, {});
  // The second key's first measurement (its short round) lists the default, then h1.
  size_t second = 0;
  for (size_t i = 0; i < timer.measured.size(); ++i)
    if (i > 0 && timer.measured[i].size() > 3) second = i;
  ASSERT_GT(second, 0u);
  ASSERT_GE(timer.measured[second].size(), 2u);
  EXPECT_EQ(timer.measured[second][1].name(), "cublaslt:h1");
}

// A neighbour's best that the backend does not list at the next bucket (cuBLASLt's heuristic
// answers per M) is still measured there where the backend can run it, and can win it.
TEST_F(SelectorTest, ANeighboursBestTheBackendNoLongerListsIsStillACandidate) {
  cublaslt.listed_up_to_m[48] = {"h2"};  // listed at M <= 48 only, runs at every M
  TuningSelector sel(config());
  FakeTimer timer;
  timer.true_us = times();
  timer.true_us["cublaslt:h2"] = 5;  // the best everywhere
  const auto d = sel.tune({problem(48), problem(64)}, timer, {});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].choice, "cublaslt:h2");
  EXPECT_EQ(d[1].choice, "cublaslt:h2");  // without the neighbour: cutlass:c0 (7 us)
  bool marked = false;  // explain says where it came from
  for (const CandidateReport& c : d[1].candidates)
    marked |= c.tactic == "cublaslt:h2" && c.note.find("neighbouring bucket") != std::string::npos;
  EXPECT_TRUE(marked);
  // Tuned alone, M <= 64 never sees it.
  TuningSelector alone(config());
  EXPECT_EQ(alone.tune({problem(64)}, timer, {}).at(0).choice, "cutlass:c0");
}

// Keys are measured lightest first (a light key timed right after a heavy one runs while the
// clock recovers from the power cap), and the decisions come back in the order given.
TEST_F(SelectorTest, LightestKeysAreTunedFirstAndDecisionsKeepTheirOrder) {
  TuningSelector sel(config());
  FakeTimer timer;
  timer.true_us = times();
  const std::vector<Problem> given{problem(4096), problem(1, 1024, 1024), problem(64), problem(8192, 8192, 8192)};
  std::vector<int64_t> progress_m;
  TuneOptions o;
  o.progress = [&](size_t done, size_t total, const Decision& d) {
    EXPECT_EQ(done, progress_m.size() + 1);
    EXPECT_EQ(total, given.size());
    progress_m.push_back(d.problem.m);
  };
  const std::vector<Decision> d = sel.tune(given, timer, o);
  ASSERT_EQ(d.size(), given.size());
  for (size_t i = 0; i < given.size(); ++i) {
    EXPECT_EQ(d[i].problem.n, given[i].n);
    EXPECT_EQ(d[i].problem.m, m_bucket(given[i].m));
  }
  EXPECT_EQ(progress_m, (std::vector<int64_t>{1, 64, 4096, 8192}));
  ASSERT_FALSE(timer.measured_m.empty());
  // Every measurement of the two light keys (M <= 64, their samples below the edge included)
  // comes before any of the two heavy ones.
  EXPECT_EQ(timer.measured_m.front(), 1);
  EXPECT_TRUE(std::is_partitioned(timer.measured_m.begin(), timer.measured_m.end(), [](int64_t m) { return m <= 64; }));
}

// The linear layer's keys: a layer problem has its own entry once tuned; until then it runs what
// its GEMM was tuned to (then the default chain), and explain says which.
TEST_F(SelectorTest, ALayerRunsItsOwnEntryElseItsGemmsTunedChoice) {
  TuningSelector sel(config());
  FakeTimer timer;
  timer.true_us = times();
  Problem layer = problem(20);
  layer.prologue = Problem::Prologue::kQuantizeDynamic;
  layer.x_type = DType::kBF16;
  EXPECT_EQ(tuning::key_of(layer).to_string(), "linear_fp8 bf16 dynamic e4m3xe4m3->bf16 b=1 m<=24 n=4096 k=4096 align=16");
  EXPECT_EQ(sel.select(layer, "auto", nullptr), std::nullopt);  // nothing tuned: the floor
  sel.tune({problem(20)}, timer, {});  // the GEMM's key
  ASSERT_TRUE(sel.select(layer, "auto", nullptr));
  EXPECT_EQ(sel.select(layer, "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(sel.default_for(layer).name(), "cutlass:c0");  // what tuning the layer measures against
  EXPECT_NE(sel.explain(layer).find("the layer's GEMM"), std::string::npos) << sel.explain(layer);
  // Tuned as a layer, where the quantization makes another tactic the faster.
  timer.at_m = [](const std::string& name, int64_t, double t) { return name == "cublaslt:h1" ? 5.0 : t; };
  const auto d = sel.tune({layer}, timer, {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].key, tuning::key_of(layer).to_string());
  EXPECT_EQ(d[0].default_tactic, "cutlass:c0");
  EXPECT_EQ(sel.select(layer, "auto", nullptr)->name(), "cublaslt:h1");
  EXPECT_EQ(sel.select(problem(20), "auto", nullptr)->name(), "cutlass:c0");  // the GEMM's stays its own
  EXPECT_NE(sel.explain(layer).find("tuned cache: linear_fp8"), std::string::npos) << sel.explain(layer);
  Problem other = layer;  // the other scale mode is another key
  other.prologue = Problem::Prologue::kQuantizeStatic;
  EXPECT_EQ(sel.select(other, "auto", nullptr)->name(), "cutlass:c0");
}

TEST_F(SelectorTest, NamedBackendOnlyGetsItsOwnTunedChoice) {
  TuningSelector sel(config());
  FakeTimer timer;
  timer.true_us = times();
  sel.tune({problem(64)}, timer, {});
  EXPECT_EQ(sel.select(problem(64), "cutlass", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(sel.select(problem(64), "cublaslt", nullptr), std::nullopt);
}

TEST_F(SelectorTest, LazyTuningIsOffUnlessAsked) {
  TuningSelector sel(config());
  EXPECT_EQ(sel.select(problem(64), "auto", nullptr), std::nullopt);
  EXPECT_EQ(timers_made, 0);
  EXPECT_EQ(sel.cache().size(), 0u);

  sel.enter_scope();  // what AutotuneScope does
  EXPECT_EQ(sel.select(problem(64), "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(timers_made, 1);
  EXPECT_EQ(sel.cache().size(), 1u);
  sel.exit_scope();
  EXPECT_FALSE(sel.lazy_active());
}

TEST_F(SelectorTest, NothingIsProfiledDuringStreamCapture) {
  SelectorConfig c = config();
  c.lazy = true;  // FP8GEMM_TUNE=1
  TuningSelector sel(c);
  capturing = true;
  EXPECT_EQ(sel.select(problem(64), "auto", nullptr), std::nullopt);  // the default, untuned
  EXPECT_EQ(timers_made, 0);
  EXPECT_EQ(sel.cache().size(), 0u);

  capturing = false;  // the next uncaptured call tunes
  EXPECT_EQ(sel.select(problem(64), "auto", nullptr)->name(), "cutlass:c0");
  EXPECT_EQ(sel.cache().size(), 1u);

  capturing = true;  // and captured calls then use the tuned entry
  EXPECT_EQ(sel.select(problem(64), "auto", nullptr)->name(), "cutlass:c0");
}

TEST_F(SelectorTest, ConcurrentLazyCallsTuneAKeyOnce) {
  SelectorConfig c = config();
  c.lazy = true;
  std::atomic<int> measures{0};
  c.make_timer = [&]() -> std::unique_ptr<Timer> {
    struct Counting : FakeTimer {
      std::atomic<int>* n;
      std::vector<Timing> measure(const Problem& p, const std::vector<Tactic>& t, const MeasureOptions& o) override {
        ++*n;
        return FakeTimer::measure(p, t, o);
      }
    };
    auto t = std::make_unique<Counting>();
    t->true_us = times();
    t->n = &measures;
    return t;
  };
  // What tuning the key once measures (rounds, sampled M, low-end checks), from one call.
  int once = 0;
  {
    TuningSelector alone(c);
    ASSERT_TRUE(alone.select(problem(60), "auto", nullptr));
    once = measures.exchange(0);
  }
  ASSERT_GE(once, 2 + int(tuning::bucket_sample_ms(64, tuning::PolicyOptions{}.bucket_samples).size()));
  TuningSelector sel(c);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 50; ++j) {
        auto t = sel.select(problem(60 + j % 4), "auto", nullptr);  // all bucket 64
        if (!t || t->name() != "cutlass:c0") ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  // One key, tuned once: a short round, a full round, one measurement at each sampled M below
  // the edge, and the low-end checks of its segments.
  EXPECT_EQ(measures.load(), once);
}

TEST_F(SelectorTest, RunBudgetStopsTuningAndKeepsDefaults) {
  double now = 0;
  SelectorConfig c = config();
  c.clock_ms = [&] { return now; };
  TuningSelector sel(c);
  FakeTimer timer;
  timer.true_us = times();
  timer.clock_ms = &now;
  TuneOptions o;
  o.run_budget_ms = 1;  // the first key's measurements already take more
  size_t progress_calls = 0;
  o.progress = [&](size_t done, size_t total, const Decision&) {
    ++progress_calls;
    EXPECT_EQ(total, 3u);
    EXPECT_EQ(done, progress_calls);
  };
  const auto d = sel.tune({problem(64), problem(128), problem(256)}, timer, o);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_TRUE(d[0].measured);
  EXPECT_FALSE(d[2].measured);
  EXPECT_NE(d[2].reason.find("budget"), std::string::npos);
  EXPECT_EQ(d[2].choice, d[2].default_tactic);
  EXPECT_EQ(sel.cache().size(), 1u);  // unmeasured keys are not cached
  EXPECT_EQ(progress_calls, 3u);
}

TEST_F(SelectorTest, CachedKeysAreNotRetunedUnlessAsked) {
  TuningSelector sel(config());
  FakeTimer timer;
  timer.true_us = times();
  sel.tune({problem(64)}, timer, {});
  const int after_first = timer.measure_calls;
  const auto again = sel.tune({problem(64), problem(63)}, timer, {});
  EXPECT_EQ(timer.measure_calls, after_first);
  EXPECT_EQ(again[1].choice, "cutlass:c0");
  TuneOptions o;
  o.retune = true;
  sel.tune({problem(64)}, timer, o);
  EXPECT_GT(timer.measure_calls, after_first);
}

TEST(Buckets, EdgesAndPowersOfTwo) {
  EXPECT_EQ(m_bucket(1), 1);
  EXPECT_EQ(m_bucket(3), 4);
  EXPECT_EQ(m_bucket(12), 16);
  EXPECT_EQ(m_bucket(17), 24);
  EXPECT_EQ(m_bucket(40), 48);
  EXPECT_EQ(m_bucket(100), 128);
  EXPECT_EQ(m_bucket(200), 256);
  EXPECT_EQ(m_bucket(300), 384);
  EXPECT_EQ(m_bucket(700), 768);
  EXPECT_EQ(m_bucket(3000), 3072);
  EXPECT_EQ(m_bucket(16384), 16384);
  EXPECT_EQ(m_bucket(16385), 32768);
  EXPECT_EQ(m_bucket(40000), 65536);
  int64_t prev = 0;
  for (int64_t m = 1; m <= 70000; ++m) {
    const int64_t b = m_bucket(m);
    ASSERT_GE(b, m);
    ASSERT_GE(b, prev);                // monotonic
    ASSERT_EQ(m_bucket(b), b) << m;    // the representative lies in its own bucket
    prev = b;
  }
  for (int64_t e : m_bucket_edges()) EXPECT_EQ(m_bucket(e), e);
}

TEST(Buckets, KeysSeparateEveryField) {
  Problem a = problem(16, 4096, 8192), b = problem(16, 8192, 4096);
  EXPECT_NE(tuning::key_of(a).to_string(), tuning::key_of(b).to_string());  // permuted n/k
  Problem c = a;
  c.b_type = DType::kE5M2;
  EXPECT_NE(tuning::key_of(a).to_string(), tuning::key_of(c).to_string());
  Problem d = a;
  d.alignment = 8;
  EXPECT_NE(tuning::key_of(a).to_string(), tuning::key_of(d).to_string());
  EXPECT_EQ(tuning::key_of(a).representative().m, 16);
}

}  // namespace
}  // namespace fp8gemm::testing

namespace fp8gemm::testing {
namespace {

// The Context memoizes its resolved choice under Selector::generation(): the number must move
// whenever a select() answer can change (cache entries added, merged, replaced) and must be
// kVolatile while lazy tuning may tune on any call.
TEST_F(SelectorTest, GenerationMovesWithEveryCacheChangeAndIsVolatileWhileTuningLazily) {
  TuningSelector sel(config());
  const uint64_t g0 = sel.generation();
  EXPECT_NE(g0, Selector::kVolatile);
  EXPECT_EQ(sel.generation(), g0);  // no change, same number
  tuning::CacheEntry e;
  e.key = tuning::key_of(problem(64));
  e.tactic = "cutlass:c0";
  sel.cache().put(e);
  const uint64_t g1 = sel.generation();
  EXPECT_NE(g1, g0);
  sel.cache().merge({e}, true);
  EXPECT_NE(sel.generation(), g1);
  const uint64_t g2 = sel.generation();
  sel.cache().replace({});
  EXPECT_NE(sel.generation(), g2);
  sel.enter_scope();
  EXPECT_EQ(sel.generation(), Selector::kVolatile);
  sel.exit_scope();
  EXPECT_NE(sel.generation(), Selector::kVolatile);
}

}  // namespace
}  // namespace fp8gemm::testing
