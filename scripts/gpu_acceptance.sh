#!/usr/bin/env bash
# The acceptance runs on an H200, in phases; "bench" and "tune torch" each fit one 10-minute
# device call:
#   scripts/gpu_acceptance.sh BIN_DIR tests   GPU tests and `check` only
#   scripts/gpu_acceptance.sh BIN_DIR bench   GPU tests, `check`, and `bench` over the whole
#                                             DESIGN suite with every tactic of every backend
#                                             (its `auto` column is untuned: the default table)
#   scripts/gpu_acceptance.sh BIN_DIR tune    `tune` of the whole suite at every M bucket up to
#                                             16384 (`--m buckets`: the suite's M values and the
#                                             edges between them; timed), then `bench` of auto
#                                             (from that cache) against every tactic, at the
#                                             suite's M values and at M between bucket edges
#   scripts/gpu_acceptance.sh BIN_DIR tune-between   the same without the suite's M values (half
#                                             the device time; their points are bucket edges)
#   scripts/gpu_acceptance.sh BIN_DIR never-slower   `tune` of the suite and the held-out shapes
#                                             (data/tables/sm90/validation_shapes.txt) at every M
#                                             bucket, then `bench` between bucket edges (near the
#                                             buckets' middles and off them): the count of
#                                             points where tuned auto is slower than untuned auto
#                                             beyond the point's noise (target: none; docs/tuning.md
#                                             "Never slower than the default"; NEVER_SLOWER_TUNE_S
#                                             and NEVER_SLOWER_BENCH_S bound the tune and each bench)
#   scripts/gpu_acceptance.sh BIN_DIR torch   the PyTorch pytest suite and bench_torch.py over the
#                                             whole suite (TORCH_BUNDLE, default
#                                             build-torch-bundle), reusing $OUT/cache.json if the
#                                             tune phase ran first
# Several phases in one call: scripts/gpu_acceptance.sh BIN_DIR "tune torch".
# GTEST_FILTER narrows the GPU tests; TUNE_ARGS adds options to the tune step (e.g.
# --key-budget-ms 200). Logs and CSV/JSON go to $OUT (default ./gpu-out); a short summary is
# printed last.
set -uo pipefail
BIN=${1:?bin dir}
PHASES=${2:?bench, tune and/or torch}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/logs"
F="$BIN/fp8gemm"
summary=()
step() {  # step NAME CMD...
  local name=$1; shift
  local t0=$SECONDS
  "$@" > "$OUT/logs/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-12s rc=%-3d %5ds  %s' "$name" $rc $((SECONDS - t0)) "$(tail -n 1 "$OUT/logs/$name.log")")")
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv > "$OUT/logs/nvidia-smi.csv" 2>&1
# Clocks, power and throttle reasons through the whole call (docs/tuning.md "Power and clocks").
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader \
  -lms 200 > "$OUT/logs/clocks.csv" 2>&1 &
