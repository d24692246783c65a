#!/usr/bin/env bash
# The test command: installs dependencies, builds, and runs every test with CTest. CPU tests run
# everywhere; GPU tests report themselves skipped when there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# mid_m is built on request only (docs/mid_m.md); the tests build it so that it keeps compiling and
# its CPU tests run.
scripts/build.sh -DFP8GEMM_WITH_MID_M=ON "$@"
ctest --test-dir "${BUILD:-build}" --output-on-failure -j"$(nproc)"
# The install and its CMake package config: a separate project finds and links fp8gemm.
B=${BUILD:-build}
cmake --install "$B" --prefix "$B/_install" > /dev/null
cmake -S tests/install -B "$B/_consumer" -G Ninja -DCMAKE_PREFIX_PATH="$PWD/$B/_install" > /dev/null
cmake --build "$B/_consumer" > /dev/null
"$B/_consumer/consumer"
# PyTorch extension (docs/torch.md): CPU tests here, GPU tests skip; FP8GEMM_TORCH_TESTS=0 skips it.
[ "${FP8GEMM_TORCH_TESTS:-1}" = 0 ] || scripts/test_torch.sh
# The vLLM and SGLang plugins inside the real engines (docs/integrations.md "Tests"), against torch
# 2.14; FP8GEMM_ENGINE_TESTS=0 skips it.
[ "${FP8GEMM_ENGINE_TESTS:-1}" = 0 ] || scripts/test_engines.sh
