// The small_m tactic: a plain struct, its canonical name, and the rules that decide which
// configurations exist and which problems they run. Host-only, so the CPU tests cover it.
#pragma once

#include <cstddef>
#include <cstdint>
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

// v3 (wgmma): one stage is 128 bytes of K of the block's weight rows and activation rows.
constexpr int kWgmmaKBlock = 128;
// v3 ring depth limits: the one-shot kernels with TMA or cp.async weights size their mbarrier
// arrays for kWgmmaMaxRingStages, the persistent, stream-K and register kernels for
// kWgmmaMaxStages. Rings deeper than 16 run when named and are not offered: built for blocks with
// small stages at one block per SM, on the guess that 16 of them hold too few bytes to cover HBM
// latency; on the H200 they were the fastest tactic nowhere (docs/perf/small_m.md, Session 15).
constexpr int kWgmmaMinStages = 2;
constexpr int kWgmmaMaxStages = 16;
constexpr int kWgmmaMaxRingStages = 32;
// Dynamic shared memory a v3 block may ask for (sm_90 allows 227 KB per block, less ~1 KB static),
// and one SM's shared memory on sm_90 (228 KB), which the blocks resident on it share.
constexpr size_t kWgmmaMaxSharedBytes = 220 * 1024;
constexpr int64_t kSmSharedBytes = 228 * 1024;
// Largest L2 prefetch lookahead (K blocks beyond the ring).
constexpr int kWgmmaMaxL2Prefetch = 64;
// Largest persistent grid, in blocks per SM (v3 persist=P).
constexpr int kWgmmaMaxPersist = 4;
// Largest stream-K grid, in blocks per SM (v3 streamk=B): the occupancy the kernels are built for
// (4 blocks of 64 rows, 2 of 128; __launch_bounds__).
constexpr int kWgmmaMaxStreamK64 = 4;
constexpr int kWgmmaMaxStreamK128 = 2;
// The ring stages the offered early=E twins request before the wait (E = 2 was slower on the H200).
constexpr int kEarlyStages = 4;
// v3 with weights in registers (",wload=reg"): 64-byte K chunks per activation slot (a thread
// keeps two slots of them in flight, one 16-byte load per chunk), and the slot's bytes of K.
constexpr int kRegChunks = 8;
constexpr int kRegSlotK = 64 * kRegChunks;

