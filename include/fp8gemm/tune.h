// The autotuner behind `auto` (DESIGN.md "Measuring", docs/tuning.md).
//
// Every call with backend "auto" asks the Context's selector, which answers from
//   1. the tuned cache (keys: op, dtypes, batch, M bucket, N, K, alignment), else
//   2. the built-in per-architecture default table, else
//   3. nothing, and the Context uses cuBLASLt's heuristic (the floor).
// Tuning is explicit (tune(), `fp8gemm tune`), inside an AutotuneScope, or lazy on first use
// when FP8GEMM_TUNE=1. Nothing is ever profiled while the call's stream is being captured.
#pragma once

#include <cstdint>
#include <memory>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fp8gemm/context.h"
#include "fp8gemm/types.h"

namespace fp8gemm {

// The one map from M to its bucket, used by tuning and dispatch alike: the smallest edge >= m.
// Edges: 1 2 4 8 16 24 32 48 64 96 128 192 256 384 512 768 1024 1536 2048 3072 4096 6144 8192
// 12288 16384, then powers of two. A bucket is tuned at its upper edge (the returned value).
int64_t m_bucket(int64_t m);
const std::vector<int64_t>& m_bucket_edges();  // the explicit edges above (up to 16384)

// What became of one candidate while tuning a key.
struct CandidateReport {
  std::string tactic;       // canonical name
  std::string status;       // "default" | "finalist" | "pruned" | "failed" | "mismatch" | "skipped"
  double time_us = 0;       // full-round median for the default and finalists, else short-round
  double output_diff = -1;  // max|out - default_out| / max|default_out|; -1 when not compared
  std::string note;         // why it failed / was skipped / mismatched
  double short_us = 0;      // short-round time of a default or finalist (0: no short round)
};

// One part of a bucket and its tuned choice: the segment covers (previous m_max, m_max]; the
// last one ends at the bucket's edge. The tuner times at the edge and at sampled M values below
// it and decides at each (docs/tuning.md "Segments"); a bucket with one choice has one segment.
struct ChoiceSegment {
  int64_t m_max = 0;
  std::string tactic;          // canonical name of the choice for this segment
  std::string default_tactic;  // what `auto` ran at sampled_m without tuning (the reference there)
  double us = 0;               // the choice's time at sampled_m
  double default_us = 0;       // the default's time at sampled_m
  std::vector<CandidateReport> candidates;  // what was timed at sampled_m (below the edge only)
  // Where the choice was measured: m_max, or below it when the segment reaches up to where the
  // choice still needs no more M tiles (Backend::same_tiles_up_to).
  int64_t sampled_m = 0;
};

struct Decision {
  Problem problem;          // the tuned problem: M is the bucket's upper edge
  std::string key;          // canonical key string (cache entry key)
  std::string default_tactic;  // the reference: default table entry or the cuBLASLt floor
  std::string floor_tactic;    // the cuBLASLt heuristic's choice (what the table must beat)
  std::string choice;
  double default_us = 0;
  double choice_us = 0;
  double noise = 0;         // |t1 - t2| / t1 of the default timed twice
  double threshold = 0;     // the gain a challenger needed: max(min_gain, noise_factor * noise)
  std::string reason;       // one sentence: why `choice`
  bool measured = false;    // false: nothing was timed (budget spent, no challenger, ...)
  double elapsed_ms = 0;    // wall time spent on this key
  double clock_mhz = 0;     // mean SM clock over the edge's full round; 0: not recorded (FP8GEMM_RECORD_CLOCK=1)
  std::vector<int64_t> sampled_ms;  // M values below the edge where the finalists were also timed
  // The choice per part of the bucket, ascending; the last segment's tactic is `choice` (the
  // edge's). Adjacent segments with the same tactic are merged.
  std::vector<ChoiceSegment> segments;
  // Wall time per phase of this key (ms): listing, rounds (short + full at the edge), samples,
  // output_check. For tuning-speed work; not part of the decision.
  std::map<std::string, double> phase_ms;
  std::vector<CandidateReport> candidates;
  std::vector<std::string> excluded_backends;  // "name: reason"

