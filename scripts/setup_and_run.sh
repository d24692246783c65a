#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build, then
#  - with a GPU: check every tactic on a small set, and benchmark Llama-3.1-8B's layers over
#    the DESIGN M suite (every backend and tactic, ratio to cuBLASLt's default);
#  - without a GPU: say so plainly and run the CPU self-check.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh "$@"
if ./build/tools/cli/fp8gemm info | grep -q "^No GPU"; then
  ./build/tools/cli/fp8gemm info
  echo
  echo "No GPU here: the benchmark needs an NVIDIA GPU (compute capability >= 8.9). Running the CPU self-check instead."
  ctest --test-dir build -L cpu --output-on-failure -j"$(nproc)"
  exit 0
fi
./build/tools/cli/fp8gemm info
./build/tools/cli/fp8gemm bench --model llama8b --m suite --tactics all --csv bench-llama8b.csv
echo "Full results: bench-llama8b.csv"
