# ==== .gpu-s30/call1.sh
#!/usr/bin/env bash
# Session 30 call 1: two whole-suite tunes at M <= 32 by a binary whose default table is empty
# (.gpu-s30/empty, 15265be with the generated rules removed), for the table's M <= 32 rules with
# session 28's small_m candidates; then untuned auto (the current table) at M = 3, 12 as the reference.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
xz -dk .gpu-s30/empty/fp8gemm.xz 2>/dev/null; chmod +x .gpu-s30/empty/fp8gemm
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv,noheader
for i in 1 2; do
  s=$SECONDS; timeout 100 .gpu-s30/empty/fp8gemm tune --model all --m 1,2,4,8,16,24,32 --run-budget-s 90 --cache $R/empty_$i.json \
    --json $R/tune_empty_$i.json > $R/tune_empty_$i.log 2>&1; echo "tune empty $i rc=$? $((SECONDS-s))s $(tail -1 $R/tune_empty_$i.log)"
done
rm -f $R/empty_*.json
s=$SECONDS; timeout 120 $B/fp8gemm bench --model all --m 3,12 --tactics all --csv $R/untuned_3_12_old.csv > $R/untuned_3_12_old.log 2>&1
echo "untuned M=3,12 (current table) rc=$? $((SECONDS-s))s"
python3 scripts/auto_regret.py --by-m --worst 8 $R/untuned_3_12_old.csv | cut -c1-200
gzip $R/tune_empty_*.json
cd $R && tar czf logs.tgz *.log && rm -f *.log
# ==== .gpu-s30/call2.sh
#!/usr/bin/env bash
# Session 30 call 2 (the M <= 32 table regenerated from call 1's tunes): the tuner's and the API's
# GPU tests; the whole-suite tune with the auto-between-edges judge; untuned auto (the new table)
# against every tactic at M <= 32, the suite's values and 3, 12.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_brief=1 --gtest_filter='TuneGpu.*:Api.*' > $R/gpu_tests.log 2>&1
echo "TuneGpu/Api GPU tests rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gpu_tests.log | tr '\n' ' ')"
OUT=$R/A bash scripts/gpu_acceptance.sh $B tune-between > $R/A_summary.txt 2>&1
tar -xzf $R/A/logs.tar.gz -C $R/A logs/tune.log 2>/dev/null; grep -E "^tune:" $R/A/logs/tune.log | cut -c1-300; rm -rf $R/A/logs $R/A/cache.json*
tail -4 $R/A_summary.txt | cut -c1-150
python3 scripts/auto_regret.py --by-m --worst 10 $R/A/auto_between.csv 2>&1 | tail -22 | cut -c1-230
s=$SECONDS; timeout 150 $B/fp8gemm bench --model all --m 1,2,3,4,8,12,16,24,32 --tactics all --csv $R/untuned_small.csv > $R/untuned_small.log 2>&1
echo "untuned M<=32 (new table) rc=$? $((SECONDS-s))s"
python3 scripts/auto_regret.py --by-m --worst 8 $R/untuned_small.csv | tail -22 | cut -c1-230
gzip $R/untuned_small.log
# ==== .gpu-s30/call3.sh
#!/usr/bin/env bash
# Session 30 call 3 (the regenerated table; the GraphTimer's shared capture helper): every GPU test,
# `check`, then untuned auto and every tactic over the suite at M <= 256 (bench_small: the issue-4
# numbers at M <= 16 come from the same run).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv,noheader
OUT=$R/acc GTEST_FILTER='*' bash scripts/gpu_acceptance.sh $B tests > $R/tests_summary.txt 2>&1
tail -4 $R/tests_summary.txt | cut -c1-160
s=$SECONDS; timeout 170 $B/fp8gemm bench --model all --m 1,2,4,8,16,24,32,48,64,96,128,192,256 --tactics all \
  --csv $R/suite_small.csv --json $R/suite_small.json > $R/bench_small.log 2>&1
echo "bench_small rc=$? $((SECONDS-s))s"
python3 scripts/auto_regret.py --by-m --worst 8 $R/suite_small.csv | tail -26 | cut -c1-200
python3 src/backends/small_m/bench/device/summarize.py $R/suite_small.json > $R/small_m_summary.txt 2>&1
tail -30 $R/small_m_summary.txt | cut -c1-160
gzip $R/suite_small.json $R/bench_small.log
# ==== .gpu-s30/call4.sh
#!/usr/bin/env bash
# Session 30 call 4 (the regenerated table): the whole issue-5 acceptance, `scripts/gpu_acceptance.sh
# .gpu/bin tune`: the whole-suite tune, then auto (that cache) against every tactic at the suite's M
# values and between bucket edges.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
OUT=$R/acc bash scripts/gpu_acceptance.sh $B tune > $R/tune_summary.txt 2>&1
tail -5 $R/tune_summary.txt | cut -c1-160
rm -f $R/acc/cache.json*
for f in auto_suite auto_between; do
  echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 8 $R/acc/$f.csv 2>&1 | tail -30 | cut -c1-200
done
