# Session 13's device calls (docs/perf/h200.md), as they ran from a .gpu/ bundle: .gpu/bin held the binaries named
# there, .gpu/ the scripts of scripts/ (gpu_acceptance.sh, auto_regret.py) and src/backends/small_m/bench/device/
# (summarize.py, ab_cmp.py).

######## .gpu/s13_call1.sh
#!/usr/bin/env bash
# Session 13 call 1: the split-K push reduction (st.async). Split-K GPU tests first, then every
# GPU test and check with the new binary; then the small_m bench at M <= 16, new / old / new / old.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 120 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $OUT/gtest_smallm.txt 2>&1; rc=$?
echo "gtest SmallM rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_smallm.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $OUT/gtest_smallm.txt | head -10
if [ $rc -ne 0 ]; then echo "SmallM tests failed: no bench"; exit 1; fi
s=$SECONDS; timeout 240 $B/fp8gemm_gpu_tests --gtest_brief=1 --gtest_filter='-SmallM.*' > $OUT/gtest_rest.txt 2>&1
echo "gtest rest rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $OUT/gtest_rest.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $OUT/gtest_rest.txt | head -10
s=$SECONDS; timeout 90 $B/fp8gemm check --quiet > $OUT/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $OUT/check.txt)"
for r in a b; do
  for v in new old; do
    F=$B/fp8gemm; [ $v = old ] && F=$B/fp8gemm_s12
    s=$SECONDS; timeout 75 $F bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
      --replays 7 --json $OUT/sm_${v}_$r.json > $OUT/sm_${v}_$r.log 2>&1; echo "bench $v $r rc=$? $((SECONDS-s))s"
  done
