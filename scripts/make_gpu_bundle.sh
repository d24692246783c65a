#!/usr/bin/env bash
# Builds the full project for sm_90a here and copies what a GPU run needs into .gpu/ (git-ignored),
# to be carried to a GPU machine: .gpu/bin/{fp8gemm,fp8gemm_gpu_tests,fp8gemm_cpu_tests}.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" > /dev/null
cmake --build "$BUILD" -j"$(nproc)" --target fp8gemm_cli fp8gemm_gpu_tests fp8gemm_cpu_tests
rm -rf .gpu && mkdir -p .gpu/bin
cp "$BUILD/tools/cli/fp8gemm" "$BUILD/tests/fp8gemm_gpu_tests" "$BUILD/tests/fp8gemm_cpu_tests" .gpu/bin/
strip .gpu/bin/* || true
du -sh .gpu