SMI_PID=$!
step info "$F" info
for PHASE in $PHASES; do
case "$PHASE" in
  tests|bench)
    # Each step has a time cap so that one slow step cannot take the whole call down with it.
    step gpu_tests timeout 240 "$BIN/fp8gemm_gpu_tests" --gtest_brief=1 --gtest_filter="${GTEST_FILTER:-*}" \
      --gtest_output=xml:"$OUT/logs/gpu_tests.xml"
    step check timeout 60 "$F" check --quiet
    # `bench --add-tactic`: named tactics get their own rows, and a name that runs nowhere fails.
    step add_tactic timeout 60 "$F" bench --shape 4096,4096 --m 1,16 --backend small_m \
      --add-tactic "small_m:wgmma,rows=64,splitk=2,stages=12,pdl=1,wload=cp" --add-tactic cublaslt:heuristic
    [ "$PHASE" = tests ] && continue
    step bench_small timeout 150 "$F" bench --model all --m 1,2,4,8,16,24,32,48,64,96,128,192,256 --tactics all \
      --csv "$OUT/suite_small.csv" --json "$OUT/logs/suite_small.json"
    step bench_large timeout 300 "$F" bench --model all --m 384,512,1024,2048,4096,8192,16384 --tactics all \
      --csv "$OUT/suite_large.csv" --json "$OUT/logs/suite_large.json"
    ;;
  tune|tune-between)
    step tune timeout 180 "$F" tune --model all --m buckets --run-budget-s 170 --cache "$OUT/cache.json" \
      --json "$OUT/logs/tune.json" ${TUNE_ARGS:-}
    export FP8GEMM_CACHE="$OUT/cache.json"
    [ "$PHASE" = tune ] && step auto_suite timeout 420 "$F" bench --model all --m suite --tactics all \
      --csv "$OUT/auto_suite.csv" --json "$OUT/logs/auto_suite.json"
    step auto_between timeout 180 "$F" bench --model all --m 3,12,40,100,200,300,700,3000 \
      --tactics all --csv "$OUT/auto_between.csv"
    step explain timeout 20 "$F" explain --shape 6144,4096 --m 40 --cache "$OUT/cache.json"
    unset FP8GEMM_CACHE
    ;;
  never-slower)
    held_out=$(awk '!/^#/{printf " --shape %s,%s", $2, $3}' "$(dirname "$0")/../data/tables/sm90/validation_shapes.txt")
    tune_s=${NEVER_SLOWER_TUNE_S:-220}
    step tune_held timeout $((tune_s + 10)) "$F" tune --model all $held_out --m buckets --run-budget-s "$tune_s" \
      --cache "$OUT/never_slower.json" --json "$OUT/logs/tune_never_slower.json" ${TUNE_ARGS:-}
    export FP8GEMM_CACHE="$OUT/never_slower.json"
    # Only auto, untuned auto and the cuBLASLt default are timed (--backend cublaslt): the count
    # compares the first two.
    step tuned_vs_untuned timeout "${NEVER_SLOWER_BENCH_S:-300}" "$F" bench --model all $held_out \
      --m 3,12,40,100,200,300,700,1500 --backend cublaslt --csv "$OUT/tuned_vs_untuned.csv"
    # Off the buckets' middles too, where the middle check timed nothing.
    step off_middle timeout "${NEVER_SLOWER_BENCH_S:-300}" "$F" bench --model all $held_out \
      --m 5,20,56,150,230,350,900,1300 --backend cublaslt --csv "$OUT/off_middle.csv"
    unset FP8GEMM_CACHE
    for b in tuned_vs_untuned off_middle; do
      summary+=("$b: $(grep -h "tuned auto slower" "$OUT/logs/$b.log" || echo "no tuned point ran")")
    done
    ;;
  torch)
    # gpu_torch_suite.sh writes its own logs; they join ours. bench_torch tunes only the keys
    # the cache lacks (all of them if the tune phase did not run in this call).
    step torch env OUT="$OUT/logs/torch" PYTEST_TIMEOUT=150 BENCH_TIMEOUT=300 bash scripts/gpu_torch_suite.sh \
      "${TORCH_BUNDLE:-build-torch-bundle}" -- --key-budget-ms 100 --run-budget-ms 120000 --cache "$OUT/cache.json"
    cp "$OUT/logs/torch/bench_torch.csv" "$OUT/logs/torch/bench_torch.md" "$OUT/" 2> /dev/null
    ;;
  *) echo "unknown phase $PHASE (tests, bench, tune, tune-between, never-slower, torch)" >&2; exit 2 ;;
esac
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$OUT/logs/nvidia-smi.csv" 2>&1
kill $SMI_PID 2> /dev/null
tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$OUT/logs"
[ -f "$OUT/bench_torch.md" ] && { echo "==== torch"; sed -n '/^| range/,/^$/p' "$OUT/bench_torch.md"; }
echo "==== summary ($PHASES)"; printf '%s\n' "${summary[@]}"
