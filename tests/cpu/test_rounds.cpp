// measure_in_rounds against a fake Timer: pruning, failures, the finalist cap, the reference's
// double timing (noise floor) and the single round-robin full round.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "fp8gemm/error.h"
#include "fp8gemm/measure.h"

namespace fp8gemm {
namespace {

Tactic tac(const std::string& config) { return Tactic{"fake", config}; }

// Each tactic has a true per-call time; every sample gets multiplicative noise, and the sample
// numbers listed in `outliers` (counted over the timer's life) are inflated 10x, as a stray
// interrupt or clock dip would. Tactics in `failing` report ok = false.
class FakeTimer : public Timer {
 public:
  std::map<std::string, double> true_us;
  std::set<std::string> failing;
  std::set<std::string> fail_in_full_round;  // ok in a 1-replay round, fail with more replays
  double noise = 0;  // relative, uniform in [-noise, +noise]
  std::set<int> outliers;
  // Clock drift: every sample taken during this replay index and later is scaled (power
  // throttling); `drift_from_sample` sets the first affected sample counted over the timer's life.
  int drift_from_sample = -1;
  double drift_scale = 1.0;
  std::vector<std::vector<Tactic>> calls;
  std::vector<MeasureOptions> call_options;

  std::vector<Timing> measure(const Problem&, const std::vector<Tactic>& candidates,
                              const MeasureOptions& options) override {
    calls.push_back(candidates);
    call_options.push_back(options);
    std::vector<Timing> out(candidates.size());
    for (size_t i = 0; i < candidates.size(); ++i) {
      out[i].tactic = candidates[i];
      const std::string& name = candidates[i].config;
      out[i].ok = !failing.count(name) && !(options.replays > 1 && fail_in_full_round.count(name));
      if (!out[i].ok) out[i].error = "launch failed: " + name;
    }
    // Round-robin: sample r of every candidate before sample r + 1 of any.
    for (int r = 0; r < options.replays; ++r)
      for (size_t i = 0; i < candidates.size(); ++i) {
        if (!out[i].ok) continue;
        double t = true_us.at(candidates[i].config) * (1 + noise * uniform_(rng_));
        if (drift_from_sample >= 0 && sample_ >= drift_from_sample) t *= drift_scale;
        if (outliers.count(sample_++)) t *= 10;
        out[i].samples_us.push_back(t);
      }
    for (Timing& t : out) {
      if (!t.ok) continue;
      std::vector<double> s = t.samples_us;
      std::sort(s.begin(), s.end());
      t.median_us = s[s.size() / 2];
    }
    return out;
  }

  std::vector<double> compare_outputs(const Problem&, const Tactic&, const std::vector<Tactic>& c) override {
    return std::vector<double>(c.size(), 0.0);
  }

