#!/usr/bin/env bash
# Session 6 (docs/perf/small_m.md): small_m GPU tests (GF filter), SASS counts per kernel family, `check
# --backend small_m`, then the small_m bench at BENCH_M (default 1,16) and summarize.py --family wload=reg.
# Env: GF, TEST_S, CHECK (empty: skip), CHECK_S, BENCH_M, BENCH_S, FIN. Output in $OUT (<= 8 files).
# Carry a folder with bin/ (fp8gemm, fp8gemm_gpu_tests) and this folder's summarize.py and
# sass_count.py; DIR names it (default .gpu-reg).
DIR=${DIR:-.gpu-reg}
B=$DIR/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
t0=$SECONDS
timeout ${TEST_S:-90} $B/fp8gemm_gpu_tests --gtest_filter="${GF:-SmallM*}" > $OUT/gtest.log 2>&1; echo "gtest rc=$? $((SECONDS-t0)) s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure|wrong|by n|by m|fro_rel" $OUT/gtest.log | head -30
t0=$SECONDS
cuobjdump -sass $B/fp8gemm > $OUT/sass_all.txt 2>/dev/null
python3 $DIR/sass_count.py $OUT/sass_all.txt > $OUT/sass.txt 2>&1
awk '/Function : .*small_m_wgmma_reg_kernelINS0_4E4M3ES3_Li2ELi8E/{f=1} f&&/Function : /&&!/reg_kernelINS0_4E4M3ES3_Li2ELi8E/{f=0} f' $OUT/sass_all.txt > $OUT/sass_reg_np8.txt
rm -f $OUT/sass_all.txt; sed -n '/^reg:/,/^cp:/p' $OUT/sass.txt | head -30; echo "sass $((SECONDS-t0)) s"
if [ -n "${CHECK-1}" ]; then
  t0=$SECONDS; timeout ${CHECK_S:-60} $B/fp8gemm check --backend small_m --quiet > $OUT/check.log 2>&1; echo "check rc=$? $((SECONDS-t0)) s"; tail -3 $OUT/check.log
fi
t0=$SECONDS
timeout ${BENCH_S:-200} $B/fp8gemm bench --model all --m ${BENCH_M:-1,16} --backend small_m --tactics all --max-finalists ${FIN:-16} --replays 7 \
  --json $OUT/bench.json --csv $OUT/bench.csv > $OUT/bench.log 2>&1; echo "bench rc=$? $((SECONDS-t0)) s"
grep -iE "fail|wrong|error" $OUT/bench.log | head -5
python3 $DIR/summarize.py --family wload=reg $OUT/bench.json > $OUT/table.txt 2>&1
grep -vE "^(llama|tp8|nemo|nano|super|[0-9]+x[0-9]+)" $OUT/table.txt | head -40
cd $OUT && tar czf logs.tgz gtest.log sass.txt sass_reg_np8.txt check.log bench.csv bench.log 2>/dev/null && rm -f gtest.log sass_reg_np8.txt check.log bench.csv bench.log
ls $OUT
