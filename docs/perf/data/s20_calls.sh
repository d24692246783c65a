# Session 20 device calls (H200). Each ran as: run(command='bash .gpu/s20_callN.sh', carry=['.gpu'])
# with .gpu/bin holding the stripped fp8gemm and fp8gemm_gpu_tests of the commit named, and .gpu/empty
# (calls 3-4) an fp8gemm whose default table is empty (rules between the GENERATED markers removed).
# Binaries: call 1 76a48a1 (= 95605d4, session 19's end); call 2 5e2d0e7; call 3 15326c2 (empty: the same);
# call 4 empty at 25e195c; calls 5-7 1a346cc (the table regenerated from call 4's tunes).
# ==== .gpu/s20_call1.sh
#!/usr/bin/env bash
# Session 20, call 1: every GPU test and `check` on the final session-19 binaries, then the heavy-key
# experiment: does the tuner (explain) rank M=4096 tactics as bench's round-robin does?
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 200 > $OUT/clocks.csv 2>&1 &
SMI=$!
s=$SECONDS; timeout 300 $B/fp8gemm_gpu_tests --gtest_brief=1 > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $OUT/gpu_tests.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $OUT/gpu_tests.txt | head -20
grep -E "ratio .* \(round" $OUT/gpu_tests.txt | head -8
s=$SECONDS; timeout 90 $B/fp8gemm check --quiet > $OUT/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $OUT/check.txt)"
mkdir -p $OUT/heavy
for sh in 10240,8192 4096,4096 4480,15680; do
  for m in 4096 2048; do
    t=${sh/,/x}_$m
    timeout 30 $B/fp8gemm explain --shape $sh --m $m > $OUT/heavy/explain1_$t.txt 2>&1
    timeout 90 $B/fp8gemm bench --shape $sh --m $m --tactics all --json $OUT/heavy/bench_$t.json --csv $OUT/heavy/bench_$t.csv > $OUT/heavy/bench_$t.txt 2>&1
    timeout 30 $B/fp8gemm explain --shape $sh --m $m > $OUT/heavy/explain2_$t.txt 2>&1
    echo "== $t"; grep -iE "choice|chose|default|heuristic" $OUT/heavy/explain1_$t.txt | head -4; tail -4 $OUT/heavy/bench_$t.txt
  done
done
kill $SMI
cd $OUT && tar czf heavy.tgz heavy clocks.csv && rm -rf heavy clocks.csv
# ==== .gpu/s20_call2.sh
#!/usr/bin/env bash
# Session 20 call 2: the whole acceptance (tune of the suite, auto at the suite's M and between
# edges) with a pruned floor's short-round time scaled to the full round's (5e2d0e7).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
OUT=$OUT/acc bash scripts/gpu_acceptance.sh $B tune > $OUT/acc_summary.txt 2>&1
tail -6 $OUT/acc_summary.txt
for f in auto_between auto_suite; do
  echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 10 $OUT/acc/$f.csv | cut -c1-220
done
cd $OUT && tar czf acc.tgz acc && rm -rf acc
# ==== .gpu/s20_call3.sh
#!/usr/bin/env bash
# Session 20 call 3 (15326c2): the tuner's GPU tests with a pruned floor timed again at the edge;
# explain of 10240x8192 M=4096; two tunes at M <= 32 by a binary with an empty default table (to
# regenerate the table's M <= 32 rules with >= 300 us tune replays: it still names persist=1).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
R=$OUT/r; mkdir -p $R
xz -dk .gpu/empty/fp8gemm.xz 2>/dev/null; chmod +x .gpu/empty/fp8gemm
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='TuneGpu.*:Api*:GraphTimer.*' > $R/gtest_tune.txt 2>&1
echo "tune/api/timer tests rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_tune.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_tune.txt | head -12
grep -E "ratio .* \(round" $R/gtest_tune.txt | cut -c1-130
for i in 1 2; do
  s=$SECONDS; timeout 100 .gpu/empty/fp8gemm tune --model all --m 1,2,4,8,16,24,32 --run-budget-s 90 --cache $R/empty_$i.json \
    --json $R/tune_empty_$i.json > $R/tune_empty_$i.log 2>&1; echo "tune empty $i rc=$? $((SECONDS-s))s $(tail -1 $R/tune_empty_$i.log)"