 private:
  std::mt19937 rng_{42};
  std::uniform_real_distribution<double> uniform_{-1.0, 1.0};
  int sample_ = 0;
};

std::set<std::string> configs(const std::vector<Timing>& ts) {
  std::set<std::string> s;
  for (const Timing& t : ts) s.insert(t.tactic.config);
  return s;
}

const Problem kProblem{1, 64, 4096, 4096};

TEST(Rounds, ShortRoundPrunesSlowerThanRatioTimesBest) {
  FakeTimer timer;
  timer.true_us = {{"ref", 10}, {"fast", 8}, {"edge", 10.3}, {"slow", 10.5}, {"slower", 30}};
  RoundResult r = measure_in_rounds(timer, kProblem, {tac("ref"), tac("fast"), tac("edge"), tac("slow"), tac("slower")});
  // best = 8; 1.3 x 8 = 10.4: "edge" stays, "slow" and "slower" go.
  EXPECT_EQ(configs(r.finalists), (std::set<std::string>{"fast", "edge"}));
  EXPECT_EQ(configs(r.pruned), (std::set<std::string>{"slow", "slower"}));
  EXPECT_EQ(r.reference.tactic.config, "ref");
  ASSERT_EQ(timer.calls.size(), 2u);
  EXPECT_EQ(timer.calls[0].size(), 5u);
  EXPECT_EQ(timer.call_options[0].replays, 1);
  EXPECT_EQ(timer.call_options[1].replays, 7);
  // Every candidate's short-round time is kept (the tuner reports it next to the full round's).
  EXPECT_EQ(r.short_us.size(), 5u);
  EXPECT_DOUBLE_EQ(r.short_us.at("fake:fast"), 8);
}

TEST(Rounds, ReferenceAlwaysReachesFullRoundAndIsTimedTwice) {
  FakeTimer timer;
  timer.true_us = {{"ref", 100}, {"a", 10}, {"b", 11}};
  RoundResult r = measure_in_rounds(timer, kProblem, {tac("ref"), tac("a"), tac("b")});
  ASSERT_EQ(timer.calls.size(), 2u);
  const std::vector<Tactic>& full = timer.calls[1];
  ASSERT_EQ(full.size(), 4u);
  EXPECT_EQ(full.front().config, "ref");
  EXPECT_EQ(full.back().config, "ref");
  EXPECT_TRUE(r.reference.ok);
  EXPECT_DOUBLE_EQ(r.reference.median_us, 100);
  EXPECT_DOUBLE_EQ(r.noise, 0);  // a noiseless timer: both reference timings agree
  EXPECT_EQ(configs(r.finalists), (std::set<std::string>{"a", "b"}));
  for (const Timing& t : r.finalists) EXPECT_EQ(t.samples_us.size(), 7u);
}

TEST(Rounds, NoiseIsRelativeDifferenceOfTheTwoReferenceTimings) {
  FakeTimer timer;
  timer.true_us = {{"ref", 10}, {"a", 10}, {"b", 10}};
  timer.noise = 0.05;
  RoundResult r = measure_in_rounds(timer, kProblem, {tac("ref"), tac("a"), tac("b")});
  const std::vector<Tactic>& full = timer.calls[1];
  ASSERT_EQ(full.size(), 4u);
  EXPECT_GT(r.noise, 0);
  EXPECT_LE(r.noise, 0.1 / 0.95 + 1e-12);  // two medians within +-5% of the truth
}

// Throttling that slows every candidate from one replay on gives the two reference timings
// different medians though each cycle agrees; the noise floor compares them replay by replay, so
// drift shared by a cycle does not count as noise.
TEST(Rounds, ClockDriftDuringTheRoundIsNotNoise) {
  FakeTimer timer;
  timer.true_us = {{"ref", 100}, {"a", 101}, {"b", 150}};
  // Short round: 3 samples. Full round [ref, a, ref] x 7: the step lands on the 4th cycle's
  // last entry, so ref#2 has 4 slow samples and ref#1 only 3 (their medians differ by 18%).
  timer.drift_from_sample = 3 + 3 * 3 + 2;
  timer.drift_scale = 1.18;
  RoundResult r = measure_in_rounds(timer, kProblem, {tac("ref"), tac("a"), tac("b")});
  ASSERT_EQ(timer.calls[1].size(), 3u);
  EXPECT_LT(r.noise, 0.01) << "drift counted as noise";
}

TEST(Rounds, OutlierSamplesDoNotMoveTheMedianOrPruneTheFastest) {
  FakeTimer timer;
  timer.true_us = {{"ref", 10}, {"a", 9}, {"b", 11}};
  // Samples 0-2 are the 1-replay short round; the full round then cycles (ref, a, b, ref), so
  // samples 4 and 12 are "a" in cycles 0 and 2, sample 5 is "b" in cycle 0.
  timer.outliers = {4, 12, 5};
  RoundResult r = measure_in_rounds(timer, kProblem, {tac("ref"), tac("a"), tac("b")});
  ASSERT_EQ(r.finalists.size(), 2u);
  for (const Timing& t : r.finalists)
    EXPECT_DOUBLE_EQ(t.median_us, timer.true_us.at(t.tactic.config)) << t.tactic.config;
  bool saw_outlier = false;
  for (const Timing& t : r.finalists)
    for (double s : t.samples_us) saw_outlier |= s > 50;
  EXPECT_TRUE(saw_outlier);  // the fake really injected them
}

TEST(Rounds, FailedCandidatesAreDroppedWithTheirError) {
  FakeTimer timer;
  timer.true_us = {{"ref", 10}, {"a", 9}, {"broken", 1}, {"late", 9.5}};
  timer.failing = {"broken"};
  timer.fail_in_full_round = {"late"};
  RoundResult r = measure_in_rounds(timer, kProblem, {tac("ref"), tac("a"), tac("broken"), tac("late")});
  EXPECT_EQ(configs(r.finalists), (std::set<std::string>{"a"}));
  ASSERT_EQ(r.pruned.size(), 2u);
  for (const Timing& t : r.pruned) {
    EXPECT_FALSE(t.ok);
    EXPECT_NE(t.error.find(t.tactic.config), std::string::npos) << t.error;
  }
  // A failing candidate is never "best", so it does not prune the others either.
  EXPECT_TRUE(r.reference.ok);
}

TEST(Rounds, AtMostMaxFinalistsSurviveFastestFirst) {
  FakeTimer timer;
  std::vector<Tactic> cands{tac("ref")};
  timer.true_us["ref"] = 10;
  for (int i = 0; i < 20; ++i) {
    const std::string name = "t" + std::to_string(i);
    timer.true_us[name] = 10 - 0.1 * i;  // t19 fastest; all within 1.3x
    cands.push_back(tac(name));
  }
  RoundOptions o;
  o.max_finalists = 3;
  RoundResult r = measure_in_rounds(timer, kProblem, cands, o);
  EXPECT_EQ(configs(r.finalists), (std::set<std::string>{"t17", "t18", "t19"}));
  EXPECT_EQ(r.pruned.size(), 17u);
  EXPECT_EQ(timer.calls[1].size(), 5u);  // ref + 3 + ref
}

TEST(Rounds, FailingReferenceStillReportedAndNoiseZero) {
  FakeTimer timer;
  timer.true_us = {{"ref", 10}, {"a", 9}, {"b", 9}};
  timer.failing = {"ref"};
  RoundResult r = measure_in_rounds(timer, kProblem, {tac("ref"), tac("a"), tac("b")});
  EXPECT_FALSE(r.reference.ok);
  EXPECT_FALSE(r.reference.error.empty());
  EXPECT_EQ(r.noise, 0);
  EXPECT_EQ(r.finalists.size(), 2u);
}

TEST(Rounds, SingleChallengerSkipsShortRound) {
  FakeTimer timer;
  timer.true_us = {{"ref", 10}, {"a", 30}};
  RoundResult r = measure_in_rounds(timer, kProblem, {tac("ref"), tac("a")});
  ASSERT_EQ(timer.calls.size(), 1u);
  EXPECT_EQ(timer.calls[0].size(), 3u);
  EXPECT_EQ(r.finalists.size(), 1u);

  FakeTimer alone;
  alone.true_us = {{"ref", 10}};
  RoundResult only = measure_in_rounds(alone, kProblem, {tac("ref")});
  ASSERT_EQ(alone.calls.size(), 1u);
  EXPECT_EQ(alone.calls[0].size(), 2u);
  EXPECT_TRUE(only.finalists.empty());
}

TEST(Rounds, EmptyCandidateListIsAnError) {
  FakeTimer timer;
  EXPECT_THROW(measure_in_rounds(timer, kProblem, {}), Error);
}

}  // namespace
}  // namespace fp8gemm
// The GraphTimer's call sizing (pure arithmetic, no GPU): >= 20 calls for short kernels, fewer
// once a replay reaches ~1 ms, never below 3.

