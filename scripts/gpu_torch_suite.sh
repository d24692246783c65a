#!/usr/bin/env bash
# On a GPU machine with torch 2.11: the PyTorch extension's pytest suite (GPU and CPU tests) and
# the benchmark against torch._scaled_mm, with the library prebuilt by make_torch_bundle.sh.
# Full logs, JUnit XML, CSV and a markdown table go to $OUT (default ./gpu-torch-out); a short
# summary is printed last.
#
#   scripts/gpu_torch_suite.sh [BUNDLE_DIR] [-- bench_torch.py args]
#
# BUNDLE_DIR defaults to build-torch-bundle. STAGES="pytest bench" (default) picks the steps;
# "decode" adds bench/decode_step.py: the step table and plot (DECODE_ARGS replaces its model
# options, default the llama8b, nemotronh8b and llama70b_tp8 presets) and the isolation of
# Llama-3.3-70B TP4 at M=256. "layer": the layer benchmark (FP8 linear layers, bf16 in and out,
# against bf16 F.linear; torch FP8, fbgemm-gpu-genai where it imports, fp8gemm static, dynamic
# and its GEMM alone) at M = 1 ... 4096 over 8 decoder layers of Qwen3-4B TP1, Mistral-Large-2407
# TP8, Llama-3.1-8B TP1 and Llama-3.x-70B TP8 (LAYER_ARGS replaces the model options), tuned
# first (LAYER_KEY_BUDGET_MS per key), CSV and plot. "e2e": the end-to-end greedy decode of a
# Llama-3.2-1B-shaped and a Qwen3-4B-shaped (12 layers) model at batch 1 and 8, FP8 against bf16
# (E2E_ARGS adds arguments). PYTEST_ARGS adds pytest arguments (e.g. "-k numerics"). Steps are
# time-limited (PYTEST_TIMEOUT, BENCH_TIMEOUT, DECODE_TIMEOUT, LAYER_TIMEOUT, E2E_TIMEOUT seconds)
# so that a hang still leaves the logs.
#
# fbgemm-gpu-genai (the layer benchmark's fbgemm contenders; 1.6.0 is the release built for torch
# 2.11 and CUDA 13) is tried by import: a fbgemm_gpu_genai-*.whl in FBGEMM_WHEELS (default .whl)
# is installed like the wheels below; without it those contenders are skipped with a note.
#
# The GPU machine has no transformers (the e2e decode and test_nn_gpu's Hugging Face test) and
# no network: carry its wheels in WHEELS (default build-bench-wheels), made on this machine with
#   python3 -m pip download --only-binary :all: --python-version 3.12 --platform manylinux_2_28_x86_64 \
#     --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d build-bench-wheels \
#     transformers==5.25.0 && rm build-bench-wheels/numpy-*
# (about 31 MB; numpy is there already). The plots need matplotlib, which is not carried: make them
# here from the CSVs with `bench/decode_step.py plot --csv decode_step.csv --out decode_step.png`
# (and --csv layer.csv --out layer.png, which also prints the layer summary again).
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
WHEELS=${WHEELS:-build-bench-wheels}
if [ -d "$WHEELS" ]; then  # --no-deps: every wheel is named, and what the machine has stays its own
  "$PY" -m pip install -q --no-index --no-deps --target /tmp/fp8gemm-pydeps "$WHEELS"/*.whl > "$OUT/pydeps.log" 2>&1
  export PYTHONPATH="/tmp/fp8gemm-pydeps${PYTHONPATH:+:$PYTHONPATH}"
fi
FBGEMM_WHEELS=${FBGEMM_WHEELS:-.whl}
if compgen -G "$FBGEMM_WHEELS/fbgemm_gpu_genai-*.whl" > /dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --target /tmp/fp8gemm-pydeps "$FBGEMM_WHEELS"/fbgemm_gpu_genai-*.whl \
    >> "$OUT/pydeps.log" 2>&1
  case ":${PYTHONPATH:-}:" in *":/tmp/fp8gemm-pydeps:"*) ;; *) export PYTHONPATH="/tmp/fp8gemm-pydeps${PYTHONPATH:+:$PYTHONPATH}" ;; esac
fi
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

case " $STAGES " in *" decode "*)
  TP4_70B="qkv=2560x8192,o=8192x2048,gate_up=14336x8192,down=8192x7168"
  # shellcheck disable=SC2086
  step decode timeout "${DECODE_TIMEOUT:-420}" "$PY" bench/decode_step.py step \
    ${DECODE_ARGS:---model llama8b,nemotronh8b,llama70b_tp8} --csv "$OUT/decode_step.csv" --plot "$OUT/decode_step.png"
  step isolate timeout "${DECODE_TIMEOUT:-420}" "$PY" bench/decode_step.py isolate --linears "$TP4_70B" \
    --label llama70b_tp4 --layers 20 --m 128,256,384 --csv "$OUT/isolate.csv" ;;
esac
case " $STAGES " in *" layer "*)
  # shellcheck disable=SC2086
  step layer timeout "${LAYER_TIMEOUT:-570}" "$PY" bench/decode_step.py layer \
    ${LAYER_ARGS:---model qwen3_4b,mistral_large_tp8,llama8b,llama70b_tp8 --layers 8} \
    --key-budget-ms "${LAYER_KEY_BUDGET_MS:-50}" --cache "$OUT/fp8gemm-cache.json" \
    --csv "$OUT/layer.csv" --plot "$OUT/layer.png" ;;
esac
case " $STAGES " in *" e2e "*)
  for preset in llama3_2_1b qwen3_4b; do
    # shellcheck disable=SC2086
    step "e2e_$preset" timeout "${E2E_TIMEOUT:-420}" "$PY" bench/decode_step.py e2e --preset "$preset" \
      --batch 1,8 --json "$OUT/e2e_$preset.json" ${E2E_ARGS:-}
  done ;;
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
if [ -f "$OUT/decode.log" ]; then
  echo "==== decode step"; grep -E "^(model|# worst|# tuned fp8gemm slower)" "$OUT/decode.log"
  echo "==== isolate"; grep -E "^(== isolate|step |sum of alone|between kernels|no PDL|out= buffers|profile)" "$OUT/isolate.log"
fi
if [ -f "$OUT/layer.log" ]; then
  echo "==== layer"; grep -E "^# (fbgemm|note|tuned|NVIDIA|csv|plot|no plot)" "$OUT/layer.log" | cut -c1-200 | head -24
  sed -n '/^## all /,/^# csv/p' "$OUT/layer.log"
fi
for log in "$OUT"/e2e_*.log; do
  [ -f "$log" ] || continue
  echo "==== $(basename "$log" .log)"; grep -E "^(# e2e|# batch|bf16 |fp8gemm |torch_fp8 )" "$log" | cut -c1-200
done
echo "==== summary"; printf '%s\n' "${status[@]}"