// Two kernel families share this struct:
//  - v2 (mma.sync, portable): "rows=R,splitk=S,warps=W,stages=P,pdl=0|1"; rows = 16 x row tiles.
//  - v3 (wgmma + TMA, sm_90a only): "wgmma,rows=R,splitk=S,stages=P,l2pf=L,pdl=0|1" with
//    rows = 64 or 128 (one or two consumer warpgroups of 64 weight rows; 32: see rows=32
//    below), stages = depth of the TMA ring (2..16 stages of 128 bytes of K) and l2pf = L2
//    prefetch lookahead in K blocks beyond the ring (0..64; the first L are requested before
//    waiting for the previous kernel). For v3, warps is not part of the name: it is always
//    rows / 16 (the consumer warps, but 2 for rows=32, whose one warpgroup has 4; the block has
//    one producer warp or warpgroup more).
//  - v3 persistent: the v3 name followed by ",persist=P" (P = 1..4): the grid is P blocks per SM
//    (clusters of splitk), each walking row tiles with its TMA ring running across tiles, so
//    that the prologue is paid once and the ring never drains; split-K partial sums go through
//    a separate buffer (the ring is busy). l2pf must be 0. persist=0 (plain v3) is not printed,
//    so every earlier name keeps its spelling.
//  - v3 with cp.async weights: the one-shot v3 name followed by ",wload=cp": a producer
//    warpgroup copies the weights with 16-byte cp.async into the same swizzled ring (TMA streams
//    at ~4.3 TB/s on the H200, 16-byte loads at ~4.7); the activations still come by TMA. Not
//    with persist or l2pf (both are built on the weight tensor map). Absent = TMA, so every
//    earlier name keeps its spelling and meaning.
//  - v3 with weights in registers: the one-shot v3 name followed by ",wload=reg": every consumer
//    thread loads its weight row with 16-byte ld.global straight into wgmma's A registers (two
//    slots of kRegChunks chunks in flight, no shared memory); a producer warp gathers the
//    activations into a ring of `stages` slots of kRegSlotK bytes of K each. Same limits as
//    wload=cp, and rows=64 only. Never a candidate (slower everywhere on the H200); runs when named.
//  - v3 stream-K: ",streamk=B" before ",wload=cp" (cp.async weights only, splitk=1, B = 1..4 at
//    64 rows, 1..2 at 128): the grid is B blocks per SM and the (row tile, batch, K block) units
//    are split evenly over it, each block taking one contiguous run of them, so every SM streams
//    the same number of weight bytes whatever the tile count (the cluster split-K grids leave SMs
//    idle or doubly loaded). A tile cut between blocks is finished by the last of them, which
//    adds the others' partial sums from the workspace in block order (deterministic) after its
//    own run; the blocks signal through the workspace's flags. Never a candidate (on the H200 it
//    streamed as fast on the largest weight and paid ~2-4 us more per call elsewhere); runs when
//    named.
//  - pdl=2 (one-shot v3, TMA or cp.async weights): programmatic dependent launch as pdl=1, but a
//    block releases the next kernel's blocks after its K loop instead of at its start, so they
//    do not prefetch their weights while this kernel still streams its own (a few % faster on
//    some 20-33 MB weights on the H200, slower on most large ones).
//  - rows=32 (v3, "K pairs"): one warpgroup whose 64 MMA rows hold the block's 32 weight rows
//    for two consecutive K blocks (rows 32..63: the second), against both K blocks' activations
//    side by side as the MMA's N (so M <= 16); the two halves are added in the epilogue. Twice the
//    row tiles of rows=64 at the same bytes per stage: a 4096-row weight fills 128 SMs without
//    split-K, whose cluster reduction costs ~1 us per call on small weights (H200, session 13:
//    the same bytes per block ran 10-18% faster on 16-22 MB weights as an 8192-row weight without
//    split-K than as a 4096-row one with split-K 2). One-shot only, TMA or cp.async weights,
//    l2pf=0; a split's K range is whole pairs (kpair_kblocks_per_split).
//  - fitted rows (v3, rows = 33..127 but 64): a block of one (rows <= 64) or two warpgroups whose
//    MMA rows past `rows` are not the block's (they read whatever the ring holds there and are
//    never stored), so that the grid can have as many blocks as the SMs hold whatever n is
//    (4480 rows: 132 blocks of 34, where 32-row tiles make 140 and 64-row tiles 70). With TMA
//    weights a stage's weight tile is `rows` rounded up to 8 rows; with cp.async weights a compact
//    one of 48 (rows <= 48) or 80 rows (65..80), else the whole 64 W-row tile
//    (cp_compact_tile_rows, WgmmaStageLayout). One-shot only, TMA or cp.async weights, l2pf=0.
//  - early=E (one-shot v3 with TMA weights and PDL, l2pf=0; spelled after pdl, absent = 0): only
//    the first E of the ring's stages are requested before waiting for the previous kernel, the
//    rest after it (1 <= E < stages). The next kernel's blocks, which start as this one's first
//    blocks leave, then do not flood the memory system with a whole ring each just when this
//    kernel's activations are due (H200, session 10: early=4 made the best small_m tactic 2-5%
//    faster at about half of the 16-34 MB points, slower on large weights; the cp.async kernel
//    did not gain).
//  - kblocks=B (one-shot v3 with TMA or cp.async weights, l2pf=0; spelled after early, absent =
//    1): a ring stage holds B = 2 or 4 consecutive K blocks, each laid out as a stage of one
//    (WgmmaStageLayout), under one pair of barriers: B times the bytes per barrier round trip and
//    per TMA batch, for blocks whose one-K-block stages are small: their one producer lane issues
//    every stage alone, and its per-stage work bounds them (H200, session 15: 132 blocks of 34
//    fitted rows ran nano9b.down in 22.1 us with one K block per stage, 18.5 with four). With
//    cp.async weights (session 16) the same stage layout. rows=32 (K pairs) takes B = 2: two
//    pairs, 512 bytes of each weight row, a stage (a stream probe in a PDL chain moved 4096x4096
//    in 5.03 us with 512 bytes a row per stage and 5.73 with 256, at the same ring bytes; H200,
//    session 25).
//  - aonce=1 (rows=32 K pairs with kblocks=2, TMA weights, splitk=1, l2pf=0, no early; spelled after
//    kblocks; m = 1): the ring holds weights only and the block's activation row, the whole K, is
//    copied once after the wait (small_m_wgmma_aonce.cuh).
struct Config {
  int rows = 32;    // weight rows (output columns n) per block: 16 x row tiles, shared by its warps
  int splitk = 1;   // blocks of one cluster that split K; reduced in fixed order through DSMEM
  int warps = 8;    // warps per block; they split the block's K range and reduce in fixed order
  int stages = 2;   // v2: 64-byte K chunks per load batch (two in flight); v3: TMA ring depth
  bool pdl = false; // programmatic dependent launch: prefetch weights before waiting
  bool wgmma = false;  // v3 family (see above)
  int l2pf = 0;        // v3 only: K blocks of weights prefetched into L2 ahead of the ring
  int persist = 0;     // v3 only: 0 = one block per (tile, split); P > 0 = P blocks per SM, looping
  bool cp_weights = false;  // v3 only: weights through cp.async instead of TMA (",wload=cp")
  bool reg_weights = false; // v3 only: weights by ld.global into wgmma's A registers (",wload=reg")
  bool late_trigger = false; // one-shot v3 with pdl only, spelled pdl=2: dependents launch after the K loop
  int streamk = 0;     // v3 with cp.async weights only: 0 = grid of (tile, split); B > 0 = B blocks per SM, even split
  int early = 0;       // one-shot v3 with TMA weights and PDL only: 0 = the whole ring before the wait; E = its first E stages
  int kblocks = 1;     // one-shot v3 (TMA or cp.async): K blocks of 128 bytes (rows=32: K pairs) per ring stage
  int aonce = 0;       // K pairs, kblocks=2, TMA, m = 1: 1 = the whole activation row in shared memory, once

