// The bench's reference column is named for what it is: cuBLASLt's heuristic as torch._scaled_mm
// asks it (fp8gemm's floor), above the table and in the geomeans' title; the CSV keeps its
// cublaslt_default_* column names.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tools/common/report.h"

namespace fp8gemm {
namespace {

BenchPoint one_point() {
  BenchPoint p;
  p.shape = "issue42.5120x20480";
  p.problem.m = 128, p.problem.n = 5120, p.problem.k = 20480;
  p.entries = {{"cublaslt_default", true, 29.9, "cublaslt:algo=66,tile=64x80", ""},
               {"auto", true, 29.9, "cublaslt:algo=66,tile=64x80", ""}};
  return p;
}

TEST(ReportDefaultColumn, TheTableSaysWhatTheDefaultIs) {
  std::ostringstream with_header, without;
  print_point(with_header, one_point(), true);
  print_point(without, one_point(), false);
  const std::string s = with_header.str();
  EXPECT_EQ(s.find(kDefaultColumnMeaning), 0u) << s;
  EXPECT_NE(std::string(kDefaultColumnMeaning).find("heuristic as torch._scaled_mm asks it"), std::string::npos);
  EXPECT_EQ(without.str().find("torch._scaled_mm"), std::string::npos) << "the legend is printed once, with the header";
}

TEST(ReportDefaultColumn, TheGeomeansSayWhatTheyAreAgainst) {
  std::ostringstream os;
  print_geomeans(os, {one_point()});
  EXPECT_NE(os.str().find("faster than cuBLASLt's heuristic as torch._scaled_mm asks it"), std::string::npos)
      << os.str();
}

TEST(ReportDefaultColumn, TheCsvColumnsKeepTheirNames) {
  std::ostringstream os;
  write_csv(os, {one_point()});
  EXPECT_EQ(os.str().find("shape,batch,M,N,K,dtypes,noise,cublaslt_default_us"), 0u) << os.str();
}

}  // namespace
}  // namespace fp8gemm
