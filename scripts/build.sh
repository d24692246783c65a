#!/usr/bin/env bash
# Configures and builds fp8gemm (library, CLI, tests) into ${BUILD:-build}. Extra args go to CMake,
# e.g. -DFP8GEMM_CUTLASS_KERNELS=reduced.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$BUILD" -j"$(nproc)"
