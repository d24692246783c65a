# Session 10's device calls (docs/perf/h200.md), as they ran from a .gpu/ bundle: .gpu/bin held the
# binaries named there, .gpu/ the scripts of scripts/ (gpu_acceptance.sh, gpu_tune_ab.sh, auto_regret.py,
# summarize.py = src/backends/small_m/bench/device/summarize.py) and l2late_cmp.py (at the end).

######## .gpu/s10_call1.sh
#!/usr/bin/env bash
# Session 10 call 1: every GPU test + check (session 9's Context refactor and capture test not yet
# run on a GPU), then the tuner A/B: defaults vs --kept-floor-adapts (whole-suite tune, then auto
# against every tactic between edges), each variant archived as soon as it ends.
cd "$(dirname "$0")/.."
B=.gpu/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/t
OUT=$OUT/t bash .gpu/gpu_acceptance.sh $B tests > $OUT/tests_summary.txt 2>&1
mv $OUT/t/logs.tar.gz $OUT/tests_logs.tar.gz; rm -rf $OUT/t
tail -4 $OUT/tests_summary.txt
i=0
for args in "" "--kept-floor-adapts"; do
  i=$((i+1)); W=$OUT/v$i; mkdir -p $W; echo "$args" > $W/tune_args.txt
  TUNE_ARGS="$args" OUT=$W bash .gpu/gpu_acceptance.sh $B tune-between > $W/summary.txt 2>&1
  tar -C $OUT -czf $OUT/v$i.tar.gz v$i && rm -rf $W.keep
  echo "==== v$i: tune $args"; grep -E "^tune " $W/summary.txt
  python3 .gpu/auto_regret.py --by-m --worst 6 $W/auto_between.csv 2>/dev/null | cut -c1-200
  rm -rf $W
done

######## .gpu/s10_call2.sh
#!/usr/bin/env bash
# Session 10 call 2: the tuner's warm-up round between back-to-back measurements, kept (as
# before, FP8GEMM_WARM_UP_WHEN_BUSY=1) then skipped (the new default); whole-suite tune, then
# auto against every tactic between edges, each archived as soon as it ends.
cd "$(dirname "$0")/.."
B=.gpu/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 60 $B/fp8gemm_gpu_tests --gtest_brief=1 --gtest_filter='GraphTimer*:TuneGpu*' > $OUT/gtest.txt 2>&1
echo "gtest rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest.txt | tr '\n' ' ')"
i=0
for warm in 1 ""; do
  i=$((i+1)); W=$OUT/v$i; mkdir -p $W; echo "FP8GEMM_WARM_UP_WHEN_BUSY=$warm" > $W/tune_args.txt
  FP8GEMM_WARM_UP_WHEN_BUSY=$warm OUT=$W bash .gpu/gpu_acceptance.sh $B tune-between > $W/summary.txt 2>&1
  tar -C $OUT -czf $OUT/v$i.tar.gz v$i
  echo "==== v$i: FP8GEMM_WARM_UP_WHEN_BUSY=$warm"; grep -E "^tune " $W/summary.txt
  tar xzf $W/logs.tar.gz -C $W 2>/dev/null; grep -E "^tune: (575|where)" $W/logs/tune.log
  python3 .gpu/auto_regret.py --by-m --worst 6 $W/auto_between.csv 2>/dev/null | cut -c1-160
  rm -rf $W
done

######## .gpu/s10_call3.sh
#!/usr/bin/env bash
# Session 10 call 3 (issue 4, experiment): small_m with the first half of each grid prefetching
# the late half's K shares into L2 (FP8GEMM_SMALL_M_L2LATE=1), off/on alternated, two pairs.
cd "$(dirname "$0")/.."
F=.gpu/bin/fp8gemm_l2late
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
FP8GEMM_SMALL_M_L2LATE=1 timeout 90 $F check --backend small_m --quiet > $OUT/check_on.txt 2>&1; echo "check on rc=$? $(tail -1 $OUT/check_on.txt)"
for r in a b; do
  for v in off on; do
    e=""; [ $v = on ] && e=1
    FP8GEMM_SMALL_M_L2LATE=$e timeout 100 $F bench --model all --m 1,2,4,8,16 --backend small_m --tactics all \
      --max-finalists 24 --replays 7 --json $OUT/${v}_$r.json > $OUT/${v}_$r.txt 2>&1
    echo "bench $v $r rc=$?"
  done
