# ==== .gpu/s19_call1.sh
#!/usr/bin/env bash
# Session 19 call 1: tuner A/B, the tuner's replays of short calls 20 calls (default) against
# >= 300 us (`tune --min-replay-us 300`); each a whole-suite tune, then auto against every tactic
# between bucket edges (default bench: 20-call first pass, then the head-to-head rounds).
set -u
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
OUT="$OUT" bash scripts/gpu_tune_ab.sh .gpu/bin "" "--min-replay-us 300" > "$OUT/ab_summary.txt" 2>&1
cat "$OUT/ab_summary.txt"
# ==== .gpu/s19_call2.sh
#!/usr/bin/env bash
# Session 19 call 2: (1) light after heavy: bench two shapes at M=3,12,3000 (each shape's M=3
# follows the other's M=3000 in both passes) with FP8GEMM_RECOVER_MS=0, 100, 300, and once
# without M=3000; does auto's time timed again match its first pass? (2) issue 4: the small_m
# suite bench at M <= 16 with 20-call replays and with --min-replay-us 300, side by side (A B A).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for v in light:0:3,12 r0:0:3,12,3000 r100:100:3,12,3000 r300:300:3,12,3000 r0b:0:3,12,3000; do
  IFS=: read name ms ms_list <<< "$v"
  s=$SECONDS
  FP8GEMM_RECOVER_MS=$ms timeout 90 $B/fp8gemm bench --shape 4096,14336 --shape 4608,4096 --m $ms_list --tactics all \
    --csv $R/heavy_$name.csv > $R/heavy_$name.log 2>&1
  echo "heavy_$name rc=$? $((SECONDS-s))s"
  python3 - $R/heavy_$name.csv <<'PY'
import csv, sys
cols = ["cublaslt_default_us", "cublaslt_best_us", "cutlass_best_us", "small_m_best_us", "cudnn_best_us"]
for r in csv.DictReader(open(sys.argv[1])):
    if r["M"] == "3000" or not r["confirm_auto_us"]: continue
    a, ca, cb = float(r["auto_us"]), float(r["confirm_auto_us"]), float(r["confirm_best_us"])
    best = min(float(r[c]) for c in cols if r[c] and r[c[:-3] + "_tactic"] != r["auto_tactic"])
    print(f'  {r["N"]}x{r["K"]} M={r["M"]:>2}: auto {a:6.2f} -> {ca:6.2f} ({ca / a:.3f}); best {best:6.2f} -> {cb:6.2f} '
          f'({cb / best:.3f}); regret again {r["confirm_regret"]}')
PY
done
for v in a20:0 b300:300 c20:0; do
  IFS=: read name us <<< "$v"
  s=$SECONDS
  timeout 150 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
    --replays 7 --min-replay-us $us --no-confirm-auto --json $R/sm_$name.json > $R/sm_$name.log 2>&1
  echo "small_m $name rc=$? $((SECONDS-s))s"
  python3 .gpu/summarize.py $R/sm_$name.json > $R/sum_$name.txt 2>&1; grep -E "^geomean x \(best small_m\)|MB M<=16:" $R/sum_$name.txt
done
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s19_call3.sh
#!/usr/bin/env bash
# Session 19 call 3: the whole acceptance with light-after-heavy recovery (300 ms) and the tune's
# lightest-first order: tune of the suite, auto against every tactic at the suite's M and between
# bucket edges (first pass, then the head-to-head rounds).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
OUT=$OUT/acc bash scripts/gpu_acceptance.sh $B tune > $OUT/acc_summary.txt 2>&1
tail -12 $OUT/acc_summary.txt
for f in auto_suite auto_between; do
  echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 10 $OUT/acc/$f.csv | cut -c1-230
done
cd $OUT && tar czf acc_logs.tgz acc/logs && rm -rf acc/logs
# ==== .gpu/s19_call4.sh
#!/usr/bin/env bash
# Session 19 call 4: recovery only for calls < 25 us after a heavy load (fastest candidate >=
# 100 us), tune lightest first. GraphTimer GPU tests; the whole acceptance (tune of the suite,
# auto between edges, then at the suite's M).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
s=$SECONDS; timeout 60 $B/fp8gemm_gpu_tests --gtest_filter='GraphTimer.*' > $OUT/gtest_timer.txt 2>&1
echo "GraphTimer tests rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_timer.txt | tr '\n' ' ')"
grep -E "Failure" -A4 $OUT/gtest_timer.txt | head -12
OUT=$OUT/acc bash scripts/gpu_acceptance.sh $B tune-between > $OUT/acc_summary.txt 2>&1
tail -6 $OUT/acc_summary.txt
s=$SECONDS; FP8GEMM_CACHE=$OUT/acc/cache.json timeout 280 $B/fp8gemm bench --model all --m suite --tactics all \
  --csv $OUT/acc/auto_suite.csv > $OUT/acc/auto_suite.log 2>&1; echo "auto_suite rc=$? $((SECONDS-s))s"
for f in auto_between auto_suite; do
  echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 8 $OUT/acc/$f.csv | cut -c1-200
done
cd $OUT && tar czf acc_logs.tgz acc/logs acc/auto_suite.log && rm -rf acc/logs
# ==== .gpu/s19_call5.sh
#!/usr/bin/env bash
# Session 19 call 5: why do light points' head-to-head rounds (phase 2) run slower than their
# first pass? Two shapes at M=3,12,40,3000 with the defaults and with every call settled
# (FP8GEMM_SETTLE_MIN_CALL_US=0: 20 ms of replays before timing, 60 after an idle gap), twice.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
R=$OUT/r; mkdir -p $R
for v in d1:100 s1:0 d2:100 s2:0; do
  IFS=: read name mc <<< "$v"
  s=$SECONDS
  FP8GEMM_SETTLE_MIN_CALL_US=$mc timeout 25 $B/fp8gemm bench --shape 4096,21504 --shape 4096,14336 --shape 4608,4096 \
    --m 3,12,40,3000 --tactics all --csv $R/$name.csv > $R/$name.log 2>&1
  echo "$name (settle_min_call_us=$mc) rc=$? $((SECONDS-s))s"
  python3 - $R/$name.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["M"] == "3000" or not r["confirm_auto_us"]: continue
    a, ca = float(r["auto_us"]), float(r["confirm_auto_us"])
    print(f'  {r["N"]}x{r["K"]} M={r["M"]:>2}: auto {a:6.2f} -> {ca:6.2f} ({ca / a:.3f}); regret again {r["confirm_regret"]}')
PY
done
cd $OUT && tar czf r.tgz r && rm -rf r
# call 5 was refused: too little device time left to start a machine
