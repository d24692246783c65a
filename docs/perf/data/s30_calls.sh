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
# ==== .gpu-s30/call5.sh (refused: no machine could be started; 90 s of device time)
#!/usr/bin/env bash
# Session 30 call 5 (d3f217f, explain --power-states): llama8b.o (4096x4096) at M=4, where the
# judge times pdl=2 4-6% faster than the tune's pdl=1 and the tune calls them tied: explain without
# and with the power-state pass; then small_m's tactics at M=2,3,4 at boost and with a heavy load
# between cycles (FP8GEMM_LOAD_BETWEEN_US=200, the capped state).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
[ -f $B/fp8gemm ] || xz -dk $B/fp8gemm.xz; chmod +x $B/fp8gemm
timeout 30 $B/fp8gemm explain --shape 4096,4096 --m 4 > $R/explain_m4.txt 2>&1; echo "explain rc=$?"
timeout 40 $B/fp8gemm explain --shape 4096,4096 --m 4 --power-states > $R/explain_m4_power.txt 2>&1; echo "explain --power-states rc=$?"
for f in explain_m4 explain_m4_power; do echo "== $f"; grep -E "^choice|^reason|under a heavy|pdl=|^auto" $R/$f.txt | cut -c1-200 | head -16; done
s=$SECONDS; timeout 60 $B/fp8gemm bench --shape 4096,4096 --m 2,3,4 --backend small_m --tactics all --no-confirm-auto --json $R/boost.json > $R/boost.log 2>&1; echo "bench boost rc=$? $((SECONDS-s))s"
s=$SECONDS; FP8GEMM_LOAD_BETWEEN_US=200 timeout 90 $B/fp8gemm bench --shape 4096,4096 --m 2,3,4 --backend small_m --tactics all --no-confirm-auto --json $R/capped.json > $R/capped.log 2>&1; echo "bench capped rc=$? $((SECONDS-s))s"
python3 - "$R" <<'PY'
import json, sys
for f in ("boost", "capped"):
    for p in json.load(open(sys.argv[1] + "/" + f + ".json"))["points"]:
        t = {x["tactic"]: x for x in p["timings"] if x["ok"] and len(x["samples_us"]) > 1}
        a = t.get("small_m:wgmma,rows=32,splitk=1,stages=11,l2pf=0,pdl=1"); b = t.get("small_m:wgmma,rows=32,splitk=1,stages=11,l2pf=0,pdl=2")
        best = min(t.values(), key=lambda x: x["median_us"])
        print(f, "M=%d" % p["M"], "pdl=1 %.3f" % a["median_us"] if a else "-", "pdl=2 %.3f" % b["median_us"] if b else "-", "best %.3f %s" % (best["median_us"], best["tactic"][8:70]))
PY
gzip $R/*.json
# ==== .gpu-s30/call6.sh
#!/usr/bin/env bash
# Session 30 call 6 (2afd2df: the low end's kernel holds its tiles in a split's lower part too;
# explain --power-states): TuneGpu tests; 6144x4096 (llama8b.qkv) tuned at every bucket, explained
# at M=200 and benched at M=193-213 on that cache; llama8b.o M=4 explained with the power-state pass.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
s=$SECONDS; timeout 60 $B/fp8gemm_gpu_tests --gtest_brief=1 --gtest_filter='TuneGpu.*' > $R/gpu_tests.log 2>&1
echo "TuneGpu rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gpu_tests.log | tr '\n' ' ')"
s=$SECONDS; timeout 40 $B/fp8gemm tune --shape 6144,4096 --m buckets --cache $R/c.json --json $R/tune_6144x4096.json > $R/tune.log 2>&1
echo "tune rc=$? $((SECONDS-s))s"; grep -E "^llama|^6144|  256 " $R/tune.log | head -3
timeout 20 $B/fp8gemm explain --shape 6144,4096 --m 200 > $R/explain_6144x4096_200.txt 2>&1; echo "explain rc=$?"
grep -E "^segments|^          M|keeps the M|takes the lower" $R/explain_6144x4096_200.txt | cut -c1-220
s=$SECONDS; FP8GEMM_CACHE=$R/c.json timeout 60 $B/fp8gemm bench --shape 6144,4096 --m 193,196,200,204,208,213 --tactics all --csv $R/bench_6144x4096.csv > $R/bench.log 2>&1
echo "bench rc=$? $((SECONDS-s))s"
python3 scripts/auto_regret.py --worst 6 $R/bench_6144x4096.csv | tail -8 | cut -c1-200
timeout 40 $B/fp8gemm explain --shape 4096,4096 --m 4 --power-states > $R/explain_4096_m4_power.txt 2>&1; echo "explain --power-states rc=$?"
grep -E "^choice|^segments|under a heavy|^reason" $R/explain_4096_m4_power.txt | cut -c1-250
rm -f $R/c.json*
