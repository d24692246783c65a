// Every tactic the default table names parses back into the same name through its backend's own
// parser (cuBLASLt algo configs, CUTLASS kernel configs; small_m's names: test_small_m_config.cpp),
// and every CUTLASS kernel it names is a row of configs.def: a table generated before a change to
// a backend's names or kernel list would otherwise fall back to the floor without a word. No GPU.
#include <gtest/gtest.h>

#include <string>

#include "backends/cublaslt/algo_name.h"
#include "backends/cutlass/config.h"
#include "core/decision_tables.h"

namespace fp8gemm {
namespace {

TEST(DefaultTableNames, EveryCublasLtAndCutlassTacticRoundTrips) {
  int cublaslt = 0, cutlass = 0;
  for (const ExactRow& r : decision_tables(90).exact) {
    const std::string name = r.tactic;
    const size_t colon = name.find(':');
    ASSERT_NE(colon, std::string::npos) << name;
    const std::string backend = name.substr(0, colon), config = name.substr(colon + 1);
    if (backend == "cublaslt") {
      if (config == "heuristic") continue;  // the adaptive floor: not a fixed config
      EXPECT_EQ(cublaslt::format_config(cublaslt::parse_config(config)), config) << name;
      ++cublaslt;
    } else if (backend == "cutlass") {
      const auto c = cutlass_backend::KernelConfig::parse(config);
      ASSERT_TRUE(c) << name;
      EXPECT_EQ(c->name(), config) << name;
      EXPECT_NE(cutlass_backend::find_row(c->kernel()), nullptr) << name << " is not a row of configs.def";
      ++cutlass;
    } else {
      EXPECT_EQ(backend, "small_m") << name;
    }
  }
  EXPECT_GT(cublaslt, 0);
  EXPECT_GT(cutlass, 0);
}

}  // namespace
}  // namespace fp8gemm
