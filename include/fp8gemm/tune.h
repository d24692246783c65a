// The autotuner behind `auto` (docs/design.md "Measuring", docs/tuning.md).
//
// Every call with backend "auto" asks the Context's selector, which answers from
//   1. the tuned cache (keys: op, dtypes, batch, M bucket, N, K, alignment), else
//   2. the built-in per-architecture default table, else
//   3. nothing, and the Context uses cuBLASLt's heuristic (the floor).
// Tuning is explicit (tune(), `fp8gemm tune`), inside an AutotuneScope, or lazy on first use
// when FP8GEMM_TUNE=1. Nothing is ever profiled while the call's stream is being captured.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fp8gemm/context.h"
#include "fp8gemm/types.h"

namespace fp8gemm {

// The largest M: sizes are 32-bit (and so is every M a cache file may name).
inline constexpr int64_t kLargestProblemM = 2147483647;

// The one map from M to its bucket, used by tuning and dispatch alike: the smallest edge >= m.
// Edges: 1 2 4 8 16 24 32 48 64 96 128 192 256 384 512 768 1024 1536 2048 3072 4096 6144 8192
// 12288 16384, then powers of two up to 2^30, then kLargestProblemM. A bucket is tuned at its
// upper edge (the returned value). m <= 1 gives 1; m > kLargestProblemM throws
// Error(kInvalidArgument).
int64_t m_bucket(int64_t m);
const std::vector<int64_t>& m_bucket_edges();  // the explicit edges above (up to 16384)

// What became of one candidate while tuning a key.
struct CandidateReport {
  std::string tactic;       // canonical name
  // "default" | "finalist" | "pruned" | "failed" | "mismatch" | "skipped"; a segment's rows
  // also "low end", "top" and "middle" (timed again by the segment checks)
  std::string status;
  double time_us = 0;       // full-round median for the default and finalists, else short-round
  double output_diff = -1;  // max|out - default_out| / max|default_out|; -1 when not compared
  std::string note;         // why it failed / was skipped / mismatched
  double short_us = 0;      // short-round time of a default or finalist (0: no short round)
  // The M a segment check timed it at ("low end", "top", "middle" rows); 0: at the M of the
  // segment (sampled_m) or of the key.
  int64_t m = 0;
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
  double threshold = 0;     // the gain a challenger needed: max(the minimum gain, twice the noise)
  std::string reason;       // one sentence: why `choice`
  bool measured = false;    // false: nothing was timed (budget spent, no challenger, ...)
  double elapsed_ms = 0;    // wall time spent on this key
  std::vector<int64_t> sampled_ms;  // M values below the edge where the finalists were also timed
  // The choice per part of the bucket, ascending; the last segment's tactic is `choice` (the
  // edge's). Adjacent segments with the same tactic are merged.
  std::vector<ChoiceSegment> segments;
  // Wall time per phase of this key (ms): listing, rounds (short + full at the edge),
  // output_check, samples, low_ends, middles, and the timer's own stages as timer_<stage>. Not
  // part of the decision.
  std::map<std::string, double> phase_ms;
  std::vector<CandidateReport> candidates;
  std::vector<std::string> excluded_backends;  // "name: reason"