  // The tactic this decision assigns to `m` (an M of its bucket): the first segment whose m_max
  // is >= m; `choice` when there are no segments.
  const std::string& choice_for(int64_t m) const;
};

struct TuneOptions {
  double key_budget_ms = 100;   // target per key (see docs/tuning.md for the largest points)
  double run_budget_ms = 0;     // whole run; 0 = unlimited. Keys past it keep their default.
  double min_gain = 0.015;      // a challenger must be faster by more than max(min_gain,
  double noise_factor = 2.0;    //                                    noise_factor * noise)
  double output_tolerance = 0.02;  // see docs/tuning.md "Output check" (same bound as bench)
  std::vector<std::string> backends;   // restrict challengers to these (empty: all)
  bool retune = false;          // tune keys already in the cache again
  int bucket_samples = 2;       // M values below each bucket edge where finalists are also timed
  // The lower bucket's choice at its edge is also timed at the bucket's lowest sample, just above
  // that edge (docs/tuning.md "Segments"; session 26).
  bool lower_choice_at_first_sample = true;
  // Time a sub-bucket segment's challenger again at the segment's lowest M and give the segment to
  // its default where that regrets less over both ends (docs/tuning.md "Segments"; on by default
  // since session 6's H200 runs: between bucket edges 171 of 184 points <= 1.03 against 160).
  bool check_segment_ends = true;
  // With check_segment_ends: the adaptive floor ("cublaslt:heuristic", the heuristic's own choice
  // at each call's M) competes for each segment too, and the edge's segment is checked as well
  // (docs/tuning.md "The adaptive floor").
  bool adaptive_floor = true;
  // With check_segment_ends: a segment whose lowest M and sampled M each prefer another tactic by
  // more than the threshold is split where the two tactics' times cross, found by timing them
  // against each other in between (bisection, up to 3 rounds; docs/tuning.md "Splitting a
  // segment").
  bool split_segments = false;
  // With adaptive_floor: where the adaptive floor wins a segment's lowest M and loses its top,
  // each by more than the threshold, the segment is split where the heuristic's answer turns
  // into the kernel it runs at the top (found from its answers, nothing timed): the adaptive
  // floor below, the contender fastest at the top above (docs/tuning.md "Splitting at the
  // heuristic's switch"). On: the worse-regret rule had given such segments whole to the
  // adaptive floor, and the edge then ran 1.03-1.05x the best (H200 session 22).
  bool split_at_floor_switch = true;
  // With adaptive_floor: where the adaptive floor takes a segment on its lowest M's time, the
  // kernel the heuristic answered there (the one timed) keeps the M up to its own reach (the same
  // M tiles) if the heuristic answers another, untimed kernel in that range (docs/tuning.md "The
  // low end's kernel holds its tiles"; session 26), also in the lower part that
  // split_at_floor_switch gives the adaptive floor (session 30).
  bool floor_keeps_low_kernel = true;
  // With adaptive_floor: a segment that kept the floor's fixed answer at its sampled M, and whose
  // lowest M was not timed, runs the adaptive floor instead ("cublaslt:heuristic": the same
  // kernel at the sampled M; docs/tuning.md "A kept floor adapts"). On: on the H200 it took
  // M=300 of llama70b.down and gate_up from 1.15x the best to 1.00x in every tune.
  bool kept_floor_adapts = true;
  // A tie at a sampled M below the edge (the edge's choice not faster than the default there by
  // more than the threshold, yet not slower) goes to the edge's choice instead of the default
  // (docs/tuning.md "Ties at a sampled M"; off: on the H200 it applied at 1-2 of ~1100 samples
  // per whole-suite tune and moved nothing beyond the run-to-run spread).
  bool samples_follow_edge = false;
  // With check_segment_ends: the fastest other tactic that tied with a segment's choice where the
  // segment was timed is timed at its lowest M too and may take the segment by the same rule,
  // once its output matches (docs/tuning.md "Ties at a segment's lowest M"). Off: measured once on
  // the H200, within the run-to-run spread.
  bool low_end_ties = false;
  // With the adaptive floor: it competes at a segment's lowest M only where the heuristic's answers
  // inside the segment (8 probes) are kernels timed at its ends (docs/tuning.md "The adaptive
  // floor inside a segment"). Off: on the H200 (session 12) 167 -> 160 of 184 points between edges.
  bool adaptive_floor_interior = false;
  // A challenger that beat the default by more than min_gain but not by noise_factor x the noise
  // floor is timed again with it in a longer round, whose own noise decides (docs/tuning.md
  // "Retiming a challenger held back by noise").
  bool retime_in_noise = true;
  // With retime_in_noise, at calls short enough that a round's replays are shorter than a
  // retime's: the choice and the fastest other tactic within 5% of it are timed again in the
  // longer round, which decides (docs/tuning.md "Retiming a close call"). Off: measured once.
  bool retime_close_calls = false;
  // Replays of short calls last at least this long (more than 20 calls, up to 200; the GPU
  // timer's GraphTimerOptions::min_replay_us); 0: DESIGN's 20 calls. At 3-7 us calls the replay
  // length reorders small_m's PDL tactics: with 20-call replays the tuner chose `persist=1`
  // tactics that lose by 3-17% in bench's >= 300 us head-to-head rounds (docs/tuning.md "Longer
  // replays for short calls"; default 300 since session 19's A/B). Budget estimates still assume
  // 20-call replays. Must be finite and >= 0.
  double min_replay_us = 300;
  // After every key: a light segment's choice and the tactics within 3% of it where it was decided
  // are timed again under a heavy GEMM load (the power-capped state), and the one whose worse
  // regret over both states is smaller takes the segment if it beats the choice under the load
  // beyond max(min_gain, noise_factor x noise), holds at the segment's lowest M and its output
  // matches (docs/tuning.md "Both power states"). The pass stops starting measurements after
  // power_state_budget_ms (0: no limit). Off: on the H200 (session 29) auto between bucket edges
  // stayed within the run-to-run spread (176-178 of 184 points with it, 176-177 without) and the
  // pass's 5-8 s took the whole-suite tune to 118-122 s, against the 2-minute limit.
  bool check_power_states = false;
  double power_state_budget_ms = 5000;
  // Called after each key (done counts keys finished, of total). Keys are tuned lightest first
  // (by estimated call time), not in the order given.
  std::function<void(size_t done, size_t total, const Decision&)> progress;
};

// Tunes every problem's key on `ctx` (one Decision per problem, in the order given; the keys are
// measured lightest first, docs/tuning.md "Light after heavy"), storing the choices
// in ctx's tuned cache (installing the autotuner on ctx if needed). Needs a GPU.
std::vector<Decision> tune(Context& ctx, const std::vector<Problem>& problems,
                           const TuneOptions& options = {});

// Tuned cache of `ctx` (install_autotuner is called if needed). load_cache replaces the
// in-memory entries with the file's valid ones and returns how many were kept; a corrupt,
// truncated, foreign-GPU or old-version file is reported once on stderr and ignored (returns 0).
// merge_cache adds the file's entries, keeping the in-memory ones on conflict. save_cache merges
// with what is on disk (under flock) and replaces the file atomically.
size_t load_cache(Context& ctx, const std::string& path);
size_t merge_cache(Context& ctx, const std::string& path);
void save_cache(Context& ctx, const std::string& path);
void clear_cache(Context& ctx);

// Installs the tuning selector on `ctx` (idempotent). default_context() does this for every
// context it creates; FP8GEMM_CACHE names a cache file loaded here (and saved after lazy tuning).
void install_autotuner(Context& ctx);

// Mirrors FlashInfer's `with autotune(enabled, cache=...)`: while one is alive (scopes nest),
// "auto" calls on `ctx` (default_context() when null), from any thread, tune their key first if
// it is not in the cache, except while their stream is being captured. With a cache path the
// file is merged in first and saved (merged with the disk) when the scope ends.
class AutotuneScope {
 public:
  explicit AutotuneScope(bool enabled = true, std::string cache_path = {}, Context* ctx = nullptr);
  ~AutotuneScope();
  AutotuneScope(const AutotuneScope&) = delete;
  AutotuneScope& operator=(const AutotuneScope&) = delete;

 private:
  Context* ctx_;
  bool enabled_;
  std::string cache_path_;
};

}  // namespace fp8gemm
