# ==== .gpu/s15_call1.sh
#!/usr/bin/env bash
# Session 15 call 1: (1) fitted rows with split-K at 2-3 blocks per SM, named, on the shapes that
# miss the issue-4 targets (nano9b.down, nemotron3super.qkv / shared_up, llama8b.o); (2) the
# whole-suite tune and auto between bucket edges, judged by the bench whose every backend best is
# a full-round time (best_of_each_backend).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
named() {  # named <label> <shape> <config>...
  local label=$1 shape=$2; shift 2; local T=""
  for n in "$@"; do T="$T --add-tactic small_m:wgmma,$n,l2pf=0,pdl=1"; done
  s=$SECONDS; timeout 90 $B/fp8gemm bench --shape $shape --m 1,16 --backend small_m --tactics all --max-finalists 24 \
    --replays 7 $T --json $R/named_$label.json > $R/named_$label.log 2>&1
  echo "named $label rc=$? $((SECONDS-s))s"
}
named nano 4480,15680 rows=34,splitk=2,stages=13 rows=34,splitk=2,stages=11,wload=cp rows=34,splitk=3,stages=9 \
  rows=34,splitk=3,stages=7,wload=cp rows=70,splitk=4,stages=9 rows=70,splitk=4,stages=6,wload=cp \
  rows=46,splitk=4,stages=9 rows=46,splitk=4,stages=7,wload=cp rows=102,splitk=6,stages=7 rows=102,splitk=6,stages=6,wload=cp \
  rows=32,splitk=2,stages=6 rows=32,splitk=2,stages=6,wload=cp
named qkv 4608,4096 rows=35,splitk=2,stages=13 rows=35,splitk=2,stages=11,wload=cp rows=35,splitk=3,stages=9 \
  rows=35,splitk=3,stages=7,wload=cp rows=70,splitk=4,stages=9 rows=70,splitk=4,stages=6,wload=cp
named up 5376,4096 rows=41,splitk=2,stages=13 rows=41,splitk=2,stages=11,wload=cp rows=41,splitk=3,stages=9 \
  rows=41,splitk=3,stages=7,wload=cp
named o 4096,4096 rows=32,splitk=2,stages=9 rows=32,splitk=2,stages=9,wload=cp rows=33,splitk=2,stages=13 rows=33,splitk=2,stages=11,wload=cp
python3 - $R/named_*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
  for p in json.load(open(f))["points"]:
    t = sorted((x["median_us"], x["tactic"][8:]) for x in p["timings"] if x["ok"] and len(x["samples_us"]) > 1 and x["tactic"].startswith("small_m:"))
    fl = (p["N"] * p["K"] + p["M"] * p["K"]) / 4.5e12 * 1e6
    print(f"{p['N']}x{p['K']} M={p['M']:<2} best {t[0][0]:6.2f} ({fl/t[0][0]:.2f}) {t[0][1]}")
    for u, n in [x for x in t if "splitk=1," not in x[1]][:3]: print(f"      {u:6.2f} ({fl/u:.2f}) {n}")
PY
OUT=$R/acc bash .gpu/gpu_acceptance.sh $B tune-between > $R/acc_summary.txt 2>&1
tail -6 $R/acc_summary.txt
python3 .gpu/auto_regret.py --by-m --worst 12 $R/acc/auto_between.csv 2>&1 | head -30
cd $OUT && tar czf r.tgz r && rm -rf r

# ==== .gpu/s15_call2.sh
#!/usr/bin/env bash
# Session 15 call 2: deep rings (17..32 stages, one block per SM: K pairs, fitted rows, 64-row
# blocks). SmallM GPU tests of the new build; small_m bench at M <= 16, old (db5ca91) and new
# alternating, A B A B; the deep family summarized and the A/B per point.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
for r in a b; do
  for v in old new; do
    F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm
    s=$SECONDS; timeout 90 $F bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
      --replays 7 --json $R/sm_${v}_$r.json > $R/sm_${v}_$r.log 2>&1; echo "bench $v $r rc=$? $((SECONDS-s))s"
  done