done
timeout 30 $B/fp8gemm explain --shape 10240,8192 --m 4096 > $R/explain_10240x8192_4096.txt 2>&1
grep -E "^choice|^segments|^ +M<=|top " $R/explain_10240x8192_4096.txt | cut -c1-160
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s20_call4.sh
#!/usr/bin/env bash
# Session 20 call 4 (small_m's k <= 1024 default: the cp.async one-shot twin, first in its list):
# two tunes at M <= 32 by a binary with an empty default table, for the table's M <= 32 rules.
set -u
cd "$(dirname "$0")/.."
unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
R=$OUT/r; mkdir -p $R
xz -dk .gpu/empty/fp8gemm.xz 2>/dev/null; chmod +x .gpu/empty/fp8gemm
for i in 1 2; do
  s=$SECONDS; timeout 100 .gpu/empty/fp8gemm tune --model all --m 1,2,4,8,16,24,32 --run-budget-s 90 --cache $R/empty_$i.json \
    --json $R/tune_empty_$i.json > $R/tune_empty_$i.log 2>&1; echo "tune empty $i rc=$? $((SECONDS-s))s $(tail -1 $R/tune_empty_$i.log)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s20_call5.sh
#!/usr/bin/env bash
# Session 20 call 5: the whole acceptance with the final code (pruned floor timed again at the
# edge, small_m's k <= 1024 default, the table's M <= 32 rules from session 20's long-replay
# tunes), then untuned auto (the new table) against every tactic at the suite's M <= 32.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
OUT=$OUT/acc bash scripts/gpu_acceptance.sh $B tune > $OUT/acc_summary.txt 2>&1
tail -6 $OUT/acc_summary.txt
s=$SECONDS; timeout 100 $B/fp8gemm bench --model all --m 1,2,4,8,16,24,32 --tactics all --csv $OUT/acc/untuned_small.csv \
  > $OUT/acc/untuned_small.log 2>&1; echo "untuned M<=32 rc=$? $((SECONDS-s))s"
for f in auto_between auto_suite untuned_small; do
  echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 6 $OUT/acc/$f.csv | cut -c1-200
done
cd $OUT && tar czf acc.tgz acc && rm -rf acc
# ==== .gpu/s20_call6.sh
#!/usr/bin/env bash
# Session 20 call 6: every GPU test and `check` on the final binaries; then why light small_m
# points run slower timed again than in their first pass: defaults against every call settled
# (FP8GEMM_SETTLE_MIN_CALL_US=0), two shapes at M=3,12,3000.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
R=$OUT/r; mkdir -p $R
s=$SECONDS; timeout 250 $B/fp8gemm_gpu_tests --gtest_brief=1 > $R/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gpu_tests.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gpu_tests.txt | head -20
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
cd $OUT && tar czf r.tgz r
cd - > /dev/null
for v in d1:100 s1:0; do
  IFS=: read name mc <<< "$v"
  s=$SECONDS
  FP8GEMM_SETTLE_MIN_CALL_US=$mc timeout 30 $B/fp8gemm bench --shape 4096,21504 --shape 4480,15680 \
    --m 3,12,3000 --tactics all --csv $R/$name.csv > $R/$name.log 2>&1
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
# ==== .gpu/s20_call7.sh
#!/usr/bin/env bash
# Session 20 call 7: the light points' timed-again slowdown with longer recovery (FP8GEMM_RECOVER_MS).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
R=$OUT/r; mkdir -p $R
for v in d2:100:300 r1:100:1000 b1:0:1000 d3:100:300; do
  IFS=: read name mc rec <<< "$v"
  FP8GEMM_SETTLE_MIN_CALL_US=$mc FP8GEMM_RECOVER_MS=$rec timeout 20 $B/fp8gemm bench --shape 4096,21504 --shape 4480,15680 \
    --m 3,12,3000 --tactics all --csv $R/$name.csv > $R/$name.log 2>&1
  echo "$name (settle_min_call_us=$mc recover_ms=$rec) rc=$?"
  python3 - $R/$name.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["M"] == "3000" or not r["confirm_auto_us"]: continue
    a, ca = float(r["auto_us"]), float(r["confirm_auto_us"])
    print(f'  {r["N"]}x{r["K"]} M={r["M"]:>2}: auto {a:6.2f} -> {ca:6.2f} ({ca / a:.3f}); regret again {r["confirm_regret"]}')
PY
done
cd $OUT && tar czf r.tgz r && rm -rf r
