#!/usr/bin/env bash
# On a machine with two GPUs (nvidia-h200-x2) and torch 2.11: bench/tp_tune.py under
# torch.distributed.run, one process per GPU, with the library prebuilt by make_torch_bundle.sh:
# Llama-3.1-8B's shapes tuned alone, with merge and with broadcast; the table goes to stdout and
# $OUT/tp_tune.log, each rank's entries and summary.json to $OUT (default ./gpu-tp-out).
#
#   scripts/gpu_tp_tune.sh [BUNDLE_DIR] [-- tp_tune.py args]      e.g. -- --models llama8b,llama70b_tp8
#
# NVLink multicast must stay off on the shared GPU machines: NCCL_NVLS_ENABLE=0 and
# TORCH_SYMM_MEM_DISABLE_MULTICAST=1 are exported here, and tp_tune.py refuses to run without
# them. NPROC (default 2) ranks; TP_TIMEOUT (default 540 s) bounds the whole run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${1:-build-torch-bundle}
shift || true
[ "${1:-}" = "--" ] && shift
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export FP8GEMM_TORCH_LIBRARY="$PWD/$BUNDLE/libfp8gemm_torch.so" PYTHONDONTWRITEBYTECODE=1
OUT=${OUT:-$PWD/gpu-tp-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv > "$OUT/nvidia-smi.csv" 2>&1 || true
timeout "${TP_TIMEOUT:-540}" "${PYTHON:-python3}" -m torch.distributed.run --standalone --nproc-per-node "${NPROC:-2}" \
  bench/tp_tune.py --out "$OUT" "$@" 2>&1 | tee "$OUT/tp_tune.log"
