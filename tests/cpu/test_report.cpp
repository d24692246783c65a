// Bench report: roofline, metrics, geomeans per M range, table, CSV quoting, JSON shape.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "tools/common/report.h"

namespace fp8gemm {
namespace {

BenchPoint point(int64_t m, double default_us, double best_us, double auto_us) {
  BenchPoint p;
  p.shape = "llama8b.qkv";
  p.problem.m = m;
  p.problem.n = 6144;
  p.problem.k = 4096;
  p.noise = 0.004;
  p.entries = {{"cublaslt_default", true, default_us, "cublaslt:algo=66,tile=128x128", ""},
               {"cublaslt_best", true, best_us, "cublaslt:algo=71,tile=64x128", ""},
               {"auto", true, auto_us, "cutlass:sm90_x", ""}};
  Timing t;
  t.tactic = Tactic{"cublaslt", "algo=66,tile=128x128"};
  t.ok = true;
  t.median_us = default_us;
  t.samples_us = {default_us, default_us};
  p.timings = {t};
  return p;
}

TEST(Report, RooflineIsMaxOfBandwidthAndCompute) {
  // 4.5e6 bytes at 4.5 TB/s = 1 us; 1979e6 flops at 1979 TFLOP/s = 1 us.
  EXPECT_DOUBLE_EQ(roofline_us(0, 4.5e6), 1.0);
  EXPECT_DOUBLE_EQ(roofline_us(2 * 1979e6, 4.5e6), 2.0);
  EXPECT_DOUBLE_EQ(roofline_us(1979e6, 9e6), 2.0);
}

TEST(Report, MetricsOfAnEntry) {
  const BenchPoint p = point(1, 10, 8, 9);
  const EntryMetrics d = metrics_of(p, p.entries[0]);
  EXPECT_DOUBLE_EQ(d.ratio, 1.0);
  EXPECT_NEAR(d.tflops, p.problem.flops() / 10e-6 / 1e12, 1e-9);
  EXPECT_NEAR(d.gbps, p.problem.min_bytes() / 10e-6 / 1e9, 1e-6);
  const double roof = roofline_us(p.problem.flops(), p.problem.min_bytes());
  EXPECT_NEAR(d.roofline_pct, 100 * roof / 10, 1e-9);
  EXPECT_DOUBLE_EQ(metrics_of(p, p.entries[1]).ratio, 10.0 / 8);
  BenchEntry failed{"cutlass_best", false, 0, "", "no tactic"};
  EXPECT_EQ(metrics_of(p, failed).ratio, 0);
}

TEST(Report, GeomeansPerMRange) {
  // M=8: best ratio 1.25 (10/8); M=64: 1.0 exactly; M=128: 1.1; M=4096: 0.5 for auto.
  std::vector<BenchPoint> pts = {point(8, 10, 8, 10), point(64, 10, 10, 10), point(128, 11, 10, 11),
                                 point(4096, 10, 10, 20)};
  const std::vector<GeomeanRow> rows = geomeans(pts);
  ASSERT_EQ(rows.size(), 3u);  // cublaslt_best, auto, best
  EXPECT_EQ(rows[0].label, "cublaslt_best");
  EXPECT_EQ(rows[2].label, "best");
  EXPECT_NEAR(rows[0].geomean[0], std::sqrt(1.25 * 1.0), 1e-12);  // M <= 64
  EXPECT_EQ(rows[0].count[0], 2);
  EXPECT_NEAR(rows[0].geomean[1], 1.1, 1e-12);                    // 64 < M <= 256
  EXPECT_NEAR(rows[1].geomean[2], 0.5, 1e-12);                    // auto, M > 256
  EXPECT_NEAR(rows[1].geomean[3], std::pow(1.0 * 1.0 * 1.0 * 0.5, 0.25), 1e-12);
  EXPECT_EQ(rows[2].count[3], 4);
  // best never below 1: the default itself is an entry.
  EXPECT_NEAR(rows[2].geomean[2], 1.0, 1e-12);
}

TEST(Report, EmptyRangeIsNaNWithZeroCount) {
  const std::vector<GeomeanRow> rows = geomeans({point(1, 10, 9, 10)});
  EXPECT_EQ(rows[0].count[2], 0);
  EXPECT_TRUE(std::isnan(rows[0].geomean[2]));
}

TEST(Report, TableShowsEveryEntryAndTheNoise) {
  std::ostringstream os;
  BenchPoint p = point(64, 10, 8, 9);
  p.entries.push_back({"cutlass_best", false, 0, "", "backend cutlass: no kernel for K % 128"});
  p.notes.push_back("small_m skipped: unavailable");
  print_point(os, p, true);
  const std::string s = os.str();
  for (const char* want : {"x default", "llama8b.qkv", "cublaslt_default", "cublaslt_best", "1.250", "0.4%",
                           "cublaslt:algo=71,tile=64x128", "no kernel for K % 128", "small_m skipped"})
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
  std::ostringstream g;
  print_geomeans(g, {p});
  EXPECT_NE(g.str().find("64<M<=256"), std::string::npos) << g.str();
  EXPECT_NE(g.str().find("1.250"), std::string::npos) << g.str();
}

// A backend with no tactic at a point is not a failure: its row says why, and "failed" appears
// only where something ran and failed.
TEST(Report, ABackendWithoutATacticIsNotCalledFailed) {
  std::ostringstream os;
  BenchPoint p = point(64, 10, 8, 9);
  p.entries.push_back({"small_m_best", false, 0, "", "n/a (no tactic for this problem)"});
  p.entries.push_back({"cutlass_best", false, 0, "cutlass:sm90_x", "launch failed"});
  print_point(os, p, true);
  const std::string s = os.str();
  EXPECT_EQ(s.find("failed: n/a"), std::string::npos) << s;
  EXPECT_NE(s.find("  n/a (no tactic for this problem)"), std::string::npos) << s;
  EXPECT_NE(s.find("cutlass:sm90_x: launch failed"), std::string::npos) << s;
}

TEST(Report, CsvQuotesTacticNamesWithCommas) {
  std::ostringstream os;
  write_csv(os, {point(16, 10, 8, 9)});
  const std::string s = os.str();
  EXPECT_EQ(s.find("shape,batch,M,N,K,dtypes,noise,cublaslt_default_us"), 0u) << s;
  EXPECT_NE(s.find("\"cublaslt:algo=66,tile=128x128\""), std::string::npos) << s;
  EXPECT_NE(s.find("auto_ratio"), std::string::npos);
  // Header and row have the same number of fields outside quotes.
  auto fields = [](const std::string& line) {
    int n = 1;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      n += c == ',' && !quoted;
    }
    return n;
  };
  const size_t nl = s.find('\n');
  EXPECT_EQ(fields(s.substr(0, nl)), fields(s.substr(nl + 1, s.find('\n', nl + 1) - nl - 1)));
}

TEST(Report, JsonHasEntriesTimingsAndNoNaN) {
  BenchPoint p = point(16, 10, 8, 9);
  p.entries.push_back({"cutlass_best", false, NAN, "", "quote \" and \\ and \n"});
  std::ostringstream os;
  write_json(os, {p});
  const std::string s = os.str();
  EXPECT_EQ(s.find("nan"), std::string::npos) << s;
  EXPECT_NE(s.find("\"samples_us\": [10, 10]"), std::string::npos) << s;
  EXPECT_NE(s.find("quote \\\" and \\\\ and \\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\"ratio\": 1.25"), std::string::npos) << s;
}

}  // namespace
}  // namespace fp8gemm