done
for f in $R/sm_*.json; do python3 .gpu/summarize.py --family 're:stages=(1[7-9]|2[0-9]|3[0-2]),' $f > ${f%.json}.sum 2>&1; echo "== $(basename $f)"; grep -E "^geomean x \(best small_m\)|^>=64MB M<=16:|^16-32MB M<=16:" ${f%.json}.sum; done
python3 .gpu/ab_cmp.py $R/sm_old_a.json,$R/sm_old_b.json $R/sm_new_a.json,$R/sm_new_b.json > $R/ab.txt 2>&1; head -14 $R/ab.txt
python3 - $R/sm_new_a.json $R/sm_new_b.json <<'PY'
import json, sys, re
for f in sys.argv[1:]:
  print("==", f.split("/")[-1])
  for p in json.load(open(f))["points"]:
    if p["shape"] not in ("nano9b.down", "nemoH8b.down", "llama70b.o", "llama70b.qkv") or p["M"] not in (1, 16): continue
    t = sorted((x["median_us"], x["tactic"][8:]) for x in p["timings"] if x["ok"] and len(x["samples_us"]) > 1 and x["tactic"].startswith("small_m:"))
    fl = (p["N"] * p["K"] + p["M"] * p["K"]) / 4.5e12 * 1e6
    deep = [x for x in t if re.search(r"stages=(1[7-9]|2\d|3[0-2]),", x[1])][:2]
    print(f"{p['shape']:14} M={p['M']:<2} best {t[0][0]:6.2f} ({fl/t[0][0]:.2f}) {t[0][1]}")
    for u, n in deep: print(f"      deep {u:6.2f} ({fl/u:.2f}) {n}")
PY
cd $OUT && tar czf r.tgz r && rm -rf r

# ==== .gpu/s15_call3.sh
#!/usr/bin/env bash
# Session 15 call 3: kblocks=B (2 or 4 K blocks per ring stage, one-shot TMA kernel). SmallM GPU
# tests; named kblocks tactics on the shapes that miss the issue-4 targets (fitted rows at one
# block per SM, 64 rows at 128 blocks); small_m bench old (db5ca91) / new alternating (does the
# TMA kernel's multi-K consumer cost kblocks=1 tactics anything?).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
named() {  # named <label> <shape> <m> <config>...
  local label=$1 shape=$2 m=$3; shift 3; local T=""
  for n in "$@"; do T="$T --add-tactic small_m:wgmma,$n"; done
  timeout 60 $B/fp8gemm bench --shape $shape --m $m --backend small_m --tactics all --max-finalists 24 \
    --replays 7 $T --json $R/named_${label}_$m.json > $R/named_${label}_$m.log 2>&1 || echo "named $label $m rc=$?"
}
P=l2pf=0,pdl=1
named nano 4480,15680 1 rows=34,splitk=1,stages=18,$P,kblocks=2 rows=34,splitk=1,stages=12,$P,kblocks=2 rows=34,splitk=1,stages=9,$P,kblocks=4
named nano 4480,15680 16 rows=34,splitk=1,stages=15,$P,kblocks=2 rows=34,splitk=1,stages=7,$P,kblocks=4
named qkv 4608,4096 1 rows=35,splitk=1,stages=16,$P,kblocks=2 rows=35,splitk=1,stages=8,$P,kblocks=4
named qkv 4608,4096 16 rows=35,splitk=1,stages=15,$P,kblocks=2 rows=35,splitk=1,stages=7,$P,kblocks=4
named up 5376,4096 1 rows=41,splitk=1,stages=15,$P,kblocks=2 rows=41,splitk=1,stages=7,$P,kblocks=4
named up 5376,4096 16 rows=41,splitk=1,stages=13,$P,kblocks=2 rows=41,splitk=1,stages=6,$P,kblocks=4
named o 4096,4096 1 rows=33,splitk=1,stages=16,$P,kblocks=2 rows=33,splitk=1,stages=8,$P,kblocks=4 rows=64,splitk=2,stages=8,$P,kblocks=2
named o 4096,4096 16 rows=33,splitk=1,stages=15,$P,kblocks=2 rows=33,splitk=1,stages=7,$P,kblocks=4 rows=64,splitk=2,stages=8,$P,kblocks=2
named nemod 4096,21504 1 rows=33,splitk=1,stages=9,$P,kblocks=4 rows=33,splitk=1,stages=18,$P,kblocks=2 rows=64,splitk=2,stages=12,$P,kblocks=2
named nemod 4096,21504 16 rows=33,splitk=1,stages=7,$P,kblocks=4 rows=33,splitk=1,stages=15,$P,kblocks=2 rows=64,splitk=2,stages=10,$P,kblocks=2
named l70o 8192,8192 1 rows=63,splitk=1,stages=12,$P,kblocks=2 rows=63,splitk=1,stages=6,$P,kblocks=4
named l70o 8192,8192 16 rows=63,splitk=1,stages=10,$P,kblocks=2 rows=63,splitk=1,stages=5,$P,kblocks=4
named l70q 10240,8192 1 rows=39,splitk=1,stages=9,$P,kblocks=2 rows=39,splitk=1,stages=4,$P,kblocks=4
named l70q 10240,8192 16 rows=39,splitk=1,stages=7,$P,kblocks=2
python3 - $R/named_*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
  for p in json.load(open(f))["points"]:
    t = sorted((x["median_us"], x["tactic"][8:]) for x in p["timings"] if x["ok"] and len(x["samples_us"]) > 1 and x["tactic"].startswith("small_m:"))
    fl = (p["N"] * p["K"] + p["M"] * p["K"]) / 4.5e12 * 1e6
    print(f"{p['shape']:12} M={p['M']:<2} best {t[0][0]:6.2f} ({fl/t[0][0]:.2f}) {t[0][1]}")
    for u, n in [x for x in t if "kblocks" in x[1]]: print(f"      {u:6.2f} ({fl/u:.2f}) {n}")
