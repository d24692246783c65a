// The tuning policy for one key: which candidates, how they are measured (rounds, budgets),
// and the rule that decides (DESIGN.md "Measuring"). Works on Backend* and a Timer only, so
// every rule is tested on the CPU with fake backends and fake timers.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "fp8gemm/backend.h"
#include "fp8gemm/tune.h"
#include "measure/rounds.h"
#include "measure/timer.h"

namespace fp8gemm::tuning {

struct PolicyOptions {
  double key_budget_ms = 100;
  double min_gain = 0.015;
  double noise_factor = 2.0;
  double output_tolerance = 0.02;
  std::vector<std::string> backends;  // challengers only from these (empty: all)
  RoundOptions rounds;                // prune_ratio, max_finalists, full-round replays
  // The choice must hold for every M of the bucket, not only its upper edge: the finalists
  // (best first, at most `sampled_finalists`, within the key budget again) are also timed at
  // `bucket_samples` M values below the edge, and each sampled M gets its own choice for the
  // part of the bucket from the sample below it, and upwards while that choice needs no more M
  // tiles, up to the next sampled M (docs/tuning.md "Segments"). Each sample after the first
  // goes where the previous choice needs another tile, but no lower than bucket_sample_ms()
  // puts it.
  int bucket_samples = 2;
  int sampled_finalists = 6;
  // Then up to this many of the candidates the edge's short round pruned, fastest first: a
  // tile that wastes a wave at the edge may be the best fit lower in the bucket. One: in three
  // whole-suite tunes on the H200 (session 7, 4 of them timed per sample) one of ~1100 segments
  // below an edge went to a tactic the edge had pruned, and the samples are ~40% of the tune.
  int sampled_pruned = 1;
  // A segment below the edge whose choice is a challenger is timed again at its lowest M
  // against its default, which takes the segment where its worse regret over both ends is
  // smaller (docs/tuning.md "Checking a segment's lowest M"). Off here, on through TuneOptions.
  bool check_segment_low_ends = false;
  // With check_segment_low_ends: the adaptive floor (Backend::adaptive_default, e.g.
  // "cublaslt:heuristic") is a contender too, the floor at each sampled M is timed for it, and
  // the edge's own segment is checked as well. Off here, on through TuneOptions.
  bool adaptive_floor = false;
  // With check_segment_low_ends: where the two ends of a segment each prefer another contender by
  // more than the threshold, the segment is split where the two contenders' times cross, found by
  // bisection (segment_ends.cpp split_where_they_cross); the lower part goes to the lowest M's
  // best (off: the contender with the smaller worse regret takes all).
  bool split_segments = false;
  // With adaptive_floor: where the adaptive floor is the fastest at a segment's lowest M and
  // slower than a fixed contender at its top, each by more than the threshold, the segment is
  // split where the heuristic's answer turns into its kernel at the top (bisection over its
  // answers, nothing timed; segment_ends.cpp split_at_floor_switch): the adaptive floor below,
  // that contender above. Off here, on in TuneOptions.
  bool split_at_floor_switch = false;
  // With adaptive_floor: where the adaptive floor takes a segment, the kernel it ran at the
  // segment's lowest M (timed there, the fastest) runs from there up to its own reach (the same M
  // tiles) wherever the heuristic answers another kernel inside that range, and so does the lower
  // part that split_at_floor_switch gives it (segment_ends.cpp low_kernel_holds). Off here, on in
  // TuneOptions.
  bool floor_keeps_low_kernel = false;
  // With adaptive_floor: a segment that kept the floor's fixed answer at its sampled M, and
  // whose lowest M was not timed, runs the adaptive floor instead (segment_ends.h
  // adapt_kept_floors). Off here, on in TuneOptions (as with adaptive_floor).
  bool kept_floor_adapts = false;
  // Where a sampled M keeps its default only because the edge's choice is not faster there by
  // more than the threshold, the sample follows the edge's choice instead, if that was not slower
  // there than the default and its output matches (ties at a sample then go to the choice the
  // bucket already made rather than to a second tactic; docs/tuning.md "Ties at a sampled M").
  // Off (here and in TuneOptions): measured on the H200, it changed 1-2 samples per whole-suite
  // tune and nothing beyond the run-to-run spread.
  bool samples_follow_edge = false;
  // With check_segment_low_ends: the fastest other tactic that tied with a segment's choice
  // where the segment was timed (within the threshold) is timed at its lowest M too, and may
  // take the segment by the same worse-regret rule, once its output matches the default's at
  // both ends (segment_ends.cpp). Why: a tie at the sampled M can hide a 15% gap a few M lower
  // (H200, 4608x4096: cuBLASLt's 128x72 tile and 80x128 within 1% at M=213, 128x72 1.15x the
  // best at 200). Off here and in TuneOptions: on the H200 (session 11) 163 -> 165 of 184 points
  // between edges, within the spread, and it missed its own target.
  bool low_end_ties = false;
  // With the adaptive floor: it competes in a segment's low-end check only where cuBLASLt's
  // heuristic answers, at 8 M values spread inside the segment, one of the two kernels timed at
  // its ends. Why: the check times it at the segment's two ends, and it runs a third kernel in
  // between where the heuristic changes its mind twice (H200 session 11, 10240x8192: it took
  // (2816, 3072] at 2817, and at M=3000 ran a 256x160 tile 1.15x the best). Off here and in
  // TuneOptions: on the H200 (session 12) 167 -> 160 of 184 points between edges, max 1.096 -> 1.216.
  bool adaptive_floor_interior = false;
  // Where the rule at the edge or at a sampled M keeps the default only because the noise floor
  // was high (the best challenger faster by more than min_gain, not by noise_factor x noise),
  // that challenger is timed again with the default in a longer round (tune/retime.h), whose own
  // noise sets the threshold; it wins if it is faster beyond that and its output matches. At
  // most a quarter of the key budget goes to these. Off here, on through TuneOptions.
  bool retime_in_noise = false;
  // With retime_in_noise, where a round's replays are shorter than a retime's (calls under
  // kCloseCallUs, so fewer than ~20 x 15 us = 300 us a replay): the rule's choice (a winner, or
  // the kept default) is timed again against the fastest other tactic of the round when that one
  // is within close_margin of it, either side. The other takes the point if it is faster beyond
  // the longer round's threshold (and its output matches the default's). Why: at such calls the
  // replay's length reorders tactics (H200 session 18, 8192x1024 at M=32: small_m persist=1 4.13
  // us against wload=cp 4.29 in 20-call replays, 4.53 against 3.93 in 71-call replays). Off here
  // and in TuneOptions (measured once, docs/tuning.md "Retiming a close call"). Measured with
  // 20-call rounds; the tuner's timer now times short calls in >= 300 us replays itself
  // (TuneOptions::min_replay_us), so the retime no longer lengthens them.
  bool retime_close_calls = false;
  double close_margin = 0.05;
  // Tactics a backend lists at a sampled M but not at the edge (cuBLASLt's heuristic answers
  // per M) also timed there, at most this many per M; 0: only the edge's candidates compete.
  int sample_newcomers = 4;
  // The lower bucket's choice at its edge (the first fixed tactic of `preferred`) is also timed
  // at the lowest sample, just above that edge, where it is likeliest still to be the best, and
  // the edge may have pruned it (a fitted tile: 64xM/1 is 256 rows high at 256). On the H200
  // (session 26) it took 22 of the 172 lowest samples it was timed at, by 2-8%, at no measurable
  // cost to the tune; between edges 177 against 176 of 184 without it (docs/tuning.md "Segments").
  bool lower_choice_at_first_sample = true;
  // What `auto` runs at an M without tuning (the reference there: table or floor); empty: the
  // edge's default at every M.
  std::function<Tactic(const Problem&)> default_at;
  // Tactics to try first after the default (e.g. the neighbouring bucket's finalists): under a
  // tight key budget the likeliest winners are then measured before the others.
  std::vector<std::string> preferred;
  std::function<double()> clock_ms;   // wall clock (injectable for tests); empty: steady_clock
};

PolicyOptions policy_options(const TuneOptions& o);

// Candidates of one problem: the default first, then every tactic of every available backend
// (allowed by `only`), without repeats. A backend that throws while listing is excluded with
// its reason ("name: why"); listing carries on with the others.
struct Candidates {
  std::vector<Tactic> tactics;
  std::vector<std::string> excluded_backends;
  std::set<std::string> excluded_names;  // the backends of excluded_backends, by name
};
Candidates gather_candidates(const Problem& p, const std::vector<Backend*>& backends,
                             const Tactic& default_tactic, const std::vector<std::string>& only);

// Appends the `preferred` tactics (a neighbouring bucket's choices and finalists) that no backend
// listed for `p` but whose backend can run `p` and is allowed and not excluded (`c` comes from
// gather_candidates, which excludes the unavailable ones): a backend may list per M (cuBLASLt's
// heuristic answers per M; on the H200 the 168x128 tile chosen at 8192x8192 M <= 6144 was not in
// the list at M <= 8192), and a neighbour's best is the likeliest winner under a tight key budget. The adaptive tactic is left out (it runs the
// backend's listed default here); names that do not parse are ignored. Returns the names added.
std::vector<std::string> add_unlisted_preferred(Candidates& c, const Problem& p, const std::vector<Backend*>& backends,
                                                const std::vector<std::string>& preferred,
                                                const std::vector<std::string>& only);

// A rough per-call time (us) from a conservative roofline; only used to fit the measurement
// into the key's budget, never to decide.
double estimate_call_us(const Problem& p);

// How measure_in_rounds is configured for `p` with `n_candidates` candidates so that the key
// stays within its budget; `keep` is how many candidates (default included) may be measured.
struct RoundPlan {
  RoundOptions rounds;
  size_t keep = 0;
};
RoundPlan plan_rounds(const Problem& p, size_t n_candidates, const PolicyOptions& o);

// The candidates that fit the plan: the default, then the preferred ones (in their order, those
// listed), then the backends' tactics interleaved (each backend's first, then each one's
// second, ...), since every backend lists its own likeliest tactics first (cuBLASLt: heuristic
// order).
std::vector<Tactic> trim_candidates(const std::vector<Tactic>& tactics, size_t keep,
                                    const std::vector<std::string>& preferred = {});

// M values below the bucket's upper edge `m` at which the finalists are also timed: `count`
// points splitting the bucket (lower, edge] into equal parts (distinct, ascending). Each one's
// choice covers the M values from the previous point (exclusive) up to it; decide() moves a
// sample up to where the previous sample's choice needs another M tile when that is higher.
std::vector<int64_t> bucket_sample_ms(int64_t m, int count);

// The previous edge of m's bucket: the bucket is (lower, edge].
int64_t bucket_lower(int64_t m);

// The estimated cost (us) of `tactics` tactics timed at q in a round of `round` (its warm-up and
// timed replays, with the GPU timer's default sizing); only for budgeting.
double round_cost_us(const Problem& q, const MeasureOptions& round, int tactics = 1);

// The estimated cost (us) of one tactic timed below the edge at q (warm-up + 5 replays); only
// for budgeting.
double below_edge_cost_us(const Problem& q);

// How far `challenger`'s output is from `reference`'s on the same inputs (Timer::compare_outputs);
// INFINITY when the comparison itself fails. A challenger matches when this is <= the output
// tolerance, which a NaN fails too.
double output_diff(Timer& timer, const Problem& p, const Tactic& reference, const Tactic& challenger);

// Measures and decides one key. `problem` is the key's representative problem. Never throws
// for a failing candidate or backend; a failing timer keeps the default with the reason.
Decision decide(const Problem& problem, const std::vector<Backend*>& backends,
                const Tactic& default_tactic, const Tactic& floor_tactic, Timer& timer,
                const PolicyOptions& options);

}  // namespace fp8gemm::tuning
