// The mid_m tactic: its parameters, its canonical name and the combinations that exist. Host-only,
// so the CPU tests cover it. What a Config occupies and how it launches for a problem (shared
// memory, ring depths that fit, grid, cluster) is in mid_m_layout.h; which configs are worth timing
// is in mid_m_candidates.cpp; which problems a config runs is can_implement (mid_m_limits.cpp).
//
// mid_m is the swapped Hopper GEMM for 33 <= M <= 256 (docs/mid_m.md): a block owns `rows` weight
// rows (output columns n), the wgmma's M side, against every activation row (m rounded up to a
// wgmma N of 40..256, tile_n) as its N side; the weights stream once from HBM through a TMA ring of
// 128-byte K blocks into FP8 wgmma with FP32 accumulators in registers across K.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fp8gemm/device.h"
#include "fp8gemm/types.h"

namespace fp8gemm::mid_m {

// M range: above small_m's (M <= 32); the wgmma's N holds at most 256 activation rows.
constexpr int kMinM = 33;
constexpr int kMaxM = 256;
// A K block: 128 bytes of K of every row, one ring stage (128-byte swizzle).
constexpr int kKBlockBytes = 128;
// Split-K ranks and multicast pairs form one thread-block cluster: at most 8 blocks (portable).
constexpr int kMaxSplitK = 8;
constexpr int kMaxClusterBlocks = 8;
// Ring depths: the kernel's barrier arrays hold kMaxStages.
constexpr int kMinStages = 2;
constexpr int kMaxStages = 32;
// Persistent grids: at most this many blocks per SM.
constexpr int kMaxPersist = 2;
// Blocks a row tile's activation rows may be split across (msplit=T).
constexpr int kMaxMSplit = 4;
// K blocks a ring stage may hold (kstage=2).
constexpr int kMaxKStage = 2;

// Programmatic dependent launch, spelled pdl=0|1|2: off; the next kernel may launch at this one's
// start (1) or after its K loop (2). With PDL the first ring stages' weights are requested before
// waiting for the previous kernel (they do not depend on it); activations and scales after.
enum class Pdl { kOff = 0, kAtStart = 1, kAfterKLoop = 2 };

struct Config {
  // Weight rows per block: 64 (one consumer warpgroup) or 128 (two), 64 per warpgroup's MMA.
  int rows = 128;
  int splitk = 1;  // blocks of one cluster that split K, reduced in rank order through DSMEM
  int stages = 4;  // ring depth in stages of `kstage` K blocks
  // "kstage=2" (1 = absent): a stage holds two consecutive K blocks, so the producer's wait, its
  // byte count and the consumers' release are paid once per 256 bytes of K instead of 128.
  int kstage = 1;
  Pdl pdl = Pdl::kAtStart;
  // "msplit=T" (1 = absent): the M activation rows split into T blocks of ceil(M / T) rows, all of
  // one row tile, launched next to each other (so the second read of a weight tile is from L2):
  // a block then holds twice or four times the weight bytes per activation byte.
  int msplit = 1;
  // "mcast=2" (1 = absent): two blocks form a cluster and share the operand they have in common,
  // which one TMA multicasts into both: without msplit, blocks of adjacent row tiles share each
  // stage's activation tile; with msplit, adjacent M blocks of one row tile share its weight tile
  // (each loads half of it), so the weights stream from HBM and L2 once.
  int mcast = 1;
  // "persist=P" (0 = absent): P blocks per SM (splitk=1), each walking row tiles with its ring
  // running on across them, so that the next tile's weights stream while a tile's epilogue runs.
  int persist = 0;

  // Consumer warpgroups.
  int warpgroups() const { return rows / 64; }
  // Blocks of one cluster (multicast pair x split ranks).
  int cluster_blocks() const { return mcast * splitk; }

  // Whether the multicast pair shares the weight tile (msplit) rather than the activation tile.
  bool shares_weights() const { return mcast > 1 && msplit > 1; }

  // "rows=R,splitk=S,stages=P,pdl=0|1|2[,msplit=T][,mcast=2][,persist=P][,kstage=2]".
  std::string to_string() const;
  bool operator==(const Config& o) const {
    return rows == o.rows && splitk == o.splitk && stages == o.stages && pdl == o.pdl && msplit == o.msplit &&
           mcast == o.mcast && persist == o.persist && kstage == o.kstage;
  }
  bool operator!=(const Config& o) const { return !(*this == o); }
};

Config ring(int rows, int splitk, int stages, Pdl pdl = Pdl::kAtStart);
Config with_msplit(Config c, int blocks);  // msplit=T
Config with_kstage(Config c, int kblocks);  // kstage=2
Config with_mcast(Config c);                 // mcast=2
Config with_persist(Config c, int per_sm);  // persist=P
Config with_pdl(Config c, Pdl pdl);

// Parses a canonical name; throws Error(kInvalidArgument) for anything that is not exactly what
// to_string() prints for a config that exists, naming the rule.
Config parse_config(std::string_view text);

// Whether a kernel exists for `c` (independent of the problem), with the reason if not.
Verdict config_exists(const Config& c);

}  // namespace fp8gemm::mid_m
