// Canonical tactic names for cuBLASLt algorithms, built from the algorithm's config attributes
// (never a heuristic list index) and parsed back into the same configuration:
//   algo=66,tile=128x128x128,stages=auto,splitk=1,red=0,swizzle=0,custom=0,inner=0,
//   cluster=2x1x1,fast_accum=1
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace fp8gemm::cublaslt {

struct AlgoConfig {
  int32_t algo_id = 0;
  uint32_t tile = 0;
  uint32_t stages = 0;
  int32_t splitk = 1;
  uint32_t reduction = 0;
  uint32_t swizzle = 0;
  uint32_t custom = 0;
  uint16_t inner = 0;
  uint16_t cluster = 0;
  bool fast_accum = true;

  bool operator==(const AlgoConfig& o) const;
};

std::string format_config(const AlgoConfig& c);
// Throws Error(kInvalidArgument) naming the field that does not parse.
AlgoConfig parse_config(std::string_view config);

// Reads / writes the config attributes of an initialized algo.
AlgoConfig read_config(const cublasLtMatmulAlgo_t& algo, bool fast_accum);
void write_config(cublasLtMatmulAlgo_t& algo, const AlgoConfig& c);

}  // namespace fp8gemm::cublaslt
