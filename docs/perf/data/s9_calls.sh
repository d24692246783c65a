# Session 9's device calls (docs/perf/h200.md), as they ran from a .gpu/ bundle: .gpu/bin held the
# binaries named in the table there, .gpu/ the scripts of scripts/ (gpu_acceptance.sh, gpu_tune_ab.sh, auto_regret.py, summarize.py = src/backends/small_m/bench/device/summarize.py).

######## .gpu/s9_call1.sh
#!/usr/bin/env bash
# Session 9 call 1 (issue 4): stream-K tactics. small_m GPU tests, then two small_m benches at M <= 16.
cd "$(dirname "$0")/.."
B=.gpu/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 240 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $OUT/gtest_smallm.txt 2>&1
echo "gtest rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_smallm.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $OUT/gtest_smallm.txt | head -10
for r in a b; do
  timeout 150 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
    --replays 7 --json $OUT/sk_$r.json > $OUT/sk_$r.txt 2>&1
  echo "bench $r rc=$?"
  python3 .gpu/summarize.py --family streamk= $OUT/sk_$r.json > $OUT/sum_$r.txt 2>&1
  grep -E "geomean|MB M<=16|M=" $OUT/sum_$r.txt
done
gzip $OUT/sk_a.json $OUT/sk_b.json

######## .gpu/s9_call2.sh
#!/usr/bin/env bash
# Session 9 call 2 (issue 4): stream-K tactics. small_m GPU tests, then two small_m benches at M <= 16.
cd "$(dirname "$0")/.."
B=.gpu/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 240 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*StreamK*:SmallM.SplitKIsDeterministic:SmallM.WgmmaExactIntegers*' > $OUT/gtest_smallm.txt 2>&1
echo "gtest rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_smallm.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $OUT/gtest_smallm.txt | head -10
for r in a b; do
  timeout 150 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
    --replays 7 --json $OUT/sk_$r.json > $OUT/sk_$r.txt 2>&1
  echo "bench $r rc=$?"
  python3 .gpu/summarize.py --family streamk= $OUT/sk_$r.json > $OUT/sum_$r.txt 2>&1
  grep -E "geomean|MB M<=16|M=" $OUT/sum_$r.txt
done
gzip $OUT/sk_a.json $OUT/sk_b.json

######## .gpu/s9_call3.sh
#!/usr/bin/env bash
# Session 9 call 3: every GPU test and `check` (full CUTLASS build of the session's code), then the
# whole-suite tune with an EMPTY default table (input of the regenerated table).
cd "$(dirname "$0")/.."
B=.gpu/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 280 $B/fp8gemm_gpu_tests --gtest_brief=1 > $OUT/gtest_all.txt 2>&1
echo "gtest rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests? from .* ran' $OUT/gtest_all.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $OUT/gtest_all.txt | head -10
timeout 90 $B/fp8gemm check --quiet > $OUT/check.txt 2>&1; echo "check rc=$? $(tail -1 $OUT/check.txt)"
s=$SECONDS; timeout 200 $B/fp8gemm_empty tune --model all --m buckets --run-budget-s 170 --cache $OUT/cache_empty.json \
  --json $OUT/tune_empty.json > $OUT/tune_empty.log 2>&1
echo "tune(empty table) rc=$? $((SECONDS-s))s $(grep -E '575/575' $OUT/tune_empty.log | tail -1)"
gzip $OUT/tune_empty.json $OUT/tune_empty.log; rm -f $OUT/cache_empty.json

######## .gpu/s9_call4.sh
#!/usr/bin/env bash
# Session 9 call 4 (issue 5), binary with the regenerated default table: whole-suite tune + auto
# between bucket edges with samples following the edge's choice on (default), off, and on again.
cd "$(dirname "$0")/.."
OUT=$OUT bash .gpu/gpu_tune_ab.sh .gpu/bin "" "--no-samples-follow-edge" "--samples-follow-edge"

######## .gpu/s9_call5.sh
#!/usr/bin/env bash
# Session 9 call 5 (issue 5), final binary: untuned auto (the regenerated default table, no cache)
# against every tactic at the suite's M <= 256 and between bucket edges; then a whole-suite tune and
# tuned auto against every tactic at the suite's M <= 256.
cd "$(dirname "$0")/.."
F=.gpu/bin/fp8gemm; unset FP8GEMM_CACHE FP8GEMM_TUNE
SMALL=1,2,4,8,16,24,32,48,64,96,128,192,256
s=$SECONDS; timeout 150 $F bench --model all --m $SMALL --tactics all --csv "$OUT/untuned_small.csv" > "$OUT/small.log" 2>&1; echo "untuned small rc=$? $((SECONDS-s))s"
s=$SECONDS; timeout 80 $F bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all --csv "$OUT/untuned_between.csv" > "$OUT/between.log" 2>&1; echo "untuned between rc=$? $((SECONDS-s))s"
s=$SECONDS; timeout 130 $F tune --model all --m buckets --run-budget-s 125 --cache "$OUT/cache.json" > "$OUT/tune.log" 2>&1; echo "tune rc=$? $((SECONDS-s))s $(grep -o '575/575.*' $OUT/tune.log | tail -1)"
s=$SECONDS; FP8GEMM_CACHE="$OUT/cache.json" timeout 130 $F bench --model all --m $SMALL --tactics all --csv "$OUT/tuned_small.csv" > "$OUT/tuned_small.log" 2>&1; echo "tuned small rc=$? $((SECONDS-s))s"
for f in untuned_small untuned_between tuned_small; do echo "== $f"; python3 .gpu/auto_regret.py --worst 3 "$OUT/$f.csv" 2>&1 | head -10; done
gzip "$OUT/small.log" "$OUT/between.log" "$OUT/tune.log" "$OUT/tuned_small.log"; rm -f "$OUT/cache.json" "$OUT/cache.json.lock"

######## .gpu/s9_call6.sh
#!/usr/bin/env bash
# Session 9 call 6 (issue 5), final binary: whole-suite tune, then tuned auto against every tactic at
# the suite's M >= 384.
cd "$(dirname "$0")/.."
F=.gpu/bin/fp8gemm; unset FP8GEMM_CACHE FP8GEMM_TUNE
s=$SECONDS; timeout 125 $F tune --model all --m buckets --run-budget-s 120 --cache "$OUT/cache.json" > "$OUT/tune6.log" 2>&1; echo "tune rc=$? $((SECONDS-s))s $(grep -o '575/575.*' $OUT/tune6.log | tail -1)"
s=$SECONDS; FP8GEMM_CACHE="$OUT/cache.json" timeout 215 $F bench --model all --m 384,512,1024,2048,4096,8192,16384 --tactics all --csv "$OUT/tuned_large.csv" > "$OUT/tuned_large.log" 2>&1; echo "tuned large rc=$? $((SECONDS-s))s"
python3 .gpu/auto_regret.py --worst 3 "$OUT/tuned_large.csv" 2>&1 | head -10
gzip "$OUT/tune6.log" "$OUT/tuned_large.log"; rm -f "$OUT/cache.json" "$OUT/cache.json.lock"