namespace fp8gemm {
namespace {

TEST(GraphTimerSizing, CallsPerReplay) {
  const GraphTimerOptions o;
  EXPECT_EQ(calls_per_replay_for(5, o), 20);
  EXPECT_EQ(calls_per_replay_for(50, o), 20);
  EXPECT_EQ(calls_per_replay_for(100, o), 10);
  EXPECT_EQ(calls_per_replay_for(300, o), 4);
  EXPECT_EQ(calls_per_replay_for(11000, o), 3);
  EXPECT_EQ(calls_per_replay_for(0, o), 20);  // an unmeasurable probe: assume short
  GraphTimerOptions longer;
  longer.min_replay_us = 300;
  EXPECT_EQ(calls_per_replay_for(5, longer), 60);   // 300 us of 5 us calls, beyond max_calls
  EXPECT_EQ(calls_per_replay_for(1, longer), 200);  // capped
  EXPECT_EQ(calls_per_replay_for(50, longer), 20);  // 20 calls already last 1 ms
  EXPECT_EQ(calls_per_replay_for(300, longer), 4);
  EXPECT_EQ(calls_per_replay_for(0, longer), 20);
}

// Settling and recovery are on by default: heavy calls settle longer after an idle gap, light
// calls recover after heavy ones, and calls between the two thresholds do neither.
TEST(GraphTimerSizing, HeavyCallsSettleAndLightOnesRecoverByDefault) {
  const GraphTimerOptions d;
  EXPECT_GT(d.settle_ms, 0);
  EXPECT_GT(d.settle_idle_ms, d.settle_ms);
  EXPECT_GT(d.recover_ms, 0);
  EXPECT_LT(d.recover_below_call_us, d.settle_min_call_us);
  EXPECT_EQ(d.keep_busy_ms, 0) << "keeping the load on is the tuner's";
}

// Weight copies: >= 2, totalling >= 2x L2 (DESIGN "Measuring").
TEST(GraphTimerSizing, WeightCopiesCoverTwiceTheL2AndAreAtLeastTwo) {
  const size_t l2 = 60u << 20;
  EXPECT_EQ(weight_copies_for(16u << 20, l2), 8);   // 128 MB >= 120 MB
  EXPECT_EQ(weight_copies_for(88u << 20, l2), 2);
  EXPECT_EQ(weight_copies_for(500u << 20, l2), 2);  // never one copy
}

// The tuner times short calls in replays of >= 300 us (as bench's head-to-head rounds), the
// bench's first pass in DESIGN's 20 calls unless asked.
TEST(GraphTimerSizing, TheTunersReplaysOfShortCallsAreLong) {
  EXPECT_EQ(GraphTimerOptions{}.min_replay_us, 0);
  EXPECT_EQ(tuning_timer_options().min_replay_us, 300);
  EXPECT_EQ(calls_per_replay_for(4, tuning_timer_options()), 75);
  EXPECT_EQ(calls_per_replay_for(4, GraphTimerOptions{}), 20);
}

// The tuner's timer keeps the load on for 5 ms after each heavy measurement; bench's does not.
TEST(GraphTimerSizing, TheTunersTimerKeepsTheLoadOnBetweenHeavyMeasurements) {
  EXPECT_EQ(GraphTimerOptions{}.keep_busy_ms, 0);
  EXPECT_EQ(tuning_timer_options().keep_busy_ms, 5);
}

// How long a heavy measurement settles depends on how long the GPU idled before it: every timer
// settles the same after a pause or an idle gap; the tuner's timer settles less between a key's
// back-to-back measurements, and only there.
TEST(GraphTimerSizing, SettleTargetFollowsTheGapSinceTheLastMeasurement) {
  const GraphTimerOptions d;
  EXPECT_EQ(settle_target_ms(d, 1), d.settle_ms);  // the bench's timer: unchanged
  EXPECT_EQ(settle_target_ms(d, d.idle_gap_ms + 1), d.settle_idle_ms);
  const GraphTimerOptions t = tuning_timer_options();
  EXPECT_LT(t.settle_busy_ms, t.settle_ms);
  EXPECT_GT(t.settle_busy_ms, 0);
  EXPECT_EQ(settle_target_ms(t, 0), t.settle_busy_ms);
  EXPECT_EQ(settle_target_ms(t, t.busy_gap_ms), t.settle_busy_ms);
  EXPECT_EQ(settle_target_ms(t, t.busy_gap_ms + 0.5), t.settle_ms);
  EXPECT_EQ(settle_target_ms(t, t.idle_gap_ms + 0.5), t.settle_idle_ms);
  EXPECT_EQ(settle_target_ms(t, 1e9), t.settle_idle_ms);
  EXPECT_LT(t.busy_gap_ms, t.idle_gap_ms);
}

}  // namespace
}  // namespace fp8gemm

