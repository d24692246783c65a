// The small_m tactic: a plain struct, its canonical name, and the rules that decide which
// configurations exist and which problems they run. Host-only, so the CPU tests cover it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fp8gemm/device.h"
#include "fp8gemm/types.h"

namespace fp8gemm::small_m {

// Largest M the kernel family runs: four 8-column MMA tiles of activations.
constexpr int kMaxM = 32;
// Split-K is reduced inside a thread-block cluster (8 is the portable cluster size limit).
constexpr int kMaxSplitK = 8;
// One warp reads 64 bytes of K per weight row per step (4 lanes x 16 bytes).
constexpr int kChunkK = 64;

struct Config {
  int rows = 32;    // weight rows (output columns n) per block: 16 x row tiles, shared by its warps
  int splitk = 1;   // blocks of one cluster that split K; reduced in fixed order through DSMEM
  int warps = 8;    // warps per block; they split the block's K range and reduce in fixed order
  int stages = 2;   // 64-byte K chunks per load batch; each warp has two batches in flight
  bool pdl = false; // programmatic dependent launch: prefetch weights before waiting

  int row_tiles() const { return rows / 16; }
  // "rows=32,splitk=1,warps=8,stages=2,pdl=0"
  std::string to_string() const;
  bool operator==(const Config& o) const {
    return rows == o.rows && splitk == o.splitk && warps == o.warps && stages == o.stages && pdl == o.pdl;
  }
};

// Parses a canonical config string; throws Error(kInvalidArgument) for anything that is not
// exactly what to_string() prints for a configuration that exists (see config_exists).
Config parse_config(std::string_view text);

// Whether the kernel family has an instantiation for `c` (independent of the problem).
Verdict config_exists(const Config& c);

// MMA tiles of 8 activation rows a problem needs.
inline int m_tiles(int64_t m) { return int((m + 7) / 8); }

// Whether `c` runs `p` on a device of compute capability `cc` (90 for sm_90a), with the reason.
Verdict can_implement(const Problem& p, const Config& c, int cc);

// Dynamic shared memory one block of `c` needs for `p` (the fixed-order reductions).
size_t shared_bytes(const Problem& p, const Config& c);

// The rule used on a cache miss: fills the SMs from (m, n, k, sm_count). Throws
// Error(kUnsupported) with the reason when the family cannot run `p`.
Config default_config(const Problem& p, int sm_count, int cc);

// Every configuration worth timing for `p` (each passes can_implement); the default first.
std::vector<Config> candidate_configs(const Problem& p, int sm_count, int cc);

}  // namespace fp8gemm::small_m
