# Session 14's device calls (docs/perf/h200.md "session 14"), as they ran from a .gpu/ bundle: .gpu/bin held the
# binaries built at the commits named there; .gpu/ the scripts of scripts/ (gpu_acceptance.sh, auto_regret.py) and
# src/backends/small_m/bench/device/ (summarize.py, ab_cmp.py).

######## .gpu/s14_call1.sh
#!/usr/bin/env bash
# Session 14 call 1: fitted rows (33..127 but 64). SmallM GPU tests (also the first run of 34e9223's
# K-pair refactor), check small_m, then the small_m bench at M <= 16 twice; everything in r.tgz.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 200 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*:PdlOrdering*' > $R/gtest_smallm.txt 2>&1; rc=$?
echo "gtest SmallM rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" -A6 $R/gtest_smallm.txt | head -40
s=$SECONDS; timeout 90 $B/fp8gemm check --quiet --backend small_m > $R/check.txt 2>&1; echo "check small_m rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
if [ $rc -eq 0 ]; then
for r in a b; do
  s=$SECONDS; timeout 120 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
    --replays 7 --json $R/sm_$r.json > $R/sm_$r.log 2>&1; echo "bench $r rc=$? $((SECONDS-s))s"
done
python3 .gpu/summarize.py --family 're:wgmma,rows=(?!32,|64,|128,)' $R/sm_a.json > $R/sum_a.txt 2>&1
python3 .gpu/summarize.py --family 're:wgmma,rows=(?!32,|64,|128,)' $R/sm_b.json > $R/sum_b.txt 2>&1
fi
for r in a b; do echo "== run $r"; grep -E "geomean|MB M<=16|M=[0-9]+:" $R/sum_$r.txt; done
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s14_call2.sh
#!/usr/bin/env bash
# Session 14 call 2: fitted rows with the cp.async fix (standard cp kernels as in 34e9223). SmallM
# GPU tests, then every other GPU test (TuneGpu's confirmation round is new), check, then the
# small_m bench at M <= 16 twice; everything in r.tgz.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1; rc=$?
echo "gtest SmallM rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" -A6 $R/gtest_smallm.txt | head -30
if [ $rc -eq 0 ]; then
for r in a b; do
  s=$SECONDS; timeout 100 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
    --replays 7 --json $R/sm_$r.json > $R/sm_$r.log 2>&1; echo "bench $r rc=$? $((SECONDS-s))s"
done
fi
s=$SECONDS; timeout 240 $B/fp8gemm_gpu_tests --gtest_filter='-SmallM.*' > $R/gtest_rest.txt 2>&1; rc2=$?
echo "gtest rest rc=$rc2 $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/gtest_rest.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" -A6 $R/gtest_rest.txt | head -20
grep -E "ratio .* \(round" $R/gtest_rest.txt
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
if [ $rc -eq 0 ]; then
for r in a b; do
  python3 .gpu/summarize.py --family 're:wgmma,rows=(?!32,|64,|128,)' $R/sm_$r.json > $R/sum_$r.txt 2>&1
  echo "== run $r"; grep -E "geomean|MB M<=16|M=[0-9]+:" $R/sum_$r.txt
done
fi
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s14_call3.sh
#!/usr/bin/env bash
# Session 14 call 3: (1) does the TuneGpu m=128 gap follow the GPU's thermal state? explain of
# 4096x4096 at m=128 cold, then after ~10 s of heavy GEMMs, then the TuneGpu test 5 times; clocks
# logged throughout. (2) SmallM tests and the small_m bench with the pruned fitted candidates.
# (3) the whole-suite tune and auto between bucket edges (tune time with the new candidates).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 100 > $R/clocks.csv 2>&1 &
SMI=$!
pick() { grep -E "pingpong_64x64x256_c1x1x1_swap_pdl|tile=72xM/2|choice|noise" "$1" | cut -c1-150; }
date +%T.%N > $R/marks.txt
timeout 30 $B/fp8gemm explain --shape 4096,4096 --m 128 > $R/explain_cold.txt 2>&1; echo "explain cold rc=$?"; pick $R/explain_cold.txt
echo "heavy $(date +%T.%N)" >> $R/marks.txt
s=$SECONDS; timeout 60 $B/fp8gemm bench --shape 4096,14336 --shape 28672,4096 --m 4096 --tactics all --max-finalists 6 > $R/heavy.txt 2>&1; echo "heavy rc=$? $((SECONDS-s))s"
echo "hot $(date +%T.%N)" >> $R/marks.txt
timeout 30 $B/fp8gemm explain --shape 4096,4096 --m 128 > $R/explain_hot.txt 2>&1; echo "explain hot rc=$?"; pick $R/explain_hot.txt
echo "tunegpu $(date +%T.%N)" >> $R/marks.txt
s=$SECONDS; timeout 120 $B/fp8gemm_gpu_tests --gtest_filter='TuneGpu.TunedAuto*' --gtest_repeat=5 > $R/gtest_tunegpu.txt 2>&1
echo "TuneGpu x5 rc=$? $((SECONDS-s))s passed $(grep -c '^\[       OK \] TuneGpu' $R/gtest_tunegpu.txt) failed $(grep -c '^\[  FAILED  \] TuneGpu.*ms)' $R/gtest_tunegpu.txt)"
grep -E "m=128 .*ratio|m=16 .*ratio" $R/gtest_tunegpu.txt | sed -E 's/auto=.*//'
echo "smallm $(date +%T.%N)" >> $R/marks.txt
s=$SECONDS; timeout 100 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
s=$SECONDS; timeout 60 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
  --replays 7 --json $R/sm.json > $R/sm.log 2>&1; echo "bench small_m rc=$? $((SECONDS-s))s"