  // The tactic this decision assigns to `m` (an M of its bucket): the first segment whose m_max
  // is >= m; `choice` when there are no segments.
  const std::string& choice_for(int64_t m) const;
};

// The gain a challenger needs over the default, and so how much slower than the default a tuned
// choice may be found and still count as no slower: max(kMinTuningGain, kNoiseFactor x the noise
// floor of the default timed twice) (docs/tuning.md "Measuring one key").
inline constexpr double kMinTuningGain = 0.015;
inline constexpr double kNoiseFactor = 2.0;
inline double tuning_threshold(double noise, double min_gain = kMinTuningGain, double noise_factor = kNoiseFactor) {
  return std::max(min_gain, noise_factor * noise);
}

// What a tuning run may spend, on what, and whom it tells. The rule itself has no settings
// (docs/tuning.md "Measuring one key").
struct TuneOptions {
  double key_budget_ms = 100;  // target per key (the largest keys go over: one challenger is always timed)
  double run_budget_ms = 0;    // whole run; 0 = unlimited. Keys past it keep their default.
  std::vector<std::string> backends;  // restrict challengers to these (empty: all)
  bool retune = false;         // tune keys already in the cache again
  // Called after each key (done counts keys finished, of total). Keys are tuned lightest first
  // (by estimated call time), not in the order given.
  std::function<void(size_t done, size_t total, const Decision&)> progress;
};

// Tunes every problem's key on `ctx` (one Decision per problem, in the order given; the keys are
// measured lightest first, docs/tuning.md "Light after heavy"), storing the choices
// in ctx's tuned cache (installing the autotuner on ctx if needed). Needs a GPU.
std::vector<Decision> tune(Context& ctx, const std::vector<Problem>& problems,
                           const TuneOptions& options = {});

// A tuning run into a cache file, what `fp8gemm tune` and fp8gemm.tune(cache=...) do, in one call:
// refuses `path` before measuring anything (Error(kInvalidArgument) naming it and the reason) when
// save_cache would refuse it on this device (cache_save_problem), merges the file into ctx's
// cache, tunes every problem's key as tune() does, and saves the cache there (merged with the
// disk). An empty `path` is refused too: the caller names the file (default_cache_path gives the
// usual one).
struct CacheTuneRun {
  size_t entries_before = 0;       // the valid entries the file held before the run
  std::vector<Decision> decisions;  // one per problem, as tune() returns them
};
CacheTuneRun tune_into_cache(Context& ctx, const std::vector<Problem>& problems, const std::string& path,
                             const TuneOptions& options = {});

// Tuned cache of `ctx` (install_autotuner is called if needed; docs/tuning.md "Cache file").
// load_cache replaces the in-memory entries with the file's valid ones and returns how many were
// kept; merge_cache adds them, keeping the in-memory ones on conflict. Neither throws for a bad
// file: one that is not a regular file, over 64 MiB, not an fp8gemm cache, truncated, or made for
// another GPU or library version is reported once on stderr and ignored (returns 0); malformed
// or stale entries are dropped with one warning and the rest kept. load_cache reports a missing
// file once; merge_cache does not (it is what a later save creates).
// save_cache merges with the file on disk under a lock (waited for at most 10 s) and replaces it
// atomically (temp file, rename, directory fsync). It writes only over nothing, an empty file or
// an fp8gemm cache for this GPU and version; anything else at `path` (another file, a directory,
// a FIFO, a device, a truncated or foreign cache) throws Error(kIo) naming the path and what is
// there, and is left as it was. A symlink is written through: its target is replaced, keeping
// the target's mode. Saving into default_cache_dir() creates that directory.
// Why save_cache to `path` on `device` would refuse or fail, "" when it would write: the same
// checks (what is at the path, its directory) without writing, so a tool can refuse a bad cache
// path before it spends minutes tuning. Without a device (before looking for a GPU) an fp8gemm
// cache of any GPU or version passes; check again with the device once it is known.
std::string cache_save_problem(const std::string& path, const DeviceInfo* device = nullptr);
size_t load_cache(Context& ctx, const std::string& path);
size_t merge_cache(Context& ctx, const std::string& path);
void save_cache(Context& ctx, const std::string& path);
void clear_cache(Context& ctx);

// Tuned entries as bytes, for a transport of the caller's choosing (torch.distributed in
// fp8gemm.tune(group=...); docs/torch.md "Tensor-parallel tuning"): the cache file's JSON text
// (format, validators, entries), so the receiver checks what a cache file is checked for.
// export_entries: the entries of `keys` (Decision::key strings) that ctx's cache holds, in key
// order (a key it lacks is absent; none: the validators alone), or every entry.
std::string export_entries(Context& ctx, const std::vector<std::string>& keys);
std::string export_entries(Context& ctx);

// What import_entries did with each entry, by key string.
struct ImportReport {
  std::vector<std::string> added;       // keys the cache lacked
  std::vector<std::string> replaced;    // keys whose different local entry was replaced (replace_local)
  std::vector<std::string> unchanged;   // keys whose local entry was the same already
  std::vector<std::string> kept_local;  // keys whose different local entry was kept (not replace_local)
  std::vector<std::string> refused;     // "key: why" (a tactic that does not parse or run here), or a malformed entry
};

// Adds the entries of `bytes` (export_entries of another process) to ctx's cache, each one whole
// or not at all. Throws Error(kInvalidArgument) with the reason when `bytes` is not an fp8gemm
// cache text, or was made on another setup (GPU, SM count, driver, CUDA, cuBLASLt or library
// version: the validators). An entry whose tactic (or a segment's) does not parse or fails
// can_implement here is refused, the rest kept. A key the cache holds with a different entry
// keeps the local one unless replace_local.
ImportReport import_entries(Context& ctx, const std::string& bytes, bool replace_local = false);

// Removes the entries of `keys` (key strings) from ctx's cache, so that `auto` answers them from
// the default table or the floor (as every rank of a group does for a key one of them failed);
// returns how many there were.
size_t forget_entries(Context& ctx, const std::vector<std::string>& keys);

// The key string of p's cache entry (Decision::key): what export_entries and forget_entries take.
std::string tune_key(const Problem& p);

// Where caches live when no path is named (docs/tuning.md "API and environment"):
// $FP8GEMM_CACHE_DIR, else $XDG_CACHE_HOME/fp8gemm (when absolute), else $HOME/.cache/fp8gemm;
// "" when none of them is set.
std::string default_cache_dir();
// The conventional file for `device` there, one per GPU and software stack:
// "<dir>/nvidia-h200-sm90-132sm-driver13000-cuda13000-cublaslt130100-fp8gemm0.1.0.json" (GPU
// name slug, compute capability, SMs, the driver, CUDA and cuBLASLt versions,
// FP8GEMM_VERSION_STRING); "" when default_cache_dir() is "".
std::string conventional_cache_path(const DeviceInfo& device);
// $FP8GEMM_CACHE, the one place it is read: nullopt when unset or empty, "" when `off` (no file),
// else the path it names.
std::optional<std::string> cache_path_from_env();
// The file `auto` loads on first use, lazy tuning saves to, and `fp8gemm tune` / tune_model write
// when no path is given: cache_path_from_env() when set, else conventional_cache_path(device).
// tune() itself writes no file (explain measures with it).
std::string default_cache_path(const DeviceInfo& device);

// Where `auto`'s answer for `p` on `ctx` comes from, in a sentence: the tuned cache (and its key),
// or the step of the default chain that decided (which table row or selector rule, and why), or
// the floor; "a custom selector" when ctx's selector is not the built-in one. Measures nothing.
std::string explain_choice(Context& ctx, const Problem& p);

// What `auto` runs for `p` on `ctx` without a tuned entry of its own: the default chain's answer
// (the exact table, the selector rules) or the floor, cuBLASLt's heuristic; for a layer problem,
// its GEMM's tuned choice where there is one. The reference of the tuned-never-slower guarantee
// (docs/tuning.md "Never slower than the default"); ctx.choose(p, "auto") without the built-in
// tuning selector. Measures nothing.
Tactic untuned_choice(Context& ctx, const Problem& p);

// Keys whose measuring failed in this process on `ctx` (the timer threw, or could not be made),
// with the reason: `auto` answers them from the default, and tune() reports them unmeasured until
// a retune measures them again. Empty without the built-in tuning selector.
std::map<std::string, std::string> failed_keys(Context& ctx);

// The library's warnings (an ignored cache file, a dropped cache entry, a cache that could not be
// saved) go to stderr as "fp8gemm: warning: <message>", each once per process, or to the sink set
// here (the torch extension routes them to Python's `warnings`). nullptr restores stderr; returns
// the previous sink.
using WarningSink = std::function<void(const std::string&)>;
WarningSink set_warning_sink(WarningSink sink);

// Installs the tuning selector on `ctx` (idempotent). default_context() does this for every
// context it creates; the selector loads default_cache_path(ctx.device()) (a missing
// $FP8GEMM_CACHE file is reported once; a missing conventional file is silent) and lazy tuning
// saves there.
void install_autotuner(Context& ctx);

// Mirrors FlashInfer's `with autotune(enabled, cache=...)`: while one is alive (scopes nest),
// "auto" calls on `ctx` (default_context() when null), from any thread, tune their key first if
// it is not in the cache, except while their stream is being captured. With a cache path the
// file is merged in first and saved (merged with the disk) when the scope ends. When the last
// scope on `ctx` ends, the tuner's GPU buffers go (release_tuning_buffers), unless FP8GEMM_TUNE=1
// keeps lazy tuning on.
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

// Frees the GPU memory the tuner of `ctx` holds between measurements: its timer's weight copies
// (several GB for the largest layers), activations, outputs, stream and that stream's workspace.
// tune() frees them when it returns and the last AutotuneScope when it ends, unless lazy tuning
// is still on (a scope alive, or FP8GEMM_TUNE=1: then they stay for the next lazy tune until this
// is called). Waits for a measurement in progress; the next tuning allocates them again. A no-op
// without the built-in tuning selector.
void release_tuning_buffers(Context& ctx);

}  // namespace fp8gemm
