#!/usr/bin/env bash
# Tune-vs-bench diagnostic (docs/perf/h200.md "S5.1"): clocks and power during tune-like (explain)
# and sustained (bench) timing at large M, and CUTLASS 64x128 vs cuBLASLt across M in (192, 256].
# Usage: OUT=dir scripts/gpu_diag_power.sh [BIN_DIR]
set -uo pipefail
BIN=${1:-.gpu/bin}; F=$BIN/fp8gemm; OUT=${OUT:-$PWD/gpu-out}
mkdir -p $OUT
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 100 > $OUT/smi.csv 2>&1 &
SMI=$!
mark() { echo "$(date +%H:%M:%S.%N) $1" >> $OUT/marks.txt; }
mark start; sleep 1
mark explain_cold
timeout 30 $F explain --shape 4480,15680 --m 4096 > $OUT/explain_cold.txt 2>&1
mark explain_cold_end; sleep 2
mark bench_sustained
timeout 90 $F bench --shape 4480,15680 --m 4096 --backend cublaslt,cutlass --tactics all --max-finalists 8 --json $OUT/bench_4096.json > $OUT/bench_4096.txt 2>&1
mark bench_end
timeout 30 $F explain --shape 4480,15680 --m 4096 > $OUT/explain_hot.txt 2>&1
mark explain_hot_end; sleep 3
mark m200_study
timeout 120 $F bench --shape 4096,8192 --m 192,193,200,208,213,224,235,240,256 --backend cublaslt,cutlass --tactics all --max-finalists 6 --json $OUT/m200.json > $OUT/m200.txt 2>&1
mark m200_end
kill $SMI
grep -E "^\s*(choice|default|auto)" $OUT/explain_cold.txt | head; grep -E "^\s*(choice|default|auto)" $OUT/explain_hot.txt | head
tail -5 $OUT/bench_4096.txt; tail -12 $OUT/m200.txt
awk -F', ' '{print $2}' $OUT/smi.csv | sort | uniq -c | sort -rn | head -5