kill $SMI
python3 .gpu/summarize.py --family 're:wgmma,rows=(?!32,|64,|128,)' $R/sm.json > $R/sum.txt 2>&1
grep -E "^geomean|MB M<=16:" $R/sum.txt
echo "acceptance $(date +%T.%N)" >> $R/marks.txt
OUT=$R/acc bash .gpu/gpu_acceptance.sh $B tune-between > $R/acc_summary.txt 2>&1
tail -8 $R/acc_summary.txt
python3 .gpu/auto_regret.py --by-m --worst 8 $R/acc/auto_between.csv 2>&1 | head -24
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s14_call4.sh
#!/usr/bin/env bash
# Session 14 call 4: every GPU test and check on the final code (8dacb7f); then fitted rows with
# split-K named on nano9b.down (4480 x 15680: 132 blocks of 102 rows x split 3 or 68 x split 2,
# against the best there, 105 blocks of 128 x split 3) and llama70b.qkv / nemoH8b.in_proj.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
T=""
for n in "rows=102,splitk=3,stages=14" "rows=102,splitk=3,stages=10" "rows=68,splitk=2,stages=16" "rows=68,splitk=2,stages=8" \
         "rows=78,splitk=2,stages=16" "rows=78,splitk=2,stages=8" "rows=94,splitk=2,stages=10" "rows=116,splitk=2,stages=12"; do
  T="$T --add-tactic small_m:wgmma,$n,l2pf=0,pdl=1 --add-tactic small_m:wgmma,$n,l2pf=0,pdl=1,wload=cp"
done
s=$SECONDS; timeout 120 $B/fp8gemm bench --shape 4480,15680 --shape 10240,8192 --shape 18560,4096 --shape 8192,8192 --m 1,16 \
  --backend small_m --tactics all --max-finalists 24 --replays 7 $T --json $R/named_a.json > $R/named_a.log 2>&1
echo "named a rc=$? $((SECONDS-s))s"; tail -3 $R/named_a.log
python3 - $R/named_a.json <<'PY'
import json, sys, re
for p in json.load(open(sys.argv[1]))["points"]:
    t = [(x["median_us"], x["tactic"][8:]) for x in p["timings"] if x["ok"] and len(x["samples_us"]) > 1 and x["tactic"].startswith("small_m:")]
    t.sort(); fl = (p["N"] * p["K"] + p["M"] * p["K"]) / 4.5e12 * 1e6
    named = [x for x in t if re.search(r"rows=(102|68|78|94|116),splitk=[23],", x[1])]
    print(f"{p['N']}x{p['K']} M={p['M']:<2} best {t[0][0]:6.2f} ({fl/t[0][0]:.2f}) {t[0][1]}")
    for u, n in named[:4]: print(f"      {u:6.2f} ({fl/u:.2f}) {n}")
