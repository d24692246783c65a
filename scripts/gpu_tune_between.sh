#!/usr/bin/env bash
# The tune phase of gpu_acceptance.sh without the suite bench (device time): `fp8gemm tune --model
# all --m buckets` (timed), then tuned auto against every tactic between bucket edges.
# Usage: OUT=dir scripts/gpu_tune_between.sh [BIN_DIR]   (docs/perf/h200.md, session 5 run C)
set -u
BIN=${1:-.gpu/bin}; F=$BIN/fp8gemm; OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT/logs"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 200 > "$OUT/logs/clocks.csv" 2>&1 &
S=$!
s=$SECONDS; timeout 180 $F tune --model all --m buckets --run-budget-s 170 --cache "$OUT/cache.json" --json "$OUT/tune.json" ${TUNE_ARGS:-} > "$OUT/logs/tune.log" 2>&1; echo "tune rc=$? $((SECONDS-s))s: $(tail -2 $OUT/logs/tune.log | head -1)"
s=$SECONDS; FP8GEMM_CACHE="$OUT/cache.json" timeout 120 $F bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all --csv "$OUT/auto_between.csv" > "$OUT/logs/between.log" 2>&1; echo "between rc=$? $((SECONDS-s))s"
kill $S; gzip -f "$OUT/tune.json"; tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$OUT/logs"