  int row_tiles() const { return rows / 16; }
  // "rows=32,splitk=1,warps=8,stages=2,pdl=0" or "wgmma,rows=64,splitk=2,stages=8,l2pf=0,pdl=1"
  std::string to_string() const;
  bool operator==(const Config& o) const {
    return rows == o.rows && splitk == o.splitk && warps == o.warps && stages == o.stages && pdl == o.pdl &&
           wgmma == o.wgmma && l2pf == o.l2pf && persist == o.persist &&
           cp_weights == o.cp_weights && reg_weights == o.reg_weights && late_trigger == o.late_trigger &&
           streamk == o.streamk && early == o.early && kblocks == o.kblocks && aonce == o.aonce;
  }
};

// rows=32 (K pairs): the K blocks per split rank, even so that every rank but the last reads
// whole pairs (the last may end at the tensor's end on an odd block, whose pair reads zeros).
inline int kpair_kblocks_per_split(int kblocks, int splitk) {
  const int per = (kblocks + splitk - 1) / splitk;
  return (per + 1) / 2 * 2;
}

// v3 rows = 33..127 but 64: fitted rows (see Config).
inline bool fitted_rows(int rows) { return rows > 32 && rows < 128 && rows != 64; }
// The consumer warpgroups of a v3 block with `rows` weight rows (rows=32: one, K pairs).
inline int wgmma_warpgroups(int rows) { return rows > 64 ? 2 : 1; }