PY
for r in a b; do
  for v in old new; do
    F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm
    s=$SECONDS; timeout 90 $F bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
      --replays 7 --json $R/sm_${v}_$r.json > $R/sm_${v}_$r.log 2>&1; echo "bench $v $r rc=$? $((SECONDS-s))s"
  done
done
python3 .gpu/ab_cmp.py $R/sm_old_a.json,$R/sm_old_b.json $R/sm_new_a.json,$R/sm_new_b.json > $R/ab.txt 2>&1; head -8 $R/ab.txt
cd $OUT && tar czf r.tgz r && rm -rf r

# ==== .gpu/s15_call4.sh
#!/usr/bin/env bash
# Session 15 call 4 (call 3 again, the consumer now branch-free: call 3 measured a kernel whose wgmma ptxas serialized): kblocks=B (2 or 4 K blocks per ring stage, one-shot TMA kernel). SmallM GPU
# tests; named kblocks tactics on the shapes that miss the issue-4 targets (fitted rows at one
# block per SM, 64 rows at 128 blocks); small_m bench old (db5ca91) / new alternating (does the
# TMA kernel's multi-K consumer cost kblocks=1 tactics anything?).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
named() {  # named <label> <shape> <m> <config>...
  local label=$1 shape=$2 m=$3; shift 3; local T=""
  for n in "$@"; do T="$T --add-tactic small_m:wgmma,$n"; done
  timeout 60 $B/fp8gemm bench --shape $shape --m $m --backend small_m --tactics all --max-finalists 24 \
    --replays 7 $T --json $R/named_${label}_$m.json > $R/named_${label}_$m.log 2>&1 || echo "named $label $m rc=$?"
}
P=l2pf=0,pdl=1
named nano 4480,15680 1 rows=34,splitk=1,stages=18,$P,kblocks=2 rows=34,splitk=1,stages=12,$P,kblocks=2 rows=34,splitk=1,stages=9,$P,kblocks=4
named nano 4480,15680 16 rows=34,splitk=1,stages=15,$P,kblocks=2 rows=34,splitk=1,stages=7,$P,kblocks=4
named qkv 4608,4096 1 rows=35,splitk=1,stages=16,$P,kblocks=2 rows=35,splitk=1,stages=8,$P,kblocks=4
named qkv 4608,4096 16 rows=35,splitk=1,stages=15,$P,kblocks=2 rows=35,splitk=1,stages=7,$P,kblocks=4
named up 5376,4096 1 rows=41,splitk=1,stages=15,$P,kblocks=2 rows=41,splitk=1,stages=7,$P,kblocks=4
named up 5376,4096 16 rows=41,splitk=1,stages=13,$P,kblocks=2 rows=41,splitk=1,stages=6,$P,kblocks=4
named o 4096,4096 1 rows=33,splitk=1,stages=16,$P,kblocks=2 rows=33,splitk=1,stages=8,$P,kblocks=4 rows=64,splitk=2,stages=8,$P,kblocks=2
named o 4096,4096 16 rows=33,splitk=1,stages=15,$P,kblocks=2 rows=33,splitk=1,stages=7,$P,kblocks=4 rows=64,splitk=2,stages=8,$P,kblocks=2
named nemod 4096,21504 1 rows=33,splitk=1,stages=9,$P,kblocks=4 rows=33,splitk=1,stages=18,$P,kblocks=2 rows=64,splitk=2,stages=12,$P,kblocks=2
named nemod 4096,21504 16 rows=33,splitk=1,stages=7,$P,kblocks=4 rows=33,splitk=1,stages=15,$P,kblocks=2 rows=64,splitk=2,stages=10,$P,kblocks=2
named l70o 8192,8192 1 rows=63,splitk=1,stages=12,$P,kblocks=2 rows=63,splitk=1,stages=6,$P,kblocks=4
named l70o 8192,8192 16 rows=63,splitk=1,stages=10,$P,kblocks=2 rows=63,splitk=1,stages=5,$P,kblocks=4
named l70q 10240,8192 1 rows=39,splitk=1,stages=9,$P,kblocks=2 rows=39,splitk=1,stages=4,$P,kblocks=4
named l70q 10240,8192 16 rows=39,splitk=1,stages=7,$P,kblocks=2
python3 - $R/named_*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
  for p in json.load(open(f))["points"]:
    t = sorted((x["median_us"], x["tactic"][8:]) for x in p["timings"] if x["ok"] and len(x["samples_us"]) > 1 and x["tactic"].startswith("small_m:"))
    fl = (p["N"] * p["K"] + p["M"] * p["K"]) / 4.5e12 * 1e6
    print(f"{p['shape']:12} M={p['M']:<2} best {t[0][0]:6.2f} ({fl/t[0][0]:.2f}) {t[0][1]}")
    for u, n in [x for x in t if "kblocks" in x[1]]: print(f"      {u:6.2f} ({fl/u:.2f}) {n}")
