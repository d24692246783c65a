# ==== .gpu/s17_call1.sh
#!/usr/bin/env bash
# Session 17 call 1: two accumulator chains in the wgmma consumers (new) against ff5dd71 (old):
# SmallM GPU tests on new; named tactics on both binaries, alternating, twice.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
xz -dk .gpu/old/fp8gemm.xz 2>/dev/null; chmod +x .gpu/old/fp8gemm
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
t() { for x in "$@"; do printf -- "--add-tactic small_m:wgmma,%s " "$x"; done; }
run() {  # $1 label $2 shape $3 M list, rest: tactics
  local lab=$1 shape=$2 ms=$3; shift 3
  for r in a b; do for v in old new; do
    F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm
    timeout 60 $F bench --shape $shape --m $ms --backend small_m --tactics default --replays 9 $(t "$@") \
      --json $R/${lab}_${v}_$r.json > $R/${lab}_${v}_$r.log 2>&1 || echo "$lab $v $r rc=$?"
  done; done
}
run nano9down 4480,15680 1,16 rows=34,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4,wload=cp rows=34,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=4,wload=cp \
  rows=34,splitk=1,stages=9,l2pf=0,pdl=1,kblocks=4 rows=128,splitk=3,stages=12,l2pf=0,pdl=1,wload=cp rows=34,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp
run nemoH8bdown 4096,21504 1,16 rows=32,splitk=1,stages=16,l2pf=0,pdl=1 rows=32,splitk=1,stages=16,l2pf=0,pdl=1,wload=cp
run l70down 8192,28672 1 rows=63,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4,wload=cp rows=32,splitk=1,stages=11,l2pf=0,pdl=1,wload=cp
run l8o 4096,4096 1,16 rows=32,splitk=1,stages=11,l2pf=0,pdl=1 rows=32,splitk=1,stages=9,l2pf=0,pdl=2,wload=cp rows=32,splitk=1,stages=6,l2pf=0,pdl=2
run superqkv 4608,4096 1,16 rows=35,splitk=1,stages=9,l2pf=0,pdl=1,early=4,kblocks=4 rows=32,splitk=1,stages=6,l2pf=0,pdl=2
run l70qkv 10240,8192 1,16 rows=78,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2,wload=cp rows=39,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp
run inproj 18560,4096 16 rows=71,splitk=1,stages=6,l2pf=0,pdl=1,wload=cp rows=71,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2,wload=cp
run nano9up 15680,4480 1 rows=119,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2,wload=cp rows=64,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp
python3 - $R <<'PY'
import json, sys, glob, collections, os
t = collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
  lab = os.path.basename(f)[:-5]; parts = lab.split("_"); v = parts[-2] + parts[-1]
  for p in json.load(open(f))["points"]:
    for x in p["timings"]:
      if len(x["samples_us"]) > 1 or not x["ok"]:
        t[(f'{p["N"]}x{p["K"]}', p["M"], x["tactic"][8:])][v] = x["median_us"] if x["ok"] else -1
for (s, m, n), v in sorted(t.items()):
  o = min(v.get("olda", 1e9), v.get("oldb", 1e9)); nw = min(v.get("newa", 1e9), v.get("newb", 1e9))
  print(f"{s:11} {m:2} {n[6:70]:64} " + " ".join(f"{k}={v[k]:6.2f}" for k in sorted(v)) + f"  new/old={nw/o:.3f}")