PY
s=$SECONDS; timeout 260 $B/fp8gemm_gpu_tests > $R/gtest_all.txt 2>&1; rc=$?
echo "gtest all rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/gtest_all.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_all.txt | head -20
grep -E "ratio .* \(round" $R/gtest_all.txt | sed -E 's/auto=.*//'
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s14_call5.sh
#!/usr/bin/env bash
# Session 14 call 5 (777f5bc): fitted rows with cp.async weights on the whole 64 W-row stage tile.
# SmallM GPU tests, check small_m; fitted x split-K named again (cp.async against TMA, as in call
# 4); the small_m bench at M <= 16.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 100 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1; rc=$?
echo "gtest SmallM rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet --backend small_m > $R/check.txt 2>&1; echo "check small_m rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
T=""
for n in "rows=102,splitk=3" "rows=68,splitk=2" "rows=78,splitk=2"; do
  T="$T --add-tactic small_m:wgmma,$n,stages=12,l2pf=0,pdl=1 --add-tactic small_m:wgmma,$n,stages=12,l2pf=0,pdl=1,wload=cp"
  T="$T --add-tactic small_m:wgmma,$n,stages=6,l2pf=0,pdl=1 --add-tactic small_m:wgmma,$n,stages=6,l2pf=0,pdl=1,wload=cp"
done
s=$SECONDS; timeout 60 $B/fp8gemm bench --shape 4480,15680 --shape 10240,8192 --m 1,16 --backend small_m --tactics all \
  --max-finalists 24 --replays 7 $T --json $R/named.json > $R/named.log 2>&1; echo "named rc=$? $((SECONDS-s))s"
python3 - $R/named.json <<'PY'
import json, sys, re
for p in json.load(open(sys.argv[1]))["points"]:
    t = {x["tactic"][8:]: x["median_us"] for x in p["timings"] if x["ok"] and len(x["samples_us"]) > 1 and x["tactic"].startswith("small_m:")}
    best = min(t.items(), key=lambda kv: kv[1])
    print(f"{p['N']}x{p['K']} M={p['M']:<2} best {best[1]:6.2f} {best[0]}")
    for k in sorted(t):
        if re.search(r"rows=(102|68|78),splitk=[23],", k) and not k.endswith("wload=cp"):
            print(f"      TMA {t[k]:6.2f}  cp {t.get(k + ',wload=cp', float('nan')):6.2f}  {k}")
PY
s=$SECONDS; timeout 60 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
  --replays 7 --json $R/sm.json > $R/sm.log 2>&1; echo "bench small_m rc=$? $((SECONDS-s))s"
python3 .gpu/summarize.py --family 're:wgmma,rows=(?!32,|64,|128,)' $R/sm.json > $R/sum.txt 2>&1
grep -E "^geomean|MB M<=16:" $R/sum.txt
grep -A40 "^wins" $R/sum.txt | grep -E "rows=(3[3-9]|[4-9][0-9]|1[01][0-9]|12[0-7]),"
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s14_call6.sh
#!/usr/bin/env bash
# Session 14 call 6: fitted rows with TMA weights on the whole 64 W-row tile too (fp8gemm_full;
# the GPU tests are its build) against 777f5bc's short TMA tile (fp8gemm): small_m bench at M <= 16,
# A B A B; SmallM GPU tests of the variant.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for r in a b; do
  for v in short full; do
    F=$B/fp8gemm; [ $v = full ] && F=$B/fp8gemm_full
    s=$SECONDS; timeout 60 $F bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
      --replays 7 --json $R/sm_${v}_$r.json > $R/sm_${v}_$r.log 2>&1; echo "bench $v $r rc=$? $((SECONDS-s))s"
  done
done
for f in $R/sm_*.json; do python3 .gpu/summarize.py --family 're:wgmma,rows=(?!32,|64,|128,)' $f > ${f%.json}.sum 2>&1; echo "== $(basename $f)"; grep -E "^geomean x \(best small_m\)|^>=64MB M<=16:|^16-32MB M<=16:" ${f%.json}.sum; done
python3 .gpu/ab_cmp.py $R/sm_short_a.json,$R/sm_short_b.json $R/sm_full_a.json,$R/sm_full_b.json > $R/ab.txt 2>&1; head -12 $R/ab.txt
s=$SECONDS; timeout 100 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM (full) rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s14_call7.sh
#!/usr/bin/env bash
# Session 14 call 7: the final code (every GPU test, check).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 260 $B/fp8gemm_gpu_tests > $R/gtest_all.txt 2>&1; rc=$?
echo "gtest all rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/gtest_all.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_all.txt | head -20
grep -E "ratio .* \(round" $R/gtest_all.txt | sed -E 's/auto=.*//'
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s14_call8.sh
#!/usr/bin/env bash
# Session 14 call 8: the review commit (dispatch of one or two warpgroups): SmallM GPU tests, check small_m.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
s=$SECONDS; timeout 100 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1; rc=$?
echo "gtest SmallM rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
s=$SECONDS; timeout 30 $B/fp8gemm check --quiet --backend small_m > $R/check.txt 2>&1; echo "check small_m rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
