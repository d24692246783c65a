#!/usr/bin/env bash
# One GPU run does everything: info, the GPU test suite, `fp8gemm check` over every tactic of
# every backend, and a short benchmark. Full logs go to $OUT (or ./gpu-out), a summary last.
#
#   scripts/gpu_suite.sh [BIN_DIR] [-- extra bench args]
#
# BIN_DIR holds fp8gemm, fp8gemm_gpu_tests and fp8gemm_cpu_tests (default: build/). Build them
# with scripts/build.sh (on this machine) or scripts/make_gpu_bundle.sh (elsewhere, then carry).
set -uo pipefail
BIN=${1:-build}
shift || true
[ "${1:-}" = "--" ] && shift
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
BENCH_ARGS=("$@")
[ ${#BENCH_ARGS[@]} -eq 0 ] && BENCH_ARGS=(--model llama8b --m 1,16,64,256,4096 --tactics all)

fp8gemm() { "$BIN/fp8gemm" "$@"; }
status=()
step() {  # step NAME CMD...: runs, logs to $OUT/NAME.log, records PASS/FAIL and seconds
  local name=$1; shift
  local t0=$SECONDS
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  status+=("$(printf '%-10s %-4s %4ds  %s' "$name" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" $((SECONDS - t0)) "$(tail -n 1 "$OUT/$name.log")")")
  return $rc
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/nvidia-smi.csv" 2>&1
step info fp8gemm info
step cpu_tests "$BIN/fp8gemm_cpu_tests" --gtest_brief=1
step gpu_tests "$BIN/fp8gemm_gpu_tests" --gtest_brief=1 --gtest_output=xml:"$OUT/gpu_tests.xml"
step check fp8gemm check --quiet
step bench fp8gemm bench "${BENCH_ARGS[@]}" --csv "$OUT/bench.csv" --json "$OUT/bench.json"

echo "==== info"; cat "$OUT/info.log"
echo "==== failures (gpu tests)"; grep -E "FAILED|Failure" "$OUT/gpu_tests.log" | head -40
echo "==== failures (check)"; grep -v "^check:" "$OUT/check.log" | grep -E "FAIL" | head -20
echo "==== bench (tail)"; tail -n 40 "$OUT/bench.log"
echo "==== summary"; printf '%s\n' "${status[@]}"