PY
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s17_call2.sh
#!/usr/bin/env bash
# Session 17 call 2: what bounds nano9b.down's fitted blocks. Binaries: old (ff5dd71), new (two
# accumulator chains), diag1 (new with half the wgmma: wrong output), diag2 (no wgmma at all).
# Then the small_m suite bench at M <= 16, old and new, alternating.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
for d in old diag1 diag2; do xz -dk .gpu/$d/fp8gemm.xz 2>/dev/null; chmod +x .gpu/$d/fp8gemm; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t() { for x in "$@"; do printf -- "--add-tactic small_m:wgmma,%s " "$x"; done; }
run() {  # $1 label $2 shape $3 M list, rest: tactics
  local lab=$1 shape=$2 ms=$3; shift 3
  for r in a; do for v in old new diag1 diag2; do
    F=.gpu/$v/fp8gemm; [ $v = new ] && F=$B/fp8gemm
    timeout 60 $F bench --shape $shape --m $ms --backend small_m --tactics default --replays 9 --no-verify $(t "$@") \
      --json $R/${lab}_${v}_$r.json > $R/${lab}_${v}_$r.log 2>&1 || echo "$lab $v $r rc=$?"
  done; done
}
run nano9down 4480,15680 1,16 rows=34,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4,wload=cp rows=34,splitk=1,stages=9,l2pf=0,pdl=1,kblocks=4 \
  rows=34,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp rows=64,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp
run nano9up 15680,4480 1 rows=119,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2,wload=cp rows=64,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp
run nemoH8bdown 4096,21504 1 rows=32,splitk=1,stages=16,l2pf=0,pdl=1 rows=32,splitk=1,stages=16,l2pf=0,pdl=1,wload=cp
run l8o 4096,4096 1 rows=32,splitk=1,stages=11,l2pf=0,pdl=1 rows=32,splitk=1,stages=9,l2pf=0,pdl=2,wload=cp
python3 - $R <<'PY' > $R/diag.txt
import json, sys, glob, collections, os
t = collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] + "/*_a.json")):
  lab = os.path.basename(f)[:-5]; parts = lab.split("_"); v = parts[-2]
  for p in json.load(open(f))["points"]:
    for x in p["timings"]:
      if len(x["samples_us"]) > 1 or not x["ok"]:
        t[(f'{p["N"]}x{p["K"]}', p["M"], x["tactic"][8:])][v] = x["median_us"] if x["ok"] else -1
for (s, m, n), v in sorted(t.items()):
  if n.startswith("lt:"): continue
  print(f"{s:11} {m:2} {n[6:70]:60} " + " ".join(f"{k}={v.get(k, 0):6.2f}" for k in ("old", "new", "diag1", "diag2")))
PY
cat $R/diag.txt
for r in a b; do for v in old new; do
  F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm
  s=$SECONDS; timeout 90 $F bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
    --replays 7 --json $R/sm_${v}_$r.json > $R/sm_${v}_$r.log 2>&1; echo "bench small_m $v $r rc=$? $((SECONDS-s))s"
done; done
python3 .gpu/ab_cmp.py $R/sm_old_a.json,$R/sm_old_b.json $R/sm_new_a.json,$R/sm_new_b.json > $R/ab.txt 2>&1; tail -25 $R/ab.txt
for v in old new; do python3 .gpu/summarize.py --family 're:kblocks' $R/sm_${v}_a.json > $R/sum_$v.txt 2>&1; echo $v; grep -E "^geomean|MB M<=16:" $R/sum_$v.txt; done
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s17_call4.sh
#!/usr/bin/env bash
# Session 17 call 4: fitted rows with split-K at one block per SM for the few-row shapes
# (nano9b.down 68 rows x 2 K splits, 102 x 3; nemotron3super.qkv 70 x 2) against their best.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t() { for x in "$@"; do printf -- "--add-tactic small_m:wgmma,%s " "$x"; done; }
run() {  # $1 label $2 shape $3 M list, rest: tactics
  local lab=$1 shape=$2 ms=$3; shift 3
  for r in a b; do
    timeout 60 $B/fp8gemm bench --shape $shape --m $ms --backend small_m --tactics default --replays 9 $(t "$@") \
      --json $R/${lab}_$r.json > $R/${lab}_$r.log 2>&1 || echo "$lab $r rc=$?"
  done
  grep -iE "cannot|error|invalid" $R/${lab}_a.log | head -5
}
run nano9down 4480,15680 1,16 rows=34,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=4,wload=cp rows=34,splitk=1,stages=9,l2pf=0,pdl=1,kblocks=4 \
  rows=68,splitk=2,stages=6,l2pf=0,pdl=1,kblocks=2,wload=cp rows=68,splitk=2,stages=5,l2pf=0,pdl=1,kblocks=2,wload=cp \
  rows=68,splitk=2,stages=8,l2pf=0,pdl=1,kblocks=2 rows=68,splitk=2,stages=12,l2pf=0,pdl=1,wload=cp \
  rows=102,splitk=3,stages=6,l2pf=0,pdl=1,kblocks=2,wload=cp rows=102,splitk=3,stages=12,l2pf=0,pdl=1,wload=cp \
  rows=68,splitk=2,stages=6,l2pf=0,pdl=2,kblocks=2,wload=cp
