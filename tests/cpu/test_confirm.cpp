// bench's second look at auto (tools/common/confirm.h): which tactic auto is timed against, the ABBA
// round and its arithmetic, failures, and how the result is reported (table, CSV, JSON, summary).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "tools/common/confirm.h"
#include "test_tune_fakes.h"

namespace fp8gemm {
namespace {

using testing::FakeTimer;

const Tactic kDefault{"cublaslt", "d"};
const Tactic kCublasBest{"cublaslt", "b"};
const Tactic kCutlass{"cutlass", "c"};
const Tactic kAuto{"small_m", "a"};

Timing timing(const Tactic& t, double us) {
  Timing x;
  x.tactic = t;
  x.ok = true;
  x.median_us = us;
  x.samples_us = {us};
  return x;
}

// A point whose first pass measured: default 10, cuBLASLt's best 9.0, CUTLASS's best 9.5, auto 9.6.
BenchPoint point(const Tactic& auto_tactic = kAuto, double auto_us = 9.6) {
  BenchPoint p;
  p.shape = "s";
  p.problem = Problem{1, 64, 4096, 4096};
  p.entries = {{"cublaslt_default", true, 10.0, kDefault.name(), ""},
               {"cublaslt_best", true, 9.0, kCublasBest.name(), ""},
               {"cutlass_best", true, 9.5, kCutlass.name(), ""},
               {"auto", true, auto_us, auto_tactic.name(), ""}};
  p.timings = {timing(kDefault, 10.0), timing(kCublasBest, 9.0), timing(kCutlass, 9.5), timing(kAuto, auto_us)};
  return p;
}

TEST(ConfirmAuto, TimesAutoAgainstTheFastestOtherInAnAbbaRoundOfLongReplays) {
  BenchPoint p = point();
  FakeTimer timer;
  // The first pass's 9.0 was a lucky median: head to head, auto is the faster.
  timer.true_us = {{kAuto.name(), 9.3}, {kCublasBest.name(), 9.4}};
  const AutoConfirm c = confirm_auto(timer, p);
  ASSERT_TRUE(c.ran) << c.note;
  ASSERT_EQ(timer.measured.size(), 1u);
  EXPECT_EQ(timer.measured[0], (std::vector<Tactic>{kAuto, kCublasBest, kCublasBest, kAuto}));
  EXPECT_EQ(c.best_tactic, kCublasBest.name());
  EXPECT_EQ(c.replays, kConfirmReplays);
  EXPECT_EQ(c.calls_per_replay, 32);  // ceil(300 us / 9.6 us)
  EXPECT_DOUBLE_EQ(c.auto_us, 9.3);
  EXPECT_DOUBLE_EQ(c.best_us, 9.4);
  EXPECT_DOUBLE_EQ(c.regret(), 1.0);
  EXPECT_NEAR(first_pass_regret(p), 9.6 / 9.0, 1e-12);
}

TEST(ConfirmAuto, EachTacticIsTheMeanOfItsTwoTimingsAndTheNoiseTheirSpread) {
  BenchPoint p = point();
  FakeTimer timer;
  timer.true_us = {{kAuto.name(), 10.0}, {kCublasBest.name(), 9.0}};
  timer.reference_repeat_scale = 1.04;  // auto's second timing (the list's last, a repeat of its first)
  const AutoConfirm c = confirm_auto(timer, p);
  ASSERT_TRUE(c.ran);
  EXPECT_DOUBLE_EQ(c.auto_us, 10.2);
  EXPECT_NEAR(c.noise, 0.04, 1e-12);
  EXPECT_NEAR(c.regret(), 10.2 / 9.0, 1e-12);
}

TEST(ConfirmAuto, WhereAutoLookedFastestItIsStillTimedAgainstTheRunnerUp) {
  BenchPoint p = point(kAuto, 8.5);  // first pass: auto the fastest (regret 1.000)
  FakeTimer timer;
  timer.true_us = {{kAuto.name(), 9.45}, {kCublasBest.name(), 9.0}};
  EXPECT_DOUBLE_EQ(first_pass_regret(p), 1.0);
  const AutoConfirm c = confirm_auto(timer, p);
  ASSERT_TRUE(c.ran);
  EXPECT_EQ(c.best_tactic, kCublasBest.name());
  EXPECT_NEAR(c.regret(), 1.05, 1e-12);
}

TEST(ConfirmAuto, NeitherAutosOwnTacticNorANamedTacticIsTheBest) {
  // Auto runs cuBLASLt's best tactic; a named tactic was faster than everything.
  BenchPoint p = point(kCublasBest, 9.0);
  p.entries.push_back({"named_1", true, 5.0, "small_m:n", ""});
  const BenchEntry* other = fastest_other_than_auto(p);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->label, "cutlass_best");
  FakeTimer timer;
  timer.true_us = {{kCublasBest.name(), 9.0}, {kCutlass.name(), 9.5}};
  const AutoConfirm c = confirm_auto(timer, p);
  ASSERT_TRUE(c.ran);
  EXPECT_EQ(c.best_tactic, kCutlass.name());
  EXPECT_DOUBLE_EQ(c.regret(), 1.0);
}

// Near-ties in the first pass: the contenders within 3% of the fastest other entry are timed too
// (up to three in all), mirrored around auto, and the fastest of them in the round is the best.
TEST(ConfirmAuto, CloseContendersAreTimedTooAndTheFastestInTheRoundIsTheBest) {
  const Tactic b2{"cublaslt", "b2"}, b3{"cublaslt", "b3"}, far{"cublaslt", "far"};
  BenchPoint p = point();
  p.timings.push_back(timing(b2, 9.2));   // within 3% of cuBLASLt's best (9.0)
  p.timings.push_back(timing(b3, 9.25));  // within 3% too, but the fourth
  p.timings.push_back(timing(far, 9.3));  // beyond 3%
  // Fastest first, as bench fills them; auto's own tactic is never an opponent.
  p.contenders = {kCublasBest.name(), b2.name(), kAuto.name(), b3.name(), kCutlass.name(), far.name()};
  EXPECT_EQ(confirm_opponents(p), (std::vector<std::string>{kCublasBest.name(), b2.name(), b3.name()}));
  FakeTimer timer;
  timer.true_us = {{kAuto.name(), 9.3}, {kCublasBest.name(), 9.4}, {b2.name(), 9.1}, {b3.name(), 9.2}};
  const AutoConfirm c = confirm_auto(timer, p);
  ASSERT_TRUE(c.ran) << c.note;
  ASSERT_EQ(timer.measured.size(), 1u);
  EXPECT_EQ(timer.measured[0], (std::vector<Tactic>{kAuto, kCublasBest, b2, b3, b3, b2, kCublasBest, kAuto}));
  EXPECT_EQ(c.best_tactic, b2.name());
  EXPECT_DOUBLE_EQ(c.best_us, 9.1);
  EXPECT_NEAR(c.regret(), 9.3 / 9.1, 1e-12);
  EXPECT_EQ(c.opponents.size(), 3u);
  std::ostringstream line;
  BenchPoint shown = p;
  shown.confirm = c;
  print_confirm_line(line, shown);
  EXPECT_NE(line.str().find("best cublaslt:b2, the fastest of 3 timed)"), std::string::npos) << line.str();

  const AutoConfirm mirrored = confirm_auto(timer, p, /*best_first=*/true);
  ASSERT_TRUE(mirrored.ran) << mirrored.note;
  EXPECT_EQ(timer.measured[1], (std::vector<Tactic>{kCublasBest, b2, b3, kAuto, kAuto, b3, b2, kCublasBest}));
  EXPECT_EQ(mirrored.best_tactic, b2.name());
  EXPECT_DOUBLE_EQ(mirrored.auto_us, 9.3);

  // One opponent failing fails the round, as with one.
  timer.failing = {b3.name()};
  EXPECT_FALSE(confirm_auto(timer, p).ran);
}

TEST(ConfirmAuto, AFailedRoundIsReportedNotThrown) {
  BenchPoint p = point();
  FakeTimer timer;
  timer.true_us = {{kAuto.name(), 9.3}};  // the best's tactic fails to launch
  AutoConfirm c = confirm_auto(timer, p);
  EXPECT_FALSE(c.ran);
  EXPECT_NE(c.note.find("failed"), std::string::npos) << c.note;
  EXPECT_TRUE(std::isnan(c.regret()));

  class Throwing : public FakeTimer {
    std::vector<Timing> measure(const Problem&, const std::vector<Tactic>&, const MeasureOptions&) override {
      throw std::runtime_error("graph capture failed");
    }
  } throwing;
  c = confirm_auto(throwing, p);
  EXPECT_FALSE(c.ran);
  EXPECT_NE(c.note.find("graph capture failed"), std::string::npos) << c.note;

  BenchPoint untimed = point();
  untimed.entries[3].ok = false;
  c = confirm_auto(timer, untimed);
  EXPECT_FALSE(c.ran);
  EXPECT_EQ(c.note, "auto was not timed");
}

TEST(ConfirmAuto, RoundsRunLightestFirstByAutosFirstPassTime) {
  // A suite's order: each shape's M ascending, so a light point follows the previous shape's
  // heaviest. The rounds go by auto's time instead; a point without auto goes last; ties keep order.
  BenchPoint heavy = point(kAuto, 900.0), light = point(kAuto, 9.6), mid = point(kAuto, 40.0);
  BenchPoint tie = point(kAuto, 9.6), no_auto = point();
  no_auto.entries.pop_back();
  BenchPoint failed = point(kAuto, 5.0);
  failed.entries.back().ok = false;
  const std::vector<size_t> order = confirm_order({heavy, no_auto, light, failed, mid, tie});
  EXPECT_EQ(order, (std::vector<size_t>{2, 5, 4, 0, 1, 3}));
  EXPECT_TRUE(confirm_order({}).empty());
}

TEST(ConfirmAuto, ReportedInTheTableCsvJsonAndSummary) {
  BenchPoint p = point();
  FakeTimer timer;
  timer.true_us = {{kAuto.name(), 9.45}, {kCublasBest.name(), 9.0}};
  p.confirm = confirm_auto(timer, p);
  BenchPoint q = point(kAuto, 8.0);  // not timed again: keeps its first-pass regret, 1.000
  q.problem.m = 128;
  q.confirm.note = "no other tactic was timed";

  std::ostringstream table;
  print_confirm_line(table, p);
  EXPECT_NE(table.str().find("s M=64: auto against the best, timed again (9 replays of 32 calls): 1.050"),
            std::string::npos)
      << table.str();
  std::ostringstream untimed;
  print_confirm_line(untimed, q);
  EXPECT_EQ(untimed.str(), "s M=128: auto against the best, not timed again: no other tactic was timed\n");

  std::ostringstream csv;
  write_csv(csv, {p, q});
  const std::string s = csv.str();
  EXPECT_NE(s.find(",confirm_best_tactic,confirm_auto_us,confirm_best_us,confirm_noise,confirm_regret,"
                   "confirm_rounds,confirm_round_ratios,confirm_opponents,confirm_untuned_ratios\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find(",cublaslt:b,9.450,9.000,0.0000,1.0500,1,1.0500,cublaslt:b,\n"), std::string::npos) << s;
  EXPECT_NE(s.find(",,,,,,0,,,\n"), std::string::npos) << s;  // q: no tactic, numbers, rounds or opponents
  std::ostringstream without;
  write_csv(without, {point()});
  EXPECT_EQ(without.str().find("confirm_"), std::string::npos) << "no confirm attempted: no columns";

  std::ostringstream json;
  write_json(json, {p});
  EXPECT_NE(json.str().find("\"confirm\": {\"ran\": true, \"best_tactic\": \"cublaslt:b\""), std::string::npos)
      << json.str();

  std::ostringstream summary;
  print_confirm_summary(summary, {p, q});
  // First pass: 9.6 / 9.0 = 1.067 and 1.000; timed again: 1.050 and 1.000.
  EXPECT_NE(summary.str().find("first pass                         geomean 1.033, max 1.067, 1 of 2 within 1.03"),
            std::string::npos)
      << summary.str();
  EXPECT_NE(summary.str().find("timed again head to head (1 points) geomean 1.025, max 1.050, 1 of 2 within 1.03"),
            std::string::npos)
      << summary.str();
}

TEST(ConfirmAuto, ARoundWithTheBestFirstPutsItAtTheEndsAndReportsTheSameWay) {
  BenchPoint p = point();
  FakeTimer timer;
  timer.true_us = {{kAuto.name(), 9.45}, {kCublasBest.name(), 9.0}};
  timer.reference_repeat_scale = 1.04;  // the list's last entry, a repeat of its first: here the best
  const AutoConfirm c = confirm_auto(timer, p, /*best_first=*/true);
  ASSERT_TRUE(c.ran) << c.note;
  ASSERT_EQ(timer.measured.size(), 1u);
  EXPECT_EQ(timer.measured[0], (std::vector<Tactic>{kCublasBest, kAuto, kAuto, kCublasBest}));
  EXPECT_DOUBLE_EQ(c.auto_us, 9.45);
  EXPECT_NEAR(c.best_us, 0.5 * (9.0 + 9.0 * 1.04), 1e-12);
  EXPECT_NEAR(c.noise, 0.04, 1e-12);
  ASSERT_EQ(c.round_ratios.size(), 1u);
  EXPECT_NEAR(c.round_ratios[0], c.auto_us / c.best_us, 1e-12);
}

// A single head-to-head round can move a point across the bar: a point's verdict is the median of
// its rounds, and every round's ratio stays in the report.
TEST(ConfirmAuto, TheVerdictIsTheMedianRoundWithEveryRoundBesideIt) {
  BenchPoint p = point();
  FakeTimer timer;
  std::vector<AutoConfirm> rounds;
  for (double auto_us : {9.45, 8.91, 9.18}) {  // auto / best = 1.05, 0.99, 1.02
    timer.true_us = {{kAuto.name(), auto_us}, {kCublasBest.name(), 9.0}};
    rounds.push_back(confirm_auto(timer, p, rounds.size() % 2 == 1));
  }
  const AutoConfirm v = median_round(rounds);
  ASSERT_TRUE(v.ran);
  EXPECT_DOUBLE_EQ(v.auto_us, 9.18);
  EXPECT_NEAR(v.regret(), 1.02, 1e-12);
  ASSERT_EQ(v.round_ratios.size(), 3u);
  EXPECT_NEAR(v.round_ratios[0], 1.05, 1e-12);
  EXPECT_NEAR(v.round_ratios[1], 0.99, 1e-12);
  EXPECT_NEAR(v.round_ratios[2], 1.02, 1e-12);
  EXPECT_NEAR(v.first_round_regret(), 1.05, 1e-12);
  EXPECT_TRUE(v.note.empty()) << v.note;

  // Even counts take the slower of the two middle rounds: a tie between rounds does not pass a point.
  const AutoConfirm two = median_round({rounds[1], rounds[0]});
  EXPECT_NEAR(two.regret(), 1.05, 1e-12);
  EXPECT_NEAR(two.first_round_regret(), 1.0, 1e-12);  // auto / best 0.99: regret 1.000

  p.confirm = v;
  std::ostringstream table;
  print_confirm_line(table, p);
  EXPECT_NE(table.str().find(": 1.020 ("), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("; median of 3 rounds, auto / best 1.050 0.990 1.020\n"), std::string::npos)
      << table.str();
  std::ostringstream csv;
  write_csv(csv, {p});
  EXPECT_NE(csv.str().find(",1.0200,3,1.0500;0.9900;1.0200,cublaslt:b,\n"), std::string::npos) << csv.str();
  std::ostringstream json;
  write_json(json, {p});
  EXPECT_NE(json.str().find("\"round_ratios\": [1.05, 0.99, 1.02]"), std::string::npos) << json.str();
  std::ostringstream summary;
  print_confirm_summary(summary, {p});
  EXPECT_NE(summary.str().find("timed again, the first round alone geomean 1.050, max 1.050, 0 of 1 within 1.03"),
            std::string::npos)
      << summary.str();
  EXPECT_NE(summary.str().find("timed again, median round (1 points) geomean 1.020, max 1.020, 1 of 1 within 1.03"),
            std::string::npos)
      << summary.str();
}

TEST(ConfirmAuto, FailedRoundsLeaveTheMedianOfTheOthersAndSaySo) {
  BenchPoint p = point();
  FakeTimer timer;
  timer.true_us = {{kAuto.name(), 9.3}};  // the best's tactic fails
  const AutoConfirm failed = confirm_auto(timer, p);
  timer.true_us = {{kAuto.name(), 9.36}, {kCublasBest.name(), 9.0}};
  const AutoConfirm ok = confirm_auto(timer, p);
  const AutoConfirm v = median_round({failed, ok, failed});
  ASSERT_TRUE(v.ran);
  EXPECT_NEAR(v.regret(), 1.04, 1e-12);
  EXPECT_EQ(v.note, "2 of 3 rounds failed");
  ASSERT_EQ(v.round_ratios.size(), 3u);
  EXPECT_TRUE(std::isnan(v.round_ratios[0]) && std::isnan(v.round_ratios[2]));
  EXPECT_TRUE(std::isnan(v.first_round_regret()));
  p.confirm = v;
  std::ostringstream csv;
  write_csv(csv, {p});
  EXPECT_NE(csv.str().find(",3,nan;1.0400;nan,cublaslt:b,\n"), std::string::npos) << csv.str();

  const AutoConfirm none = median_round({failed, failed});
  EXPECT_FALSE(none.ran);
  EXPECT_NE(none.note.find("failed"), std::string::npos) << none.note;
  EXPECT_THROW(median_round({}), std::invalid_argument);
}

// Where auto ran a tuned choice, untuned auto's tactic is timed in every round too (second, after
// the fastest other), and each round keeps auto / untuned auto: the tuned-never-slower count is
// judged on their median (tuned_slower_points).
TEST(ConfirmAuto, UntunedAutoIsTimedInEveryRoundWhereAutoRanATunedChoice) {
  const Tactic untuned{"cublaslt", "u"};
  BenchPoint p = point();
  p.entries.push_back({kUntunedAutoLabel, true, 9.8, untuned.name(), ""});
  p.timings.push_back(timing(untuned, 9.8));
  EXPECT_EQ(confirm_opponents(p), (std::vector<std::string>{kCublasBest.name(), untuned.name()}));
  FakeTimer timer;
  std::vector<AutoConfirm> rounds;
  for (double untuned_us : {9.0, 10.0, 9.5}) {  // auto (9.5) / untuned auto: 1.056, 0.95, 1.0
    timer.true_us = {{kAuto.name(), 9.5}, {kCublasBest.name(), 9.4}, {untuned.name(), untuned_us}};
    rounds.push_back(confirm_auto(timer, p, rounds.size() % 2 == 1));
    ASSERT_TRUE(rounds.back().ran) << rounds.back().note;
    EXPECT_DOUBLE_EQ(rounds.back().untuned_us, untuned_us);
  }
  EXPECT_EQ(timer.measured[0], (std::vector<Tactic>{kAuto, kCublasBest, untuned, untuned, kCublasBest, kAuto}));
  const AutoConfirm v = median_round(rounds);
  ASSERT_EQ(v.untuned_ratios.size(), 3u);
  EXPECT_NEAR(v.untuned_ratios[0], 9.5 / 9.0, 1e-12);
  EXPECT_NEAR(v.untuned_ratio(), 1.0, 1e-12);
  // Even counts take the slower of the two middle rounds, as the regret's verdict does.
  EXPECT_NEAR(median_round({rounds[0], rounds[1]}).untuned_ratio(), 9.5 / 9.0, 1e-12);
  p.confirm = v;
  std::ostringstream csv;
  write_csv(csv, {p});
  EXPECT_NE(csv.str().find(",1.0556;0.9500;1.0000\n"), std::string::npos) << csv.str();

  // Where auto runs untuned auto's own tactic, or it is already the fastest other, it is not added.
  BenchPoint same = point();
  same.entries.push_back({kUntunedAutoLabel, true, 9.6, kAuto.name(), ""});
  EXPECT_EQ(confirm_opponents(same), (std::vector<std::string>{kCublasBest.name()}));
  EXPECT_TRUE(std::isnan(confirm_auto(timer, same).untuned_ratio()));
  BenchPoint fastest = point();
  fastest.entries.push_back({kUntunedAutoLabel, true, 9.0, kCublasBest.name(), ""});
  EXPECT_EQ(confirm_opponents(fastest), (std::vector<std::string>{kCublasBest.name()}));
  timer.true_us = {{kAuto.name(), 9.5}, {kCublasBest.name(), 9.0}};
  EXPECT_NEAR(confirm_auto(timer, fastest).untuned_ratio(), 9.5 / 9.0, 1e-12);
}

}  // namespace
}  // namespace fp8gemm