done
python3 .gpu/l2late_cmp.py $OUT/off_a.json $OUT/on_a.json $OUT/off_b.json $OUT/on_b.json > $OUT/cmp.txt 2>&1
gzip $OUT/*.json
grep -E "^class|^====" $OUT/cmp.txt

######## .gpu/s10_call4.sh
#!/usr/bin/env bash
# Session 10 call 4 (issue 4, experiment): weights requested before griddepcontrol.wait capped at
# FP8GEMM_SMALL_M_PREWAIT stages (unset: the whole ring, as the library), off / 2 / 4, twice.
cd "$(dirname "$0")/.."
F=.gpu/bin/fp8gemm_prewait
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
FP8GEMM_SMALL_M_PREWAIT=2 timeout 90 $F check --backend small_m --quiet > $OUT/check_pw2.txt 2>&1; echo "check pw2 rc=$? $(tail -1 $OUT/check_pw2.txt)"
mkdir -p $OUT/j
for r in a b; do
  for v in off 2 4; do
    e=""; [ $v != off ] && e=$v
    FP8GEMM_SMALL_M_PREWAIT=$e timeout 100 $F bench --model all --m 1,2,4,8,16 --backend small_m --tactics all \
      --max-finalists 24 --replays 7 --json $OUT/j/${v}_$r.json > $OUT/j/${v}_$r.txt 2>&1
    echo "bench $v $r rc=$?"
  done
done
python3 .gpu/l2late_cmp.py $OUT/j/off_a.json $OUT/j/2_a.json $OUT/j/off_a.json $OUT/j/4_a.json $OUT/j/off_b.json $OUT/j/2_b.json $OUT/j/off_b.json $OUT/j/4_b.json > $OUT/cmp.txt 2>&1
gzip $OUT/j/*.json; tar -C $OUT -cf $OUT/j.tar j && rm -rf $OUT/j
grep -E "^class|^====" $OUT/cmp.txt

######## .gpu/s10_call5.sh
#!/usr/bin/env bash
# Session 10 call 5: the final code (kept floor adapts by default; small_m early=E with early=4
# twins offered on <= 40 MB weights): every GPU test and check, then the small_m bench at M <= 16 twice.
cd "$(dirname "$0")/.."
B=.gpu/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/t
OUT=$OUT/t bash .gpu/gpu_acceptance.sh $B tests > $OUT/tests_summary.txt 2>&1
mv $OUT/t/logs.tar.gz $OUT/tests_logs.tar.gz; rm -rf $OUT/t
tail -4 $OUT/tests_summary.txt
for r in a b; do
  timeout 100 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
    --replays 7 --json $OUT/sm_$r.json > $OUT/sm_$r.txt 2>&1
  echo "bench $r rc=$?"
  python3 .gpu/summarize.py --family early= $OUT/sm_$r.json > $OUT/sum_$r.txt 2>&1
  grep -E "geomean|MB M<=16|M=" $OUT/sum_$r.txt
done
gzip $OUT/sm_a.json $OUT/sm_b.json; rm -f $OUT/sm_a.txt $OUT/sm_b.txt

######## call 6 (the run command itself)
OUT=$OUT bash .gpu/gpu_acceptance.sh .gpu/bin tune-between > $OUT/summary.txt 2>&1; tail -4 $OUT/summary.txt; python3 .gpu/auto_regret.py --by-m --worst 8 $OUT/auto_between.csv

######## .gpu/l2late_cmp.py (calls 3 and 4)
# Compare small_m bench JSONs with FP8GEMM_SMALL_M_L2LATE off / on: best small_m per point,
# HBM fraction per class, and per-tactic on/off ratios. Usage: l2late_cmp.py off1.json on1.json [off2 on2]
import json, math, sys, collections
HBM = 4.5e12
def gm(x): return math.exp(sum(map(math.log, x)) / len(x)) if x else float('nan')
def load(f):
    out = {}
    for p in json.load(open(f))["points"]:
        key = (p["shape"], p["M"])
        t = {x["tactic"]: x["median_us"] for x in p["timings"] if x["ok"] and len(x["samples_us"]) > 1 and x["tactic"].startswith("small_m:")}
        ref = {x["label"]: x for x in p["entries"]}.get("cublaslt_default", {}).get("us")
        floor = p["batch"] * (p["N"] * p["K"] + p["M"] * p["K"] + 2 * p["M"] * p["N"]) / HBM * 1e6
        out[key] = (t, ref, floor, p["N"] * p["K"] / 1e6)
    return out
fs = sys.argv[1:]
for i in range(0, len(fs), 2):
    off, on = load(fs[i]), load(fs[i + 1])
    print("==== pair", fs[i], fs[i + 1])
    cls = collections.defaultdict(lambda: [[], [], [], [], []])
    for k in sorted(off, key=lambda k: (off[k][3], k[1])):
        if k not in on: continue
        to, ref, floor, mb = off[k]; tn = on[k][0]
        if not to or not tn: continue
        bo, bn = min(to.values()), min(tn.values())
        common = [tn[n] / to[n] for n in to if n in tn]
        c = ">=64" if mb >= 64 else ("16-32" if 16 <= mb <= 32 else ("16-33.6" if mb <= 33.6 and mb >= 16 else "<16" if mb < 16 else "32-64"))
        cls[c][0].append(floor / bo); cls[c][1].append(floor / bn); cls[c][2].append(bn / bo); cls[c][3].append(gm(common)); cls[c][4].append(ref / on[k][1] if on[k][1] else 1)
        print("%-26s M=%2d %6.1fMB best off %7.2f on %7.2f  hbm %.2f -> %.2f  on/off best %.3f same-tactic gm %.3f  %s" % (k[0], k[1], mb, bo, bn, floor / bo, floor / bn, bn / bo, gm(common), min(tn, key=tn.get)[8:60]))
    for c, v in cls.items():
        med = lambda x: sorted(x)[len(x) // 2]
        print("class %-8s pts %3d  hbm median off %.2f on %.2f  (>=0.90: %d/%d, >=0.70: %d/%d)  best on/off gm %.3f  same-tactic gm %.3f" % (
            c, len(v[0]), med(v[0]), med(v[1]), sum(x >= .9 for x in v[0]), sum(x >= .9 for x in v[1]), sum(x >= .7 for x in v[0]), sum(x >= .7 for x in v[1]), gm(v[2]), gm(v[3])))