// The 128-byte K blocks of a v3 weight row: ceil(k / 128).
inline int64_t wgmma_kblocks(const Problem& p) { return (p.k + kWgmmaKBlock - 1) / kWgmmaKBlock; }

// Activation rows a v3 block loads (the wgmma's N): m rounded up to 8.
inline int wgmma_n(int64_t m) { return int((m + 7) / 8) * 8; }

// A one-shot v3 ring stage in shared memory (TMA and cp.async kernels): `stage_bytes` apart, the
// weight tile first (`w_bytes`: 64 x warpgroups rows of 128 bytes of K; rows=32 holds its 32 rows
// twice, for two K blocks; fitted rows with TMA weights: `rows` rounded up to 8), then the
// activation tile (the MMA's N rows); `tx_bytes` is what a stage's TMA copies bring. The wgmma
// reads 64 rows per warpgroup from the stage's start, so with fitted rows and TMA weights it reads
// on into the activation tile and the next stage (rows that are not stored): `tail_bytes` after
// the last stage keep that inside the allocation. Fitted rows with cp.async weights keep the whole
// 64 W-row tile and zero-fill the rows past `rows`: with the short tile, the wgmma read the next
// stage while the producers' cp.async (another proxy) wrote it, and ran up to 1.6x slower than
// the same tactic with TMA (H200, session 14 call 4). Except where cp_compact_tile: a 48- or 80-row
// tile (the rows past `rows` zero-filled) and `stage_pad_bytes` after each ring stage's units, so
// that the MMA's last 16 or 48 rows read the stage's own activation tiles and pad, never the next
// stage.
struct WgmmaStageLayout {
  int stage_bytes = 0, w_bytes = 0, tx_bytes = 0, tail_bytes = 0;
  int stage_pad_bytes = 0;  // after a ring stage's `kblocks` units (cp_compact_tile only)
};
WgmmaStageLayout wgmma_stage_layout(int64_t m, int rows, bool cp_weights);

// The cp.async kernel's compact weight tile: fitted rows up to 48 (one warpgroup) take a 48-row
// tile instead of 64, and 65..80 (two) an 80-row tile instead of 128 (less shared memory per stage,
// so a deeper ring at the same occupancy, and fewer copies per stage for the producers). At every
// m: the wgmma's rows past the tile read the unit's 8-32 activation rows and then the stage's pad.
// cp_compact_tile_rows: the tile's rows, 0 where the whole 64 W-row tile stays.
constexpr int kCpCompactTileRows1 = 48, kCpCompactTileRows2 = 80;
inline int cp_compact_tile_rows(int rows) {
  if (!fitted_rows(rows)) return 0;
  if (rows <= kCpCompactTileRows1) return kCpCompactTileRows1;
  return rows > 64 && rows <= kCpCompactTileRows2 ? kCpCompactTileRows2 : 0;
}
inline bool cp_compact_tile(int rows) { return cp_compact_tile_rows(rows) > 0; }

// A v3 config with the derived field filled in.
inline Config wgmma_config(int rows, int splitk, int stages, bool pdl, int l2pf = 0, int persist = 0) {
  Config c;
  c.persist = persist;
  c.l2pf = l2pf;
  c.wgmma = true;
  c.rows = rows;
  c.splitk = splitk;
  c.warps = rows / 16;
  c.stages = stages;
  c.pdl = pdl;
  return c;
}

// The same v3 config with its weights loaded by cp.async (",wload=cp").
inline Config with_cp_weights(Config c) {
  c.cp_weights = true;
  return c;
}

