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

AlgoConfig fixed_tile(uint32_t tile) {
  AlgoConfig c;
  c.algo_id = 66;
  c.tile = tile;
  c.custom = 3;
  c.cluster = CUBLASLT_CLUSTER_SHAPE_1x2x1;
  return c;
}

TEST(CublasLtNames, FittedTileNamesRoundTripAndAreChecked) {
  AlgoConfig c = fixed_tile(0);
  c.fit_rows = 128;
  c.fit_parts = 2;
  const std::string name = format_config(c);
  EXPECT_EQ(name, "algo=66,tile=128xM/2,stages=undefined,splitk=1,red=0,swizzle=0,custom=3,inner=0,cluster=1x2x1,fast_accum=1");
  EXPECT_TRUE(parse_config(name) == c);
  EXPECT_TRUE(parse_config(name).fitted());
  for (const char* tile : {"128xM/0", "128xM/5", "0xM/2", "xM/2", "128xM/", "128xM/2x"}) {
    std::string bad = name;
    bad.replace(bad.find("128xM/2"), 7, tile);
    EXPECT_THROW(parse_config(bad), Error) << bad;
  }
}

// How far above M a tactic keeps its M tile count (the tuner lets a choice hold up to there).
TEST(CublasLtNames, SameTilesUpTo) {
  EXPECT_EQ(same_tiles_up_to(fixed_tile(CUBLASLT_MATMUL_TILE_128x152), 299), 304);  // 2 x 152
  EXPECT_EQ(same_tiles_up_to(fixed_tile(CUBLASLT_MATMUL_TILE_128x176), 683), 704);  // 4 x 176
  EXPECT_EQ(same_tiles_up_to(fixed_tile(CUBLASLT_MATMUL_TILE_128x128), 256), 256);  // full tiles: no room
  EXPECT_EQ(same_tiles_up_to(fixed_tile(CUBLASLT_MATMUL_TILE_UNDEFINED), 300), 300);
  AlgoConfig fitted = fixed_tile(0);
  fitted.fit_rows = 128;
  fitted.fit_parts = 4;
  EXPECT_EQ(same_tiles_up_to(fitted, 299), 320);  // resolves to 4 x 80 at 299
  fitted.fit_parts = 2;
  EXPECT_EQ(same_tiles_up_to(fitted, 299), 304);
}

TEST(CublasLtNames, FittedHeightSplitsMAndRoundsUpToEight) {
  EXPECT_EQ(fitted_height(1, 1), 8);
  EXPECT_EQ(fitted_height(8, 1), 8);
  EXPECT_EQ(fitted_height(9, 1), 16);
  EXPECT_EQ(fitted_height(300, 2), 152);
  EXPECT_EQ(fitted_height(384, 2), 192);
  EXPECT_EQ(fitted_height(257, 2), 136);
  EXPECT_EQ(fitted_height(300, 3), 104);
  EXPECT_EQ(fitted_height(200, 2), 104);
}

// Only a tile cut exactly to M (what cuBLASLt's heuristic lists at that M) becomes fitted; the
// fitted form resolves to the same tile at that M and keeps the tile count at other M.
TEST(CublasLtNames, OnlyTilesCutExactlyToMBecomeFitted) {
  AlgoConfig f;
  ASSERT_TRUE(fit_to_m(fixed_tile(CUBLASLT_MATMUL_TILE_128x152), 300, f));
  EXPECT_EQ(format_config(f).substr(0, 22), "algo=66,tile=128xM/2,s");
  ASSERT_TRUE(fit_to_m(fixed_tile(CUBLASLT_MATMUL_TILE_256x104), 300, f));
  EXPECT_EQ(f.fit_rows, 256u);
  EXPECT_EQ(f.fit_parts, 3u);
  EXPECT_FALSE(fit_to_m(fixed_tile(CUBLASLT_MATMUL_TILE_128x128), 300, f));   // 3 tiles of 128: not cut to 300
  EXPECT_FALSE(fit_to_m(fixed_tile(CUBLASLT_MATMUL_TILE_128x128), 1024, f));  // 8 tiles > kMaxFitParts
  EXPECT_FALSE(fit_to_m(fixed_tile(CUBLASLT_MATMUL_TILE_UNDEFINED), 300, f));
  ASSERT_TRUE(fit_to_m(fixed_tile(CUBLASLT_MATMUL_TILE_64x8), 3, f));
  EXPECT_EQ(f.fit_parts, 1u);

  ASSERT_TRUE(fit_to_m(fixed_tile(CUBLASLT_MATMUL_TILE_128x192), 384, f));
  AlgoConfig at;
  ASSERT_TRUE(resolve_at_m(f, 384, 0, at));
  EXPECT_TRUE(at == fixed_tile(CUBLASLT_MATMUL_TILE_128x192));
  ASSERT_TRUE(resolve_at_m(f, 300, 0, at));
  EXPECT_TRUE(at == fixed_tile(CUBLASLT_MATMUL_TILE_128x152));
  ASSERT_TRUE(resolve_at_m(f, 300, 8, at));
  EXPECT_TRUE(at == fixed_tile(CUBLASLT_MATMUL_TILE_128x160));
  AlgoConfig huge = f;
  huge.fit_rows = 100000;  // no such tile: resolving says so instead of guessing
  EXPECT_FALSE(resolve_at_m(huge, 300, 0, at));
  EXPECT_EQ(tile_rows(CUBLASLT_MATMUL_TILE_64x152), 64u);
  EXPECT_EQ(tile_cols(CUBLASLT_MATMUL_TILE_64x152), 152u);
}

}  // namespace
}  // namespace fp8gemm::cublaslt