done
python3 .gpu/ab_cmp.py $OUT/sm_old_a.json,$OUT/sm_old_b.json $OUT/sm_new_a.json,$OUT/sm_new_b.json -v > $OUT/ab.txt 2>&1
python3 .gpu/ab_cmp.py $OUT/sm_old_a.json $OUT/sm_old_b.json > $OUT/ab_oldold.txt 2>&1
gzip $OUT/*.json $OUT/gtest_*.txt
head -8 $OUT/ab.txt; echo "old a vs old b (noise):"; head -7 $OUT/ab_oldold.txt

######## .gpu/s13_call2.sh
#!/usr/bin/env bash
# Session 13 call 2: does a 128-block grid without split-K beat a 128-block grid with split-K 2
# at equal bytes per block? Pairs of shapes with the same weight bytes: (4096, K) vs (8192, K/2).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
mkdir -p $OUT/r
T="--add-tactic small_m:wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp"
T="$T --add-tactic small_m:wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1 --add-tactic small_m:wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1"
T="$T --add-tactic small_m:wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=2,wload=cp --add-tactic small_m:wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=2,wload=cp"
for r in a b; do
s=$SECONDS; timeout 200 $B/fp8gemm_s12 bench --shape 4096,4096 --shape 8192,2048 --shape 4096,8192 --shape 8192,4096 \
  --shape 4096,21504 --shape 8192,10752 --shape 4096,5376 --shape 8192,2688 --m 1,16 --backend small_m --tactics all \
  --max-finalists 24 --replays 7 $T --json $OUT/r/pairs_$r.json --csv $OUT/r/pairs_$r.csv > $OUT/r/pairs_$r.log 2>&1
echo "bench $r rc=$? $((SECONDS-s))s"
done
python3 - $OUT/r/pairs_a.json $OUT/r/pairs_b.json <<'PY'
import json, sys, re
for f in sys.argv[1:]:
    print("==", f.split("/")[-1])
    for p in json.load(open(f))["points"]:
        t = {x["tactic"]: x["median_us"] for x in p["timings"] if x["ok"] and len(x["samples_us"]) > 1}
        best = min((v, k) for k, v in t.items() if k.startswith("small_m:"))
        fl = (p["N"] * p["K"] + p["M"] * p["K"]) / 4.5e12 * 1e6
        named = " ".join(f"{re.sub(r'small_m:wgmma,rows=64,|,l2pf=0', '', k)}={v:.2f}" for k, v in sorted(t.items()) if "stages=12" in k and "rows=64,splitk=" in k and "early" not in k)
        print(f"{p['N']}x{p['K']} M={p['M']:<2} best {best[0]:6.2f} ({fl/best[0]:.2f}) {best[1][8:]} | {named}")
PY
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s13_call3.sh
#!/usr/bin/env bash
# Session 13 call 3: rows=32 (K pairs). SmallM GPU tests, check, then the small_m bench at M <= 16,
# new / old (session 12's binary) / new / old; everything in one tarball.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1; rc=$?
echo "gtest SmallM rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" -A6 $R/gtest_smallm.txt | head -40
if [ $rc -ne 0 ]; then cd $OUT && tar czf r.tgz r && rm -rf r; exit 1; fi
s=$SECONDS; timeout 90 $B/fp8gemm check --quiet --backend small_m > $R/check.txt 2>&1; echo "check small_m rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
for r in a b; do
  for v in new old; do
    F=$B/fp8gemm; [ $v = old ] && F=$B/fp8gemm_s12
    s=$SECONDS; timeout 90 $F bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
      --replays 7 --json $R/sm_${v}_$r.json > $R/sm_${v}_$r.log 2>&1; echo "bench $v $r rc=$? $((SECONDS-s))s"
  done
done
python3 .gpu/ab_cmp.py $R/sm_old_a.json,$R/sm_old_b.json $R/sm_new_a.json,$R/sm_new_b.json -v > $R/ab.txt 2>&1
python3 .gpu/summarize.py --family wgmma,rows=32 $R/sm_new_a.json > $R/sum_new_a.txt 2>&1
python3 .gpu/summarize.py --family wgmma,rows=32 $R/sm_new_b.json > $R/sum_new_b.txt 2>&1
head -7 $R/ab.txt; grep -E "wgmma,rows=32" $R/ab.txt | wc -l; grep -E "geomean|MB M<=16" $R/sum_new_a.txt | head -12
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s13_call4.sh
#!/usr/bin/env bash
# Session 13 call 4: more rows=32 rings and splits, timed by name beside the offered candidates.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
T=""
for t in "wgmma,rows=32,splitk=1,stages=7,l2pf=0,pdl=1" "wgmma,rows=32,splitk=1,stages=5,l2pf=0,pdl=1" \
         "wgmma,rows=32,splitk=2,stages=11,l2pf=0,pdl=1" "wgmma,rows=32,splitk=1,stages=14,l2pf=0,pdl=1" \
         "wgmma,rows=32,splitk=1,stages=11,l2pf=0,pdl=1,early=6" "wgmma,rows=32,splitk=1,stages=7,l2pf=0,pdl=1,wload=cp" \
         "wgmma,rows=32,splitk=2,stages=7,l2pf=0,pdl=1" "wgmma,rows=32,splitk=1,stages=11,l2pf=0,pdl=0"; do
  T="$T --add-tactic small_m:$t"
done
for r in a b; do
  s=$SECONDS; timeout 120 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
    --replays 7 $T --json $R/x_$r.json > $R/x_$r.log 2>&1; echo "bench $r rc=$? $((SECONDS-s))s"
done
python3 .gpu/summarize.py --family wgmma,rows=32 $R/x_a.json > $R/sum_a.txt 2>&1
grep -E "geomean|MB M<=16" $R/sum_a.txt | head -12
python3 - $R/x_a.json $R/x_b.json <<'PY'
import json, sys, collections
wins = collections.Counter(); gain = collections.defaultdict(list)
for f in sys.argv[1:]:
    for p in json.load(open(f))["points"]:
        t = {x["tactic"]: x["median_us"] for x in p["timings"] if x["ok"] and len(x["samples_us"]) > 1 and x["tactic"].startswith("small_m:")}
        named = {e["tactic"] for e in p["entries"] if e["label"].startswith("named")}
        base = min(v for k, v in t.items() if k not in named)
        for k in named:
            if k in t: gain[k].append(base / t[k])
        b = min(t, key=t.get)
        if b in named: wins[b] += 1
for k, v in gain.items():
    import math
    print(f"{k[8:]:60} wins {wins[k]:3}  best-gain {max(v):.3f}  geomean vs best-offered {math.exp(sum(map(math.log, v))/len(v)):.3f}")
PY
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s13_call5.sh
#!/usr/bin/env bash
# Session 13 call 5 (binaries of the rows=32 commits): every GPU test, check, the small_m bench at
# M <= 16 once, then the whole-suite tune with an EMPTY default table (input of the regenerated table).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 260 $B/fp8gemm_gpu_tests --gtest_brief=1 > $R/gtest_all.txt 2>&1
echo "gtest rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests? from .* ran' $R/gtest_all.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" $R/gtest_all.txt | head -10
s=$SECONDS; timeout 90 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
s=$SECONDS; timeout 60 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
  --replays 7 --json $R/small_m.json > $R/small_m.log 2>&1; echo "small_m bench rc=$? $((SECONDS-s))s"
python3 .gpu/summarize.py --family wgmma,rows=32 $R/small_m.json > $R/small_m_sum.txt 2>&1
grep -E "geomean|MB M<=16" $R/small_m_sum.txt | head -12
s=$SECONDS; timeout 175 $B/fp8gemm_empty tune --model all --m buckets --run-budget-s 165 --cache /tmp/cache_empty.json \
  --json $R/tune_empty.json > $R/tune_empty.log 2>&1
echo "tune(empty table) rc=$? $((SECONDS-s))s $(grep -oE '[0-9]+/[0-9]+ .*' $R/tune_empty.log | tail -1 | cut -c1-100)"
grep -E "where the time went|keys," $R/tune_empty.log | head -4
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s13_call6.sh
#!/usr/bin/env bash
# Session 13 call 6 (final binaries: rows=32 candidates and the regenerated default table): the
# whole-suite tune, then auto (from that cache) against every tactic between bucket edges (issue 5);
# then untuned auto (the table, no cache) against every tactic at the suite's M <= 256 and between
# edges.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 90 $B/fp8gemm_gpu_tests --gtest_brief=1 --gtest_filter="TuneGpu.*:Api*" > $R/gtest_tune_api.txt 2>&1; echo "gtest TuneGpu+Api rc=$? $((SECONDS-s))s $(grep -E "^\[  (PASSED|FAILED)" $R/gtest_tune_api.txt | tr "\n" " ")"
OUT=$R/tb timeout 320 bash .gpu/gpu_acceptance.sh $B tune-between > $R/tb_summary.txt 2>&1; tail -5 $R/tb_summary.txt
python3 .gpu/auto_regret.py --by-m --worst 6 $R/tb/auto_between.csv 2>&1 | head -24
rm -f $R/tb/cache.json.lock
s=$SECONDS; timeout 150 $B/fp8gemm bench --model all --m 1,2,4,8,16,24,32,48,64,96,128,192,256 --tactics all --csv $R/untuned_small.csv > $R/untuned_small.log 2>&1; echo "untuned small rc=$? $((SECONDS-s))s"
s=$SECONDS; timeout 75 $B/fp8gemm bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all --csv $R/untuned_between.csv > $R/untuned_between.log 2>&1; echo "untuned between rc=$? $((SECONDS-s))s"
for f in untuned_small untuned_between; do echo "== $f"; python3 .gpu/auto_regret.py --by-m --worst 3 $R/$f.csv 2>&1 | head -8; done
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s13_call7.sh
#!/usr/bin/env bash
# Session 13 call 7: TuneGpu.TunedAutoIsWithinThreePercentOfTheBestTactic 3x with the regenerated
# table and 3x with session 11's table (same code otherwise), alternating.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
for i in 1 2 3; do
  for v in new old; do
    T=$B/fp8gemm_gpu_tests; [ $v = old ] && T=$B/fp8gemm_gpu_tests_oldtable
    timeout 40 $T --gtest_filter='TuneGpu.TunedAutoIsWithinThreePercentOfTheBestTactic' > $R/t_${v}_$i.txt 2>&1
    echo "$v $i rc=$? $(grep -E '^b=1 m=(16|12) ' $R/t_${v}_$i.txt | awk '{print $2, "ratio", $14, $18}' | tr '\n' ' ')"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s13_call8.sh
#!/usr/bin/env bash
# Session 13 call 8 (default table: session 11's rules above M=16, session 13's tune at M <= 16):
# the tuned-auto GPU test twice, then untuned auto against every tactic at the suite's M <= 256 and
# between bucket edges.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
for i in 1 2; do
  timeout 40 $B/fp8gemm_gpu_tests --gtest_filter='TuneGpu.*:Api*' > $R/t_$i.txt 2>&1
  echo "tune/api $i rc=$? $(grep -E '^\[  (PASSED|FAILED)' $R/t_$i.txt | tr '\n' ' ') $(grep -E '^b=1 m=(16|12|128) ' $R/t_$i.txt | awk '{print $2, "ratio", $14}' | tr '\n' ' ')"
done
s=$SECONDS; timeout 100 $B/fp8gemm bench --model all --m 1,2,4,8,16,24,32,48,64,96,128,192,256 --tactics all --csv $R/untuned_small.csv > $R/untuned_small.log 2>&1; echo "untuned small rc=$? $((SECONDS-s))s"
s=$SECONDS; timeout 75 $B/fp8gemm bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all --csv $R/untuned_between.csv > $R/untuned_between.log 2>&1; echo "untuned between rc=$? $((SECONDS-s))s"
for f in untuned_small untuned_between; do echo "== $f"; python3 .gpu/auto_regret.py --by-m --worst 4 $R/$f.csv 2>&1 | head -30; done
cd $OUT && tar czf r.tgz r && rm -rf r

######## .gpu/s13_call9.sh
#!/usr/bin/env bash
# Session 13 call 9 (4f068c4, the final code): the SmallM and TuneGpu GPU tests and check.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
s=$SECONDS; timeout 120 $B/fp8gemm_gpu_tests --gtest_brief=1 --gtest_filter='SmallM.*:TuneGpu.*:Api*:PdlOrdering*' > $OUT/gtest.txt 2>&1
echo "gtest rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest.txt | tr '\n' ' ')"
grep -E "FAILED|Failure" -A3 $OUT/gtest.txt | head -12
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $OUT/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $OUT/check.txt)"
