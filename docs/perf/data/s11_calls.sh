# Session 11's device calls (docs/perf/h200.md), as they ran from a .gpu/ bundle: .gpu/bin held the
# binaries named there, .gpu/ the scripts of scripts/ (gpu_acceptance.sh, gpu_tune_ab.sh, auto_regret.py, summarize.py = src/backends/small_m/bench/device/summarize.py).

######## .gpu/s11_call1.sh
#!/usr/bin/env bash
# Session 11 call 1 (issue 5), binaries of 6b38d49 (full CUTLASS): the tuner with and without
# --low-end-ties in one call (whole-suite tune, then auto against every tactic between bucket edges),
# then the whole-suite tune with an EMPTY default table (input of the regenerated table).
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
OUT=$OUT timeout 400 bash .gpu/gpu_tune_ab.sh .gpu/bin "" "--low-end-ties"
s=$SECONDS; timeout 170 .gpu/bin/fp8gemm_empty tune --model all --m buckets --run-budget-s 160 --cache /tmp/cache_empty.json \
  --json $OUT/tune_empty.json > $OUT/tune_empty.log 2>&1
echo "tune(empty table) rc=$? $((SECONDS-s))s $(grep -oE '[0-9]+/[0-9]+ .*' $OUT/tune_empty.log | tail -1 | cut -c1-120)"
gzip $OUT/tune_empty.json $OUT/tune_empty.log

######## .gpu/s11_call2.sh
#!/usr/bin/env bash
# Session 11 call 2, binaries of bb9d2ae (full CUTLASS; the regenerated default table): every GPU
# test, `check`, untuned auto (the table, no cache) against every tactic at the suite's M <= 256 and
# between bucket edges, then the small_m bench at M <= 16 (issue 4's numbers).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 220 $B/fp8gemm_gpu_tests --gtest_brief=1 > $OUT/gtest_all.txt 2>&1
echo "gtest rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests? from .* ran' $OUT/gtest_all.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $OUT/gtest_all.txt | head -10
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $OUT/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $OUT/check.txt)"
s=$SECONDS; timeout 140 $B/fp8gemm bench --model all --m 1,2,4,8,16,24,32,48,64,96,128,192,256 --tactics all --csv $OUT/untuned_small.csv > /tmp/small.log 2>&1; echo "untuned small rc=$? $((SECONDS-s))s"
s=$SECONDS; timeout 70 $B/fp8gemm bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all --csv $OUT/untuned_between.csv > /tmp/between.log 2>&1; echo "untuned between rc=$? $((SECONDS-s))s"
s=$SECONDS; timeout 70 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
  --replays 7 --json $OUT/small_m.json > /tmp/small_m.log 2>&1; echo "small_m bench rc=$? $((SECONDS-s))s"
python3 .gpu/summarize.py --family early= $OUT/small_m.json > $OUT/small_m_sum.txt 2>&1
grep -E "geomean|MB M<=16|M=" $OUT/small_m_sum.txt | head -20
for f in untuned_small untuned_between; do echo "== $f"; python3 .gpu/auto_regret.py --by-m --worst 4 $OUT/$f.csv 2>&1 | head -40; done
gzip $OUT/small_m.json

######## .gpu/s11_call3.sh
#!/usr/bin/env bash
# Session 11 call 3 (issue 5), binaries of bb9d2ae (the regenerated table): whole-suite tune, then
# tuned auto against every tactic at the suite's M values and between bucket edges.
cd "$(dirname "$0")/.."
OUT=$OUT timeout 560 bash .gpu/gpu_acceptance.sh .gpu/bin tune
for f in auto_suite auto_between; do echo "== $f"; python3 .gpu/auto_regret.py --by-m --worst 6 $OUT/$f.csv 2>&1 | head -45; done
rm -f $OUT/cache.json.lock; gzip $OUT/cache.json

######## .gpu/s11_call4.sh
#!/usr/bin/env bash
# Session 11 call 4 (issue 5), binaries of bb9d2ae: the tuner with 2 (the default) and 3 samples below
# each bucket edge, in one call (whole-suite tune, then auto against every tactic between edges).
cd "$(dirname "$0")/.."
OUT=$OUT timeout 560 bash .gpu/gpu_tune_ab.sh .gpu/bin "" "--bucket-samples 3"

######## .gpu/s11_call5.sh (fp8gemm = bb9d2ae, fp8gemm_new = bd0b718, reverted in 5e11c4a)
#!/usr/bin/env bash
# Session 11 call 5 (issue 5): the low-end check costed at its own round (fp8gemm_new, the
# commit after fb9a134) against bb9d2ae (fp8gemm), in one call, on two models (nano9b, llama70b):
# tune at every bucket, then auto against every tactic between bucket edges.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for v in fp8gemm fp8gemm_new; do
  s=$SECONDS; timeout 100 .gpu/bin/$v tune --model nano9b llama70b --m buckets --cache /tmp/$v.json --json $OUT/${v}_tune.json > $OUT/${v}_tune.log 2>&1
  echo "== $v tune rc=$? $((SECONDS-s))s"; grep -E "where the time went|keys," $OUT/${v}_tune.log
  FP8GEMM_CACHE=/tmp/$v.json timeout 60 .gpu/bin/$v bench --model nano9b llama70b --m 3,12,40,100,200,300,700,3000 --tactics all --csv $OUT/${v}_between.csv > /dev/null 2>&1
  echo "bench rc=$?"; python3 .gpu/auto_regret.py --by-m --worst 4 $OUT/${v}_between.csv 2>&1 | head -30
done
gzip $OUT/*_tune.json
