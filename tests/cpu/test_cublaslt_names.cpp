// cuBLASLt tactic names: formatted from config attributes and parsed back exactly; garbage is
// refused with an error naming the field.
#include <gtest/gtest.h>

#include "backends/cublaslt/algo_name.h"
#include "fp8gemm/error.h"

namespace fp8gemm::cublaslt {
namespace {

TEST(CublasLtNames, RoundTrip) {
  AlgoConfig c;
  c.algo_id = 66;
  c.tile = CUBLASLT_MATMUL_TILE_128x128;
  c.stages = CUBLASLT_MATMUL_STAGES_128xAUTO;
  c.splitk = 4;
  c.reduction = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  c.swizzle = 1;
  c.custom = 3;
  c.inner = 2;
  c.cluster = CUBLASLT_CLUSTER_SHAPE_2x1x1;
  c.fast_accum = false;
  const std::string name = format_config(c);
  EXPECT_EQ(name, "algo=66,tile=128x128,stages=128xauto,splitk=4,red=2,swizzle=1,custom=3,inner=2,cluster=2x1x1,fast_accum=0");
  EXPECT_TRUE(parse_config(name) == c);
}

TEST(CublasLtNames, EveryEnumValueRoundTrips) {
  for (uint32_t tile = 0; tile < CUBLASLT_MATMUL_TILE_END; ++tile)
    for (uint32_t stages : {0u, uint32_t(CUBLASLT_MATMUL_STAGES_64x3)}) {
      AlgoConfig c;
      c.tile = tile;
      c.stages = stages;
      EXPECT_TRUE(parse_config(format_config(c)) == c) << format_config(c);
    }
  for (uint16_t cl = 0; cl < CUBLASLT_CLUSTER_SHAPE_END; ++cl) {
    AlgoConfig c;
    c.cluster = cl;
    EXPECT_TRUE(parse_config(format_config(c)) == c) << format_config(c);
  }
  AlgoConfig future;
  future.tile = 100000;  // a value newer than our header still round-trips
  EXPECT_TRUE(parse_config(format_config(future)) == future);
}

TEST(CublasLtNames, RejectsGarbage) {
  const AlgoConfig c;
  const std::string good = format_config(c);
  for (std::string bad : {std::string(""), std::string("algo=66"), std::string("tile=8x8,algo=1"),
                          good + ",extra=1", good.substr(0, good.size() - 1) + "7",
                          std::string("algo=-1,tile=undefined,stages=undefined,splitk=1,red=0,swizzle=0,custom=0,inner=0,cluster=auto,fast_accum=1"),
                          std::string("algo=1,tile=banana,stages=undefined,splitk=1,red=0,swizzle=0,custom=0,inner=0,cluster=auto,fast_accum=1"),
                          std::string("algo=1,tile=undefined,stages=undefined,splitk=0,red=0,swizzle=0,custom=0,inner=0,cluster=auto,fast_accum=1")}) {
    EXPECT_THROW(parse_config(bad), Error) << bad;
  }
}

}  // namespace
}  // namespace fp8gemm::cublaslt
