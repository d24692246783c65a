#!/usr/bin/env bash
# On a GPU machine with torch 2.11: the PyTorch extension's pytest suite (GPU and CPU tests) and
# the benchmark against torch._scaled_mm, with the library prebuilt by make_torch_bundle.sh.
# Full logs, JUnit XML, CSV and a markdown table go to $OUT (default ./gpu-torch-out); a short
# summary is printed last.
#
#   scripts/gpu_torch_suite.sh [BUNDLE_DIR] [-- bench_torch.py args]
#
# BUNDLE_DIR defaults to build-torch-bundle. STAGES="pytest bench" (default) picks the steps;
# PYTEST_ARGS adds pytest arguments (e.g. "-k numerics"). Steps are time-limited
# (PYTEST_TIMEOUT, BENCH_TIMEOUT seconds) so that a hang still leaves the logs.
set -uo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${1:-build-torch-bundle}
shift || true
[ "${1:-}" = "--" ] && shift
BENCH_ARGS=("$@")
[ ${#BENCH_ARGS[@]} -eq 0 ] && BENCH_ARGS=(--key-budget-ms 50 --run-budget-ms 120000)
OUT=${OUT:-$PWD/gpu-torch-out}
STAGES=${STAGES:-pytest bench}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
export FP8GEMM_TORCH_LIBRARY="$PWD/$BUNDLE/libfp8gemm_torch.so" PYTHONDONTWRITEBYTECODE=1

status=()
step() {  # step NAME CMD...: runs, logs to $OUT/NAME.log, records PASS/FAIL and seconds
  local name=$1; shift
  local t0=$SECONDS
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  status+=("$(printf '%-7s %-4s %4ds  %s' "$name" "$([ $rc -eq 0 ] && echo PASS || echo "FAIL($rc)")" \
    $((SECONDS - t0)) "$(tail -n 1 "$OUT/$name.log")")")
  return $rc
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
  > "$OUT/nvidia-smi.csv" 2>&1
cat "$BUNDLE/BUILD_INFO.txt" > "$OUT/env.log" 2>&1
step import "$PY" -c "import sys, json, torch; sys.path.insert(0, 'python'); import fp8gemm
print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')
print(json.dumps(fp8gemm.info()))"
case " $STAGES " in *" pytest "*)
  # shellcheck disable=SC2086
  step pytest timeout "${PYTEST_TIMEOUT:-360}" "$PY" -m pytest tests/python -q -rs -p no:cacheprovider \
    --junitxml="$OUT/pytest.xml" ${PYTEST_ARGS:-} ;;
esac
case " $STAGES " in *" bench "*)
  step bench timeout "${BENCH_TIMEOUT:-420}" "$PY" bench/bench_torch.py --csv "$OUT/bench_torch.csv" \
    --md "$OUT/bench_torch.md" --cache "$OUT/fp8gemm-cache.json" "${BENCH_ARGS[@]}" ;;
esac

echo "==== environment"; cat "$OUT/env.log"; cat "$OUT/import.log"
if [ -f "$OUT/pytest.log" ]; then
  echo "==== pytest failures"; grep -E "^(FAILED|ERROR)" "$OUT/pytest.log" | head -30
  echo "==== pytest skips"; grep -E "^SKIPPED" "$OUT/pytest.log" | cut -c1-160 | head -12
fi
if [ -f "$OUT/bench.log" ]; then
  echo "==== bench (worst 8 points by x tuned)"
  grep -E "^[a-zA-Z0-9_]+\.[a-z_]+ " "$OUT/bench.log" | sort -k9 -g | head -8
  echo "==== bench summary"; sed -n '/^| range/,$p' "$OUT/bench.log"
fi
echo "==== summary"; printf '%s\n' "${status[@]}"