// A stream-K config (cp.async weights, no split-K): `per_sm` blocks per SM share the units evenly.
inline Config streamk_config(int rows, int stages, bool pdl, int per_sm) {
  Config c = with_cp_weights(wgmma_config(rows, 1, stages, pdl));
  c.streamk = per_sm;
  return c;
}

// The same v3 config releasing its dependents after the K loop ("pdl=2").
inline Config with_late_trigger(Config c) {
  c.late_trigger = true;
  return c;
}

// The same v3 config requesting only `stages` ring stages of weights before the wait (",early=E").
inline Config with_early(Config c, int stages) {
  c.early = stages;
  return c;
}

// The same v3 config with `kblocks` K blocks per ring stage (",kblocks=B").
inline Config with_kblocks(Config c, int kblocks) {
  c.kblocks = kblocks;
  return c;
}

// aonce=1's shared memory (small_m_wgmma_aonce.cuh; shared_bytes): ring stages of two K pairs of
// 32 weight rows (16 KB), then the activation row: K rounded up to whole pairs (256 bytes) and 256
// bytes of zeros that the wgmma's rows past the first read, then the barriers.
constexpr int kAonceStageBytes = 2 * 64 * kWgmmaKBlock;
constexpr int64_t aonce_act_bytes(int64_t k) { return (k + 255) / 256 * 256 + 256; }

// The same K-pairs config with its activation row copied once, whole (",aonce=1").
inline Config with_aonce(Config c) {
  c.aonce = 1;
  return c;
}

// The same v3 config with its weights loaded into registers (",wload=reg"); stages = activation
// ring slots.
inline Config with_reg_weights(Config c) {
  c.reg_weights = true;
  return c;
}

// Parses a canonical config string; throws Error(kInvalidArgument) for anything that is not
// exactly what to_string() prints for a configuration that exists (see config_exists).
Config parse_config(std::string_view text);

// Persistent v3 with split-K: each rank receives the partial sums of the consumer threads it
// reduces (thread t goes to rank t % splitk) from every rank: [splitk][NP/2][ceil(rows*2/splitk)]
// floats (rows * 2 = consumer threads). 0 when splitk == 1 or not persistent.
size_t wgmma_reduce_bytes(const Problem& p, const Config& c);

// Stream-K: the grid (blocks per SM x SMs, at most one block per unit) and the workspace it needs:
// two partial-sum slots per block ([2][NP/2][rows * 2] floats: the block's last tile when another
// block finishes it, its first when it finishes that one itself). 0 when not stream-K.
int64_t streamk_grid(const Problem& p, const Config& c, int sm_count);
size_t streamk_workspace_bytes(const Problem& p, const Config& c, int sm_count);

// Whether the kernel family has an instantiation for `c` (independent of the problem).
Verdict config_exists(const Config& c);

// MMA tiles of 8 activation rows a problem needs.
inline int m_tiles(int64_t m) { return int((m + 7) / 8); }

// Whether `c` runs `p` on a device of compute capability `cc` (90 for sm_90a), with the reason.
Verdict can_implement(const Problem& p, const Config& c, int cc);

// Dynamic shared memory one block of `c` needs for `p` (v2: the fixed-order reductions; v3: the
// TMA ring, 1024-byte aligned, which the split-K reduction reuses; persistent v3: the ring plus
// the split-K receive buffer, see wgmma_reduce_bytes).
size_t shared_bytes(const Problem& p, const Config& c);

// The rule used on a cache miss: fills the SMs from (m, n, k, sm_count). Throws
// Error(kUnsupported) with the reason when the family cannot run `p`.
Config default_config(const Problem& p, int sm_count, int cc);

// Stream-K configs at 1 and 2 blocks per SM (see the .cpp); not among candidate_configs.
std::vector<Config> streamk_candidates(const Problem& p);

// Every configuration worth timing for `p` (each passes can_implement); the default first.
std::vector<Config> candidate_configs(const Problem& p, int sm_count, int cc);

}  // namespace fp8gemm::small_m
