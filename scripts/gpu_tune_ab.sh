#!/usr/bin/env bash
# Tuner variants compared in one device call (each call may land on another H200, and the same
# tactic moves by a few % from call to call, so an A/B belongs in one call; docs/tuning.md):
#   scripts/gpu_tune_ab.sh BIN_DIR "" "--no-adaptive-floor" "--split-segments"
# For each argument (flags for `fp8gemm tune`; "" = the defaults) it runs
# `scripts/gpu_acceptance.sh BIN_DIR tune-between` (whole-suite tune, then `auto` against every
# tactic at M between bucket edges), ~3 minutes each: three variants fit one 10-minute call.
# Everything goes into one archive, $OUT/tune_ab.tar.gz (the device returns at most 8 files);
# the regret summary of each variant is printed last.
set -u
BIN=${1:?bin dir}
shift
OUT=${OUT:-$PWD/gpu-out}
W=$(mktemp -d)
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
i=0
for args in "$@"; do
  i=$((i + 1))
  mkdir -p "$W/v$i"
  echo "$args" > "$W/v$i/tune_args.txt"
  TUNE_ARGS="$args" OUT="$W/v$i" bash "$HERE/gpu_acceptance.sh" "$BIN" tune-between > "$W/v$i/summary.txt" 2>&1
done
tar -C "$W" -czf "$OUT/tune_ab.tar.gz" .
for d in "$W"/v*; do
  echo "==== $(basename "$d"): fp8gemm tune $(cat "$d/tune_args.txt")"
  grep -E "^tune " "$d/summary.txt"
  python3 "$HERE/auto_regret.py" --by-m --worst 5 "$d/auto_between.csv" 2> /dev/null || echo "(no auto_between.csv)"
done
rm -rf "$W"
