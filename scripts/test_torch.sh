#!/usr/bin/env bash
# The PyTorch extension's tests on this machine: a venv with torch 2.11 (PyPI's default wheel,
# CUDA 13; no CPU-only wheel is on PyPI: ~80 s and 4.6 GB here), the extension built into
# build-torch (library without CUTLASS, sm_90a: the CPU tests exercise the op layer, not
# kernels), then pytest: CPU tests run, GPU tests skip without a GPU. transformers (quantize_ on a
# Llama built from a config, the e2e decode's --dry-run) and matplotlib (the decode benchmark's
# plot) come along. FP8GEMM_TORCH_TESTS=0 in scripts/test.sh skips all of this.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${TORCH_VENV:-build-torch-venv}
if ! "$VENV/bin/python" -c "import torch, pytest, transformers, matplotlib" 2> /dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check torch==2.11.0 pytest numpy transformers==5.25.0 matplotlib==3.11.2
fi
BUILD=${BUILD_TORCH:-build-torch}
PYTHON="$VENV/bin/python" BUILD="$BUILD" BUNDLE="$BUILD/bundle" \
  scripts/make_torch_bundle.sh -DFP8GEMM_WITH_CUTLASS=OFF > /dev/null
FP8GEMM_TORCH_LIBRARY="$(cd "$BUILD/bundle" && pwd)/libfp8gemm_torch.so" \
  "$VENV/bin/python" -m pytest tests/python -q -rs -p no:cacheprovider
