# ===== .gpu/s21_call1.sh
#!/usr/bin/env bash
# Next session, call 1: the whole acceptance with light points recovering 1000 ms after a heavy
# load (FP8GEMM_RECOVER_MS=1000; session 20 call 7 took the head-to-head rounds' light points from
# 1.04-1.16x their first pass to 0.996-1.013). Rebuild .gpu/bin at HEAD first (4c1905d came after
# call 5). Baseline: session 20 call 5 (300 ms):
# tune 118 s, suite timed again 1.003 / 1.092 / 447, between 1.005 / 1.107 / 173.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
export FP8GEMM_RECOVER_MS=1000
OUT=$OUT/acc bash scripts/gpu_acceptance.sh $B tune > $OUT/acc_summary.txt 2>&1
tail -6 $OUT/acc_summary.txt
for f in auto_between auto_suite; do
  echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 6 $OUT/acc/$f.csv | cut -c1-200
done
cd $OUT && tar czf acc.tgz acc && rm -rf acc
# ===== .gpu/s21_call2.sh
#!/usr/bin/env bash
# Session 21 call 2: every GPU test and `check` on 39e7e92 (the session-20 review mends were not
# run on a GPU); then `explain` at the keys the acceptance missed in two runs (s20 call 5, s21
# call 1): which candidates the tuner's key budget times, skips or prunes there.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
[ -f $B/fp8gemm_gpu_tests ] || xz -dk $B/fp8gemm_gpu_tests.xz
R=$OUT/r; mkdir -p $R
s=$SECONDS; timeout 250 $B/fp8gemm_gpu_tests --gtest_brief=1 > $R/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gpu_tests.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gpu_tests.txt | head -20
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
cd $OUT && tar czf r.tgz r; cd - > /dev/null
for k in 8192,8192:16384 4096,14336:16384 4480,15680:4096 4096,8192:4096 8192,1024:384 15680,4480:384 \
         4096,21504:200 4096,14336:200 8192,28672:8192; do
  IFS=: read s m <<< "$k"
  t=$SECONDS; timeout 30 $B/fp8gemm explain --shape $s --m $m > $R/explain_${s/,/x}_$m.txt 2>&1
  echo "explain $s M=$m rc=$? $((SECONDS-t))s: $(grep -i 'choice\|auto' $R/explain_${s/,/x}_$m.txt | head -2 | tr '\n' ' ' | cut -c1-200)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
# ===== .gpu/s21_call3.sh
#!/usr/bin/env bash
# Session 21 call 3: the whole acceptance on 3a75d61 (a neighbour's best that cuBLASLt no longer
# lists at the next bucket is still a candidate), defaults (300 ms recovery). Baselines: s20 call 5
# (tune 118 s, suite timed again 1.003 / 1.092 / 447, between 1.005 / 1.107 / 173) and s21 call 1.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
unset FP8GEMM_RECOVER_MS
OUT=$OUT/acc bash scripts/gpu_acceptance.sh $B tune > $OUT/acc_summary.txt 2>&1
tail -6 $OUT/acc_summary.txt
for f in auto_between auto_suite; do
  echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 6 $OUT/acc/$f.csv | cut -c1-200
done
cd $OUT && tar czf acc.tgz acc && rm -rf acc
# ===== .gpu/s21_call4.sh
#!/usr/bin/env bash
# Session 21 call 4: every GPU test and `check` on 3a75d61 (the tuner change of this session).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
[ -f $B/fp8gemm_gpu_tests ] || xz -dk $B/fp8gemm_gpu_tests.xz; chmod +x $B/fp8gemm_gpu_tests
R=$OUT/r; mkdir -p $R
s=$SECONDS; timeout 250 $B/fp8gemm_gpu_tests --gtest_brief=1 > $R/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gpu_tests.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gpu_tests.txt | head -20
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
cd $OUT && tar czf r.tgz r && rm -rf r
# ===== .gpu/s21_call5.sh
#!/usr/bin/env bash
# Session 21 call 5: the final binaries (d069f09): the tuner's GPU tests (TuneGpu, Api,
# GraphTimer), `check`, and a tune of 8192x8192 at M=4096..16384 whose JSON shows the
# candidates cuBLASLt did not list at a bucket, with explain's note.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS
[ -f $B/fp8gemm_gpu_tests ] || xz -dk $B/fp8gemm_gpu_tests.xz; chmod +x $B/fp8gemm_gpu_tests
R=$OUT/r; mkdir -p $R
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_brief=1 --gtest_filter='TuneGpu.*:Api.*:GraphTimer.*' > $R/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gpu_tests.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gpu_tests.txt | head -20
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
s=$SECONDS; timeout 60 $B/fp8gemm tune --shape 8192,8192 --m 4096,6144,8192,12288,16384 --cache $R/c.json --json $R/tune.json > $R/tune.txt 2>&1
echo "tune rc=$? $((SECONDS-s))s"; tail -8 $R/tune.txt
python3 - $R/tune.json <<'PY'
import json, sys
for x in json.load(open(sys.argv[1]))["decisions"]:
    for c in x["candidates"]:
        if "neighbouring" in c["note"]:
            print(x["m_bucket"], c["status"], round(c["us"], 1), c["tactic"][:60], "|", c["note"])
PY
cd $OUT && tar czf r.tgz r && rm -rf r
# ===== call 6 (one line, on the H200 after call 5):
# B=.gpu/bin; timeout 100 $B/fp8gemm_gpu_tests --gtest_brief=0 --gtest_repeat=4 --gtest_filter='TuneGpu.TunedAuto*'