run superqkv 4608,4096 1,16 rows=35,splitk=1,stages=9,l2pf=0,pdl=1,early=4,kblocks=4 rows=32,splitk=1,stages=6,l2pf=0,pdl=2 \
  rows=70,splitk=2,stages=6,l2pf=0,pdl=1,kblocks=2,wload=cp rows=70,splitk=2,stages=8,l2pf=0,pdl=1,kblocks=2 \
  rows=70,splitk=2,stages=12,l2pf=0,pdl=1,wload=cp rows=70,splitk=2,stages=6,l2pf=0,pdl=2,kblocks=2,wload=cp
python3 - $R <<'PY'
import json, sys, glob, collections, os
t = collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
  v = os.path.basename(f)[:-5].split("_")[-1]
  for p in json.load(open(f))["points"]:
    for x in p["timings"]:
      if len(x["samples_us"]) > 1 or not x["ok"]:
        t[(f'{p["N"]}x{p["K"]}', p["M"], x["tactic"][8:])][v] = x["median_us"] if x["ok"] else -1
for (s, m, n), v in sorted(t.items()):
  fl = int(s.split("x")[0]) * int(s.split("x")[1]) / 4.5e12 * 1e6
  b = min(x for x in v.values() if x > 0) if any(x > 0 for x in v.values()) else 0
  print(f"{s:11} {m:2} {n[6:72]:66} " + " ".join(f"{k}={v[k]:6.2f}" for k in sorted(v)) + (f"  hbm={fl/b:.3f}" if b else ""))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s17_call5.sh
#!/usr/bin/env bash
# Session 17 call 5 (final code: two accumulator chains, retime in noise): every GPU test,
# `check`, the small_m bench over the suite at M <= 16, untuned auto against every tactic at the
# suite's M <= 256 and between bucket edges.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 280 $B/fp8gemm_gpu_tests > $R/gtest_all.txt 2>&1; rc=$?
echo "gtest all rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/gtest_all.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_all.txt | head -20
s=$SECONDS; timeout 80 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
s=$SECONDS; timeout 60 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
  --replays 7 --json $R/sm.json > $R/sm.log 2>&1; echo "bench small_m rc=$? $((SECONDS-s))s"