namespace fp8gemm {
namespace {

// The tuned-never-slower count: tuned auto slower than untuned auto by more than the tuner's own
// threshold (max(1.5%, 2x the point's noise)); points where both ran one tactic are not counted.
TEST(Report, TunedSlowerCountsOnlyPointsBeyondTheTunersThreshold) {
  auto with_untuned = [](double auto_us, double untuned_us, const std::string& untuned_tactic, double noise) {
    BenchPoint p = point(200, 10, 9, auto_us);
    p.noise = noise;
    p.entries.push_back({kUntunedAutoLabel, true, untuned_us, untuned_tactic, ""});
    return p;
  };
  const std::vector<BenchPoint> points = {
      with_untuned(10.1, 10.0, "cublaslt:algo=66,tile=128x128", 0.001),  // 1%: within 1.5%
      with_untuned(10.3, 10.0, "cublaslt:algo=66,tile=128x128", 0.001),  // 3%: slower
      with_untuned(10.3, 10.0, "cublaslt:algo=66,tile=128x128", 0.02),   // 3% within 2x 2% noise
      with_untuned(12.0, 10.0, "cutlass:sm90_x", 0.001),                 // the same tactic: not tuned
      with_untuned(9.0, 10.0, "cublaslt:algo=66,tile=128x128", 0.001)};  // faster
  const std::vector<const BenchPoint*> slower = tuned_slower_points(points);
  ASSERT_EQ(slower.size(), 1u);
  EXPECT_EQ(slower[0], &points[1]);
  std::ostringstream os;
  print_tuned_slower(os, points);
  EXPECT_NE(os.str().find("1 of the 4 points that ran a tuned choice"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("x0.971 untuned auto's speed (first pass)"), std::string::npos) << os.str();
  std::ostringstream none;
  print_tuned_slower(none, {point(200, 10, 9, 9)});
  EXPECT_EQ(none.str(), "");
}

// Where the head-to-head rounds timed untuned auto, their median decides, not the first pass.
TEST(Report, TunedSlowerIsJudgedOnTheHeadToHeadRoundsWhereTheyTimedUntunedAuto) {
  auto with_rounds = [](double auto_us, double untuned_us, std::vector<double> rounds) {
    BenchPoint p = point(200, 10, 9, auto_us);
    p.noise = 0.001;
    p.entries.push_back({kUntunedAutoLabel, true, untuned_us, "cublaslt:algo=66,tile=128x128", ""});
    p.confirm.ran = true;
    p.confirm.untuned_ratios = std::move(rounds);
    return p;
  };
  const std::vector<BenchPoint> points = {
      with_rounds(10.5, 10.0, {1.0, 0.99, 1.01}),   // 5% slower in the first pass, even head to head
      with_rounds(10.0, 10.0, {1.04, 1.05, 1.03}),  // even in the first pass, 4% slower head to head
      with_rounds(10.5, 10.0, {})};                 // no head-to-head time: the first pass's 5%
  const std::vector<const BenchPoint*> slower = tuned_slower_points(points);
  ASSERT_EQ(slower.size(), 2u);
  EXPECT_EQ(slower[0], &points[1]);
  EXPECT_EQ(slower[1], &points[2]);
  std::ostringstream os;
  print_tuned_slower(os, points);
  EXPECT_NE(os.str().find("2 of the 3 points that ran a tuned choice (2 judged on the head-to-head rounds' median, "
                          "the rest on the first pass; the first pass alone: 2)"),
            std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("M=200: x0.962 untuned auto's speed (head to head)"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("M=200: x0.952 untuned auto's speed (first pass)"), std::string::npos) << os.str();
}

}  // namespace
}  // namespace fp8gemm
