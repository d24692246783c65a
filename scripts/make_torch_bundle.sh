#!/usr/bin/env bash
# Builds the PyTorch extension (libfp8gemm_torch.so, Python-version independent) for sm_90a on
# this machine and copies it into build-torch-bundle/ (git-ignored: build*), which a GPU run
# carries; scripts/gpu_torch_suite.sh loads it from there.
#
#   scripts/make_torch_bundle.sh [extra CMake args]     e.g. -DFP8GEMM_WITH_CUTLASS=OFF
#
# Needs torch (>= 2.11) importable by $PYTHON (default python3; e.g. a venv with
# `pip install torch==2.11.0`): its CMake config is what the extension builds against.
# BUILD (default build-torch) keeps CMake's cache between runs; ARCHS defaults to 90a-real; JOBS
# (default: every core) bounds the parallel compile.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
BUILD=${BUILD:-build-torch}
BUNDLE=${BUNDLE:-build-torch-bundle}
PY_EXE=$(command -v "$PYTHON")
"$PY_EXE" -c "import torch" 2> /dev/null || {
  echo "make_torch_bundle: $PY_EXE cannot import torch; install it (pip install torch==2.11.0) or set PYTHON" >&2
  exit 1
}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP8GEMM_BUILD_TORCH=ON -DFP8GEMM_BUILD_TESTS=OFF \
  -DFP8GEMM_BUILD_CLI=OFF -DPython_EXECUTABLE="$PY_EXE" -DCMAKE_CUDA_ARCHITECTURES="${ARCHS:-90a-real}" "$@" > /dev/null
cmake --build "$BUILD" -j"${JOBS:-$(nproc)}" --target fp8gemm_torch
rm -rf "$BUNDLE" && mkdir -p "$BUNDLE"
cp "$BUILD/python/libfp8gemm_torch.so" "$BUILD/python/libfp8gemm_torch.so.torch" "$BUNDLE/"
strip --strip-unneeded "$BUNDLE/libfp8gemm_torch.so"
{
  echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- python src include || echo ' (with uncommitted changes)')"
  echo "torch $("$PY_EXE" -c 'import torch; print(torch.__version__)')"
  grep -E "^(FP8GEMM_WITH_[A-Z_]+|CMAKE_CUDA_ARCHITECTURES):" "$BUILD/CMakeCache.txt"
} > "$BUNDLE/BUILD_INFO.txt"
cat "$BUNDLE/BUILD_INFO.txt"
du -sh "$BUNDLE"
