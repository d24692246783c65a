#!/bin/bash
# One device call (issue 4, session 4): fixed-cost breakdown + correctness of the changed v3 kernel + suite bench.
B=${B:-.gpu-smallm/s4}  # holds small_m_fixed_cost, fp8gemm, fp8gemm_gpu_tests and the two .py scripts
t0=$(date +%s); el() { echo "[$(( $(date +%s)-t0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
timeout 45 $B/small_m_fixed_cost > $OUT/diag.txt 2> $OUT/diag.err; echo "diag rc=$? $(el)"; tail -2 $OUT/diag.err
timeout 55 $B/fp8gemm_gpu_tests --gtest_filter='SmallM*:PdlOrdering*' > $OUT/gtest.log 2>&1; echo "gtest rc=$? $(el)"
grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED|Failure" $OUT/gtest.log | head -20
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 30 $CS --tool memcheck $B/fp8gemm_gpu_tests --gtest_filter='SmallM.WgmmaEveryInstantiationAndSplit:SmallM.SplitKIsDeterministic' > $OUT/memcheck.log 2>&1
echo "memcheck rc=$? $(el)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -4
timeout 40 $B/fp8gemm check --backend small_m --quiet > $OUT/check.log 2>&1; echo "check rc=$? $(el)"; tail -2 $OUT/check.log
timeout 58 $B/fp8gemm bench --model all --m 1,2,4 --backend small_m --tactics all --max-finalists 12 --replays 7 --json $OUT/b1.json --csv $OUT/b1.csv > $OUT/bench1.log 2>&1; echo "bench1 rc=$? $(el)"
timeout 58 $B/fp8gemm bench --model all --m 8,16 --backend small_m --tactics all --max-finalists 12 --replays 7 --json $OUT/b2.json --csv $OUT/b2.csv > $OUT/bench2.log 2>&1; echo "bench2 rc=$? $(el)"
grep -iE "fail|wrong|error" $OUT/bench*.log | head -4
python3 $B/summarize.py $OUT/b1.json $OUT/b2.json > $OUT/table.txt 2>&1
cd $OUT && tar czf logs.tgz *.log *.csv diag.err 2>/dev/null && rm -f *.log *.csv diag.err; cd - > /dev/null
grep -vE "^(llama|tp8|nemo|nano|super|[0-9]+x[0-9]+)" $OUT/table.txt | grep -v "^  " | head -16
python3 $B/fixed_cost_table.py $OUT/diag.txt