python3 .gpu/summarize.py --family 're:kblocks' $R/sm.json > $R/sum.txt 2>&1; grep -E "^geomean x \(best small_m\)|MB M<=16:" $R/sum.txt
s=$SECONDS; timeout 110 $B/fp8gemm bench --model all --m 1,2,4,8,16,24,32,48,64,96,128,192,256 --tactics all --csv $R/untuned_small.csv > $R/untuned_small.log 2>&1; echo "untuned small rc=$? $((SECONDS-s))s"
s=$SECONDS; timeout 80 $B/fp8gemm bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all --csv $R/untuned_between.csv > $R/untuned_between.log 2>&1; echo "untuned between rc=$? $((SECONDS-s))s"
for f in untuned_small untuned_between; do echo "== $f"; python3 .gpu/auto_regret.py --worst 3 $R/$f.csv | sed -n '1,6p;/worst/,$p'; done
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== call 3: bash scripts/gpu_tune_ab.sh .gpu/bin "" "--no-retime-in-noise"
# ==== .gpu/s17_call6.sh
#!/usr/bin/env bash
# Session 17 call 6: kblocks=8 (TMA weights) for fitted rows of one warpgroup. SmallM GPU tests;
# named tactics, old (07bea98) and new, alternating, twice.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
xz -dk .gpu/old/fp8gemm.xz 2>/dev/null; chmod +x .gpu/old/fp8gemm
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
t() { for x in "$@"; do printf -- "--add-tactic small_m:wgmma,%s " "$x"; done; }
run() {  # $1 label $2 shape $3 M list, rest: tactics (kblocks=8 ones only on new)
  local lab=$1 shape=$2 ms=$3; shift 3
  for r in a b; do for v in old new; do
    F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm
    local list=(); for x in "$@"; do [ $v = old ] && [[ $x == *kblocks=8* ]] && continue; list+=("$x"); done
    timeout 60 $F bench --shape $shape --m $ms --backend small_m --tactics default --replays 9 $(t "${list[@]}") \
      --json $R/${lab}_${v}_$r.json > $R/${lab}_${v}_$r.log 2>&1 || echo "$lab $v $r rc=$?"
  done; done
  grep -iE "cannot run" $R/${lab}_new_a.log | head -3
}
run nano9down 4480,15680 1,2,8,16 rows=34,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=4,wload=cp rows=34,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4,wload=cp \
  rows=34,splitk=1,stages=9,l2pf=0,pdl=1,kblocks=4 rows=34,splitk=1,stages=4,l2pf=0,pdl=1,kblocks=8 rows=34,splitk=1,stages=3,l2pf=0,pdl=1,kblocks=8 \
  rows=34,splitk=1,stages=4,l2pf=0,pdl=1,early=2,kblocks=8
run superqkv 4608,4096 1,8,16 rows=35,splitk=1,stages=9,l2pf=0,pdl=1,early=4,kblocks=4 rows=32,splitk=1,stages=6,l2pf=0,pdl=2 \
  rows=35,splitk=1,stages=4,l2pf=0,pdl=1,kblocks=8 rows=35,splitk=1,stages=4,l2pf=0,pdl=1,early=2,kblocks=8 rows=35,splitk=1,stages=4,l2pf=0,pdl=2,early=2,kblocks=8 \
  rows=35,splitk=1,stages=3,l2pf=0,pdl=1,early=1,kblocks=8
run shdown 4096,5376 1,16 rows=32,splitk=1,stages=11,l2pf=0,pdl=1 rows=32,splitk=1,stages=7,l2pf=0,pdl=2 \
  rows=32,splitk=1,stages=9,l2pf=0,pdl=2,wload=cp
run l70qkv_inproj 10240,8192 16 rows=78,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2,wload=cp rows=39,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp \
  rows=39,splitk=1,stages=4,l2pf=0,pdl=1,kblocks=8
run nemoH8bdown 4096,21504 2 rows=32,splitk=1,stages=16,l2pf=0,pdl=1 rows=32,splitk=1,stages=16,l2pf=0,pdl=1,wload=cp
python3 - $R <<'PY'
import json, sys, glob, collections, os
t = collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
  lab = os.path.basename(f)[:-5]; parts = lab.split("_"); v = parts[-2] + parts[-1]
  for p in json.load(open(f))["points"]:
    for x in p["timings"]:
      if len(x["samples_us"]) > 1 or not x["ok"]:
        t[(f'{p["N"]}x{p["K"]}', p["M"], x["tactic"][8:])][v] = x["median_us"] if x["ok"] else -1
for (s, m, n), v in sorted(t.items()):
  if n.startswith("lt:"): continue
  fl = int(s.split("x")[0]) * int(s.split("x")[1]) / 4.5e12 * 1e6
  nw = min([v.get(k, 1e9) for k in ("newa", "newb") if v.get(k, 0) > 0] or [0])
  print(f"{s:11} {m:2} {n[6:72]:64} " + " ".join(f"{k}={v[k]:6.2f}" for k in sorted(v)) + (f"  hbm(new)={fl/nw:.3f}" if nw else ""))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== call 7: OUT=$OUT/acc bash scripts/gpu_acceptance.sh .gpu/bin tune (then auto_regret.py --by-m on auto_suite.csv and auto_between.csv)
