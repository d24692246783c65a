#!/bin/bash
# One device call for issue 4 (small_m v4, persistent v3): GPU tests, optional memcheck, benches.
# Env: TEST_S (gtest limit), SAN (memcheck limit, empty = skip), BENCH="label|args;label|args" groups.
B=.gpu-smallm/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
start=$(date +%s)
timeout ${TEST_S:-60} $B/fp8gemm_gpu_tests --gtest_filter="${GF:-SmallM*}" > $OUT/gtest.log 2>&1; rc=$?
echo "gtest rc=$rc $(( $(date +%s) - start )) s"
grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED|Failure|wrong|got .* want|by n|by m|fro_rel" $OUT/gtest.log | head -40
if [ -n "$SAN" ]; then
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer); start=$(date +%s)
  timeout $SAN $CS --tool memcheck $B/fp8gemm_gpu_tests --gtest_filter="${SANF:-SmallM.WgmmaPersistent*}" > $OUT/memcheck.log 2>&1
  echo "memcheck rc=$? $(( $(date +%s) - start )) s"; grep -E "ERROR SUMMARY|PASSED|FAILED|Invalid" $OUT/memcheck.log | head -8
fi
if [ -n "$CHECK" ]; then
  start=$(date +%s)
  timeout $CHECK $B/fp8gemm check $CHECK_ARGS > $OUT/check.log 2>&1; echo "check rc=$? $(( $(date +%s) - start )) s"; tail -4 $OUT/check.log
fi
if [ -n "$SASS" ]; then
  cuobjdump -sass $B/fp8gemm > $OUT/sass_all.txt 2>/dev/null
  python3 .gpu-smallm/sass_count.py $OUT/sass_all.txt > $OUT/sass.txt 2>&1; rm -f $OUT/sass_all.txt; head -30 $OUT/sass.txt
fi
i=0
IFS=';' read -ra groups <<< "$BENCH"
for g in "${groups[@]}"; do
  i=$((i+1)); start=$(date +%s)
  timeout ${BENCH_S:-70} $B/fp8gemm bench $g --json $OUT/b$i.json --csv $OUT/b$i.csv > $OUT/bench$i.log 2>&1
  echo "bench $i rc=$? $(( $(date +%s) - start )) s: $g"
  grep -iE "fail|wrong|error" $OUT/bench$i.log | head -5
done
cd $OUT && tar czf logs.tgz *.log *.csv 2>/dev/null; rm -f *.log *.csv; cd - >/dev/null
python3 .gpu-smallm/summarize.py $OUT/b*.json > $OUT/table.txt 2>&1
grep -vE "^(llama|tp8|nemo|nano|super|[0-9]+x[0-9]+)" $OUT/table.txt | head -70