namespace fp8gemm {
namespace {

TEST(Rounds, ProtectedCandidatesReachFullRoundOutsideTheCap) {
  FakeTimer timer;
  timer.true_us = {{"ref", 10}, {"auto", 50}, {"a", 8}, {"b", 8.5}, {"c", 9}, {"broken", 1}};
  timer.failing = {"broken"};
  RoundOptions o;
  o.protected_candidates = 3;  // ref, auto, broken
  o.max_finalists = 2;
  RoundResult r = measure_in_rounds(timer, kProblem, {tac("ref"), tac("auto"), tac("broken"), tac("a"), tac("b"), tac("c")}, o);
  EXPECT_EQ(configs(r.finalists), (std::set<std::string>{"auto", "a", "b"}));
  EXPECT_EQ(configs(r.pruned), (std::set<std::string>{"broken", "c"}));
}

// A benchmark's per-backend "best" must be a full-round time: with best_of_each_backend, each
// backend's fastest short-round candidate within the prune ratio gets past the cap (only its
// fastest), a backend beyond the ratio does not, and without the option the cap holds.
TEST(Rounds, BestOfEachBackendReachesTheFullRoundBeyondTheCap) {
  FakeTimer timer;
  timer.true_us = {{"ref", 10}, {"lt1", 8}, {"lt2", 8.1}, {"lt3", 8.2}, {"cut1", 8.6}, {"cut2", 8.7}, {"sm1", 20}};
  const std::vector<Tactic> cands{Tactic{"cublaslt", "ref"}, Tactic{"cublaslt", "lt1"}, Tactic{"cublaslt", "lt2"},
                                  Tactic{"cublaslt", "lt3"}, Tactic{"cutlass", "cut2"}, Tactic{"cutlass", "cut1"},
                                  Tactic{"small_m", "sm1"}};
  RoundOptions o;
  o.max_finalists = 2;
  o.best_of_each_backend = true;
  RoundResult with = measure_in_rounds(timer, kProblem, cands, o);
  EXPECT_EQ(configs(with.finalists), (std::set<std::string>{"lt1", "lt2", "cut1"}));
  EXPECT_EQ(configs(with.pruned), (std::set<std::string>{"lt3", "cut2", "sm1"}));

  o.best_of_each_backend = false;
  RoundResult without = measure_in_rounds(timer, kProblem, cands, o);
  EXPECT_EQ(configs(without.finalists), (std::set<std::string>{"lt1", "lt2"}));
}

}  // namespace
}  // namespace fp8gemm
