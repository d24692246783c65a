// Canonical tactic names for cuBLASLt algorithms, built from the algorithm's config attributes
// (never a heuristic list index) and parsed back into the same configuration:
//   algo=66,tile=128x128x128,stages=auto,splitk=1,red=0,swizzle=0,custom=0,inner=0,
//   cluster=2x1x1,fast_accum=1
// A tile may also be fitted to M: "tile=128xM/2" is a 128-row tile (our n side) whose height
// (our m side) is M split in 2, rounded up to 8 -- 128x152 at M=300, 128x192 at M=384. Such a
// name means one kernel per M; it keeps the number of M tiles (so the CTA count and waves)
// across an M bucket, the way cuBLASLt's heuristic cuts its tiles to M (docs/tuning.md).
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
  // Fitted tile (fit_parts > 0): `tile` is unused; fit_rows x fitted_height(m, fit_parts).
  uint32_t fit_rows = 0;
  uint32_t fit_parts = 0;

  bool operator==(const AlgoConfig& o) const;
  bool fitted() const { return fit_parts > 0; }
};

// Fitted tiles are offered for at most this many M tiles: beyond it, keeping the tile count
// over a bucket would shrink large-M tiles below their efficient height.
inline constexpr uint32_t kMaxFitParts = 4;

// ceil(m / parts) rounded up to a multiple of 8 (cuBLASLt's tile heights step by 8).
int64_t fitted_height(int64_t m, uint32_t parts);

// The tile enum named "<rows>x<cols>", if cuBLASLt has one; the rows and cols of a tile enum
// (0 for one without a "RxC" name).
bool tile_enum(uint32_t rows, uint32_t cols, uint32_t& tile);
uint32_t tile_rows(uint32_t tile);
uint32_t tile_cols(uint32_t tile);

// The fitted form of a fixed config whose tile height is exactly fitted to m (the height
// fitted_height(m, parts) for the parts = ceil(m / height) <= kMaxFitParts); otherwise false.
bool fit_to_m(const AlgoConfig& fixed, int64_t m, AlgoConfig& fitted);

// The fixed config a fitted one means at M = m with its height raised by `extra` (a multiple
// of 8, for when cuBLASLt lacks that exact tile); false if no such tile enum exists.
bool resolve_at_m(const AlgoConfig& c, int64_t m, uint32_t extra, AlgoConfig& fixed);

// The largest M >= m that `c` covers with as many M tiles as at m (a fixed tile of height h:
// ceil(m/h) tiles of h; a fitted one: its parts times the height it resolves to at m); m when
// the tile has no RxC name.
int64_t same_tiles_up_to(const AlgoConfig& c, int64_t m);

std::string format_config(const AlgoConfig& c);
// Throws Error(kInvalidArgument) naming the field that does not parse.
AlgoConfig parse_config(std::string_view config);

// Reads / writes the config attributes of an initialized algo.
AlgoConfig read_config(const cublasLtMatmulAlgo_t& algo, bool fast_accum);
void write_config(cublasLtMatmulAlgo_t& algo, const AlgoConfig& c);

}  // namespace fp8gemm::cublaslt
