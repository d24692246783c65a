// The small_m tactic: which kernel runs (Family) and its parameters, its canonical name, and the
// combinations that exist. Host-only, so the CPU tests cover it. What a Config occupies and how it
// launches for a problem (shared memory, ring stages that fit, grid) is in small_m_layout.h; which
// configs are worth timing is in small_m_candidates.cpp.
//
// Every small_m kernel is a decode GEMM for M <= 32 on sm_90a: the weights stream once from HBM in
// the swapped orientation (weight rows are the wgmma's M side, the few activation rows its N side)
// through a ring of shared-memory stages, each stage one or more K blocks of 128 bytes of K.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fp8gemm/device.h"
#include "fp8gemm/types.h"

namespace fp8gemm::small_m {

// Largest M: the wgmma's N side holds up to 32 activation rows.
constexpr int kMaxM = 32;
// Split-K is reduced inside a thread-block cluster (8 is the portable cluster size limit).
constexpr int kMaxSplitK = 8;
// A K block: 128 bytes of K of every row, one 128-byte-swizzled ring unit.
constexpr int kKBlockBytes = 128;
// Ring depths. The one-shot kernels' barrier arrays hold kMaxRingStages; the persistent kernel's
// hold kMaxStages, which is also the deepest ring the candidates offer (deeper ones run when named).
constexpr int kMinStages = 2;
constexpr int kMaxStages = 16;
constexpr int kMaxRingStages = 32;
// Dynamic shared memory a block may ask for (sm_90 allows 227 KB per block, less ~1 KB static),
// and one SM's shared memory (228 KB), which the blocks resident on it share.
constexpr size_t kMaxSharedBytes = 220 * 1024;
constexpr int64_t kSmSharedBytes = 228 * 1024;
// Largest persistent grid, in blocks per SM.
constexpr int kMaxPersist = 4;

// The kernel a tactic runs: one kernel template each (small_m_wgmma_*.cuh).
enum class Family {
  // One block per (row tile, split, batch); a producer lane fills the ring by TMA. The plain
  // "wgmma,..." names.
  kTmaRing,
  // The same grid and ring; a producer warpgroup copies the weights with 16-byte cp.async into
  // the layout TMA would write, the activations still come by TMA (",wload=cp").
  kCpAsyncRing,
  // "aonce" (activation once), m = 1 only: K pairs with two pairs a stage whose ring holds weights
  // only; the block's activation row, the whole K, is copied into shared memory once (",aonce=1").
  kActivationOnce,
  // P blocks per SM (clusters of splitk), each walking row tiles with its TMA ring running on
  // across them, so that the ring fills once per block and the next kernel's blocks find room
  // (",persist=P").
  kPersistent,
};

// Programmatic dependent launch, spelled pdl=0|1|2. With PDL the weights of the first stages are
// requested before waiting for the previous kernel (they do not depend on it), and the next
// kernel's blocks may launch at this one's start (1) or after its K loop (2, "late trigger": they
// then do not prefetch their weights while this kernel still streams its own).
enum class Pdl { kOff = 0, kAtStart = 1, kAfterKLoop = 2 };

// A block's shape, from its rows (Config::block):
//  - kKPairs (rows = 32): one warpgroup whose 64 MMA rows hold the block's 32 weight rows for two
//    consecutive K blocks, against both K blocks' activations side by side as the MMA's N (so
//    M <= 16); the halves are added in the epilogue. Twice the row tiles of 64-row blocks at the
//    same bytes per stage, so small weights fill the SMs without split-K. A ring unit is a K pair.
//  - kWarpgroups (rows = 64 or 128): one or two consumer warpgroups of 64 weight rows.
//  - kFitted ("fitted rows", 33..127 but 64): one warpgroup up to 64 rows, two above, whose MMA
//    rows past `rows` are not the block's (never stored), so that the grid can have as many blocks
//    as the SMs hold whatever n is.
enum class Block { kKPairs, kWarpgroups, kFitted };

struct Config {
  Family family = Family::kTmaRing;
  int rows = 64;    // weight rows (output columns n) per block; see Block
  int splitk = 1;   // blocks of one cluster that split K, reduced in rank order through DSMEM
  int stages = 4;   // ring depth, in stages of `kblocks` units
  Pdl pdl = Pdl::kAtStart;
  // "early=E" (kTmaRing with PDL; 0 = absent): only the first E ring stages are requested before
  // waiting for the previous kernel, the rest after it, so that the next kernel's blocks, which
  // start as this one's leave, do not each ask for a whole ring just when activations are due.
  int early = 0;
  // "kblocks=B" (the rings and kActivationOnce; 1 = absent): units (K blocks, K pairs for kKPairs)
  // per ring stage, 1, 2 or 4, under one pair of barriers: B times the bytes per barrier round trip
  // for blocks whose one-unit stages are small.
  int kblocks = 1;
  int persist = 0;  // kPersistent: blocks per SM (1..kMaxPersist); 0 for the other families