PY
for r in a b; do
  for v in old new; do
    F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm
    s=$SECONDS; timeout 90 $F bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
      --replays 7 --json $R/sm_${v}_$r.json > $R/sm_${v}_$r.log 2>&1; echo "bench $v $r rc=$? $((SECONDS-s))s"
  done
done
python3 .gpu/ab_cmp.py $R/sm_old_a.json,$R/sm_old_b.json $R/sm_new_a.json,$R/sm_new_b.json > $R/ab.txt 2>&1; head -8 $R/ab.txt
cd $OUT && tar czf r.tgz r && rm -rf r

# ==== .gpu/s15_call5.sh
#!/usr/bin/env bash
# Session 15 call 5: why kblocks=2 is slower than 1 and 4 (call 4). Named sweep on nano9b.down and
# llama70b.o at M=1: kblocks 1 / 2 / 4 over ring depths, pdl 0 and 1, fitted rows at one block
# per SM (34 / 63 rows) and 64-row blocks (llama70b.o: 128 blocks).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() {  # run <label> <shape> <rows> <split> then kb:stages pairs
  local label=$1 shape=$2 rows=$3 split=$4; shift 4; local T=""
  for ks in "$@"; do kb=${ks%:*}; st=${ks#*:}; K=""; [ $kb -gt 1 ] && K=",kblocks=$kb"
    for pdl in 0 1; do T="$T --add-tactic small_m:wgmma,rows=$rows,splitk=$split,stages=$st,l2pf=0,pdl=$pdl$K"; done; done
  timeout 60 $B/fp8gemm bench --shape $shape --m 1 --backend small_m --tactics default --replays 9 $T \
    --json $R/$label.json > $R/$label.log 2>&1 || echo "$label rc=$?"
}
run nano 4480,15680 34 1 1:4 1:8 1:16 1:32 2:2 2:4 2:8 2:12 2:18 4:2 4:4 4:6 4:9
run l70o 8192,8192 63 1 1:4 1:8 1:16 1:24 2:4 2:8 2:12 4:3 4:6
run l70o64 8192,8192 64 1 1:8 1:16 1:24 2:4 2:8 2:12 4:3 4:6
python3 - $R/*.json <<'PY'
import json, sys, re
for f in sys.argv[1:]:
  for p in json.load(open(f))["points"]:
    fl = (p["N"] * p["K"] + p["M"] * p["K"]) / 4.5e12 * 1e6
    rows = {}
    for x in p["timings"]:
      if not (x["ok"] and len(x["samples_us"]) > 1 and "add" not in x["tactic"]): continue
      m = re.search(r"rows=(\d+),splitk=\d+,stages=(\d+),l2pf=0,pdl=(\d)(?:,kblocks=(\d))?$", x["tactic"])
      if m: rows[(int(m.group(4) or 1), int(m.group(2)), int(m.group(3)))] = x["median_us"]
    print(f"== {f.split('/')[-1]} {p['shape']} M={p['M']} floor {fl:.2f} us; default {p['timings'][0]['median_us']:.2f}")
    for (kb, st, pdl), u in sorted(rows.items()): print(f"   kb={kb} stages={st:2} pdl={pdl}: {u:6.2f} us ({fl/u:.2f})  K in ring {kb*st}")
PY
cd $OUT && tar czf r.tgz r && rm -rf r

# ==== .gpu/s15_call6.sh
#!/usr/bin/env bash
# Session 15 call 6: is kblocks=1 slower in the kblocks build? The same named one-K-block
# tactics (fitted rows at one block per SM, 64-row blocks, rows=128 split 3) timed by the db5ca91
# binary (old) and the current one (new), alternating, on nano9b.down and llama70b.o at M=1.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
T=""
for n in rows=34,splitk=1,stages=16 rows=34,splitk=1,stages=8 rows=63,splitk=1,stages=16 rows=64,splitk=1,stages=12 \
         rows=64,splitk=2,stages=12 rows=128,splitk=3,stages=12 rows=47,splitk=1,stages=10 rows=32,splitk=1,stages=11; do
  T="$T --add-tactic small_m:wgmma,$n,l2pf=0,pdl=1"; done
for r in a b; do for v in old new; do
  F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm
  timeout 60 $F bench --shape 4480,15680 --shape 8192,8192 --shape 18560,4096 --m 1 --backend small_m --tactics default \
    --replays 9 $T --json $R/${v}_$r.json > $R/${v}_$r.log 2>&1 || echo "$v $r rc=$?"
done; done
python3 - $R/old_a.json $R/new_a.json $R/old_b.json $R/new_b.json <<'PY'
import json, sys, collections
t = collections.defaultdict(dict)
for f in sys.argv[1:]:
  for p in json.load(open(f))["points"]:
    for x in p["timings"]:
      if x["ok"] and len(x["samples_us"]) > 1: t[(p["shape"], x["tactic"][8:])][f.split("/")[-1][:-5]] = x["median_us"]
for (s, n), v in sorted(t.items()):
  print(f"{s:16} {n:50} " + " ".join(f"{k}={v[k]:6.2f}" for k in sorted(v)))
PY
cd $OUT && tar czf r.tgz r && rm -rf r

# ==== .gpu/s15_call7.sh
#!/usr/bin/env bash
# Session 15 call 7: call 6 again with the producer unrolled per stage size (KB = 1, 2, 4), plus
# kblocks 2 and 4 twins (new only) and the SmallM GPU tests. The same named one-K-block tactics timed by the db5ca91
# binary (old) and the current one (new), alternating, on nano9b.down and llama70b.o at M=1.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
T=""
for n in rows=34,splitk=1,stages=16 rows=34,splitk=1,stages=8 rows=63,splitk=1,stages=16 rows=64,splitk=1,stages=12 \
         rows=64,splitk=2,stages=12 rows=128,splitk=3,stages=12 rows=47,splitk=1,stages=10 rows=32,splitk=1,stages=11; do
  T="$T --add-tactic small_m:wgmma,$n,l2pf=0,pdl=1"; done
TK=""
for n in rows=34,splitk=1,stages=9,l2pf=0,pdl=1,kblocks=4 rows=34,splitk=1,stages=18,l2pf=0,pdl=1,kblocks=2 \
         rows=63,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=4 rows=63,splitk=1,stages=12,l2pf=0,pdl=1,kblocks=2 \
         rows=64,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2 rows=47,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=2 \
         rows=47,splitk=1,stages=2,l2pf=0,pdl=1,kblocks=4; do TK="$TK --add-tactic small_m:wgmma,$n"; done
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
for r in a b; do for v in old new; do
  F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm
  timeout 60 $F bench --shape 4480,15680 --shape 8192,8192 --shape 18560,4096 --m 1 --backend small_m --tactics default \
    --replays 9 $T $([ $v = new ] && echo "$TK") --json $R/${v}_$r.json > $R/${v}_$r.log 2>&1 || echo "$v $r rc=$?"
done; done
python3 - $R/old_a.json $R/new_a.json $R/old_b.json $R/new_b.json <<'PY'
import json, sys, collections
t = collections.defaultdict(dict)
for f in sys.argv[1:]:
  for p in json.load(open(f))["points"]:
    for x in p["timings"]:
      if x["ok"] and len(x["samples_us"]) > 1: t[(p["shape"], x["tactic"][8:])][f.split("/")[-1][:-5]] = x["median_us"]
for (s, n), v in sorted(t.items()):
  print(f"{s:16} {n:50} " + " ".join(f"{k}={v[k]:6.2f}" for k in sorted(v)))
PY
cd $OUT && tar czf r.tgz r && rm -rf r

# ==== .gpu/s15_call8.sh
#!/usr/bin/env bash
# Session 15 call 8, the final code: small_m bench over the suite at M <= 16 (kblocks=4 fitted
# candidates in), every GPU test, `check`, then the whole-suite tune and auto between bucket edges.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 90 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
  --replays 7 --json $R/sm.json > $R/sm.log 2>&1; echo "bench small_m rc=$? $((SECONDS-s))s"
python3 .gpu/summarize.py --family 'kblocks=' $R/sm.json > $R/sum.txt 2>&1
grep -E "^geomean|MB M<=16:" $R/sum.txt
s=$SECONDS; timeout 260 $B/fp8gemm_gpu_tests > $R/gtest_all.txt 2>&1; rc=$?
echo "gtest all rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/gtest_all.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_all.txt | head -20
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
OUT=$R/acc bash .gpu/gpu_acceptance.sh $B tune-between > $R/acc_summary.txt 2>&1
tail -6 $R/acc_summary.txt
python3 .gpu/auto_regret.py --by-m --worst 8 $R/acc/auto_between.csv 2>&1 | head -24
cd $OUT && tar czf r.tgz r && rm -rf r

# ==== .gpu/s15_call9.sh
#!/usr/bin/env bash
# Session 15 call 9: the final commit (the TMA kernel and launch code moved to their own headers,
# SASS identical): every GPU test and `check`.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
s=$SECONDS; timeout 230 $B/fp8gemm_gpu_tests > $R/gtest_all.txt 2>&1; rc=$?
echo "gtest all rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/gtest_all.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_all.txt | head -20
s=$SECONDS; timeout 40 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
cd $OUT && tar czf r.tgz r && rm -rf r