  Block block() const;
  // "wgmma,rows=R,splitk=S,stages=P,pdl=0|1|2[,early=E][,kblocks=B][,aonce=1][,persist=P]
  // [,wload=cp]". The "wgmma," prefix stays so that the names caches store keep their spelling.
  std::string to_string() const;
  // The spelling with "l2pf=0" after the stages (a removed L2 prefetch lookahead) that caches
  // written before the field was dropped hold: parse_config takes it too.
  std::string legacy_name() const;
  bool operator==(const Config& o) const {
    return family == o.family && rows == o.rows && splitk == o.splitk && stages == o.stages && pdl == o.pdl &&
           early == o.early && kblocks == o.kblocks && persist == o.persist;
  }
  bool operator!=(const Config& o) const { return !(*this == o); }
};

// The configs of each family (PDL at start unless given).
Config tma_ring(int rows, int splitk, int stages, Pdl pdl = Pdl::kAtStart);
Config cp_async_ring(int rows, int splitk, int stages, Pdl pdl = Pdl::kAtStart);
Config activation_once(int stages, Pdl pdl = Pdl::kAtStart);  // rows 32, two pairs a stage, no split
Config persistent(int rows, int splitk, int stages, int per_sm, Pdl pdl = Pdl::kAtStart);
// The same config with its weights by cp.async (a kTmaRing becomes a kCpAsyncRing), another PDL
// mode, early=E, or kblocks=B.
Config with_cp_weights(Config c);
Config with_pdl(Config c, Pdl pdl);
Config with_early(Config c, int stages);
Config with_kblocks(Config c, int kblocks);

// Parses a canonical name; throws Error(kInvalidArgument) for anything that is not exactly what
// to_string() prints for a config that exists, naming the rule (and removed kernels and options).
Config parse_config(std::string_view text);

// Whether a kernel exists for `c` (independent of the problem), with the reason if not.
Verdict config_exists(const Config& c);

// Whether `c` runs `p` on a device of compute capability `cc` (90 for sm_90a), with the reason.
Verdict can_implement(const Problem& p, const Config& c, int cc);

// The fill rule: 64-row blocks that fill the SMs from (m, n, k, sm_count), split-K on long K;
// small_m's default where no default rule applies, and its candidates' first. Throws
// Error(kUnsupported) with the reason when no small_m kernel runs `p`.
Config fill_config(const Problem& p, int sm_count, int cc);

// small_m's default, what backend "small_m" runs untuned: the first generated default rule
// (core/decision_tables.h: small_m, sm_90 only) that covers `p` names recipes, and the first whose
// config is one of candidate_configs(p) runs; else fill_config. Throws like fill_config.
Config default_config(const Problem& p, int sm_count, int cc);
// The rule behind default_config(p), in a sentence (the rule, its box, the recipe that applied and
// the fit's evidence); empty where the fill rule chose.
std::string default_rule(const Problem& p, int sm_count, int cc);

// Every config worth timing for `p` (each passes can_implement), fill_config first; the rules are
// in small_m_candidates.cpp.
std::vector<Config> candidate_configs(const Problem& p, int sm_count, int cc);

}  // namespace fp8gemm::small_m
