# ==== .gpu/s16_call1.sh
#!/usr/bin/env bash
# Session 16 call 1: kblocks with cp.async weights, and fitted cp.async rows not copied past
# p.rows (predicated, was zero-filled). SmallM GPU tests; then named tactics, the s15 binary (old,
# only tactics it knows) and this one (new), alternating, twice.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
xz -dk .gpu/old/fp8gemm.xz 2>/dev/null; chmod +x .gpu/old/fp8gemm
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
# shape:M -> named tactics (old = known to the s15 binary; new = cp kblocks, added for new only)
names() {  # $1 rows $2 np(8|16) $3 = old|new
  local rows=$1 np=$2 w=1; [ $rows -gt 64 ] && w=2
  python3 - $rows $np $w $3 <<'PY'
import sys
rows, np_, w, which = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
lim = 220 * 1024
def cp_st(kb): return min(32, (lim - 1024) // ((64 * w + np_) * 128 * kb))
def tma_st(kb):
  tile = (rows + 7) // 8 * 8; tail = max(0, 64 * w - tile - np_) * 128
  return min(32, (lim - 1024 - tail) // ((tile + np_) * 128 * kb))
b = f"wgmma,rows={rows},splitk=1"
old = [f"{b},stages={min(16, cp_st(1))},l2pf=0,pdl=1,wload=cp", f"{b},stages={cp_st(1)},l2pf=0,pdl=1,wload=cp",
       f"{b},stages={min(16, tma_st(4))},l2pf=0,pdl=1,kblocks=4"]
new = [f"{b},stages={cp_st(2)},l2pf=0,pdl=1,kblocks=2,wload=cp", f"{b},stages={cp_st(4)},l2pf=0,pdl=1,kblocks=4,wload=cp"]
if cp_st(4) > 4: new.append(f"{b},stages={cp_st(4) - 1},l2pf=0,pdl=1,kblocks=4,wload=cp")
print(" ".join("--add-tactic small_m:" + n for n in dict.fromkeys(old if which == "old" else old + new)))
PY
}
run() {  # $1 label $2 shape $3 M $4 rows(fitted at 1/SM) [$5 extra tactics (both binaries)]
  local np=8; [ $3 -gt 8 ] && np=16
  for r in a b; do for v in old new; do
    F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm
    timeout 40 $F bench --shape $2 --m $3 --backend small_m --tactics default --replays 9 $(names $4 $np $v) $5 \
      --json $R/${1}_m$3_${v}_$r.json > $R/${1}_m$3_${v}_$r.log 2>&1 || echo "$1 $3 $v $r rc=$?"
  done; done
}
X="--add-tactic small_m:wgmma,rows=128,splitk=3,stages=12,l2pf=0,pdl=1,wload=cp"
run nano 4480,15680 1 34 "$X"
run nano 4480,15680 16 34 "$X"
run l70o 8192,8192 1 63 "--add-tactic small_m:wgmma,rows=32,splitk=1,stages=11,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=32,splitk=1,stages=11,l2pf=0,pdl=1"
run l70o 8192,8192 16 63
run l70qkv 10240,8192 1 78 "--add-tactic small_m:wgmma,rows=32,splitk=1,stages=11,l2pf=0,pdl=1,wload=cp"
run l70qkv 10240,8192 16 78
run superqkv 4608,4096 1 35
run nano9qkv 7168,4480 1 55
# fitted cp.async at 2-4 blocks per SM (the predicate change): old vs new on their winners
F2="--add-tactic small_m:wgmma,rows=47,splitk=1,stages=8,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=71,splitk=1,stages=6,l2pf=0,pdl=1,wload=cp"
for r in a b; do for v in old new; do F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm
  timeout 40 $F bench --shape 18560,4096 --shape 28672,4096 --m 1,16 --backend small_m --tactics default --replays 9 $F2 \
    --add-tactic small_m:wgmma,rows=109,splitk=1,stages=6,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=55,splitk=1,stages=6,l2pf=0,pdl=1,wload=cp \
    --json $R/fit_${v}_$r.json > $R/fit_${v}_$r.log 2>&1 || echo "fit $v $r rc=$?"
done; done
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
  print(f"{s:11} {m:2} {n:58} " + " ".join(f"{k}={v[k]:6.2f}" for k in sorted(v)))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s16_call2.sh
#!/usr/bin/env bash
# Session 16 call 2: call 1 again with the cp.async kernel per K blocks per stage (no run-time
# dispatch) and the producer's rows computed once (CpRows); zf = the same with fitted rows past
# p.rows zero-filled (copied) instead of skipped. Binaries: s15 (old), new, zf, alternating, twice.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
for d in old alt; do xz -dk .gpu/$d/fp8gemm.xz 2>/dev/null; chmod +x .gpu/$d/fp8gemm; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
# shape:M -> named tactics (old = known to the s15 binary; new = cp kblocks, added for new only)
names() {  # $1 rows $2 np(8|16) $3 = old|new
  local rows=$1 np=$2 w=1; [ $rows -gt 64 ] && w=2
  python3 - $rows $np $w $3 <<'PY'
import sys
rows, np_, w, which = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
lim = 220 * 1024
def cp_st(kb): return min(32, (lim - 1024) // ((64 * w + np_) * 128 * kb))
def tma_st(kb):
  tile = (rows + 7) // 8 * 8; tail = max(0, 64 * w - tile - np_) * 128
  return min(32, (lim - 1024 - tail) // ((tile + np_) * 128 * kb))
b = f"wgmma,rows={rows},splitk=1"
old = [f"{b},stages={min(16, cp_st(1))},l2pf=0,pdl=1,wload=cp", f"{b},stages={cp_st(1)},l2pf=0,pdl=1,wload=cp",
       f"{b},stages={min(16, tma_st(4))},l2pf=0,pdl=1,kblocks=4"]
new = [f"{b},stages={cp_st(2)},l2pf=0,pdl=1,kblocks=2,wload=cp", f"{b},stages={cp_st(4)},l2pf=0,pdl=1,kblocks=4,wload=cp"]
if cp_st(4) > 4: new.append(f"{b},stages={cp_st(4) - 1},l2pf=0,pdl=1,kblocks=4,wload=cp")
print(" ".join("--add-tactic small_m:" + n for n in dict.fromkeys(old if which == "old" else old + new)))
PY
}
run() {  # $1 label $2 shape $3 M $4 rows(fitted at 1/SM) [$5 extra tactics (both binaries)]
  local np=8; [ $3 -gt 8 ] && np=16
  for r in a b; do for v in old new zf; do
    F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm; [ $v = zf ] && F=.gpu/alt/fp8gemm
    timeout 40 $F bench --shape $2 --m $3 --backend small_m --tactics default --replays 9 $(names $4 $np ${v/zf/new}) $5 \
      --json $R/${1}_m$3_${v}_$r.json > $R/${1}_m$3_${v}_$r.log 2>&1 || echo "$1 $3 $v $r rc=$?"
  done; done
}
X="--add-tactic small_m:wgmma,rows=128,splitk=3,stages=12,l2pf=0,pdl=1,wload=cp"
run nano 4480,15680 1 34 "$X"
run nano 4480,15680 16 34 "$X"
run l70o 8192,8192 1 63 "--add-tactic small_m:wgmma,rows=32,splitk=1,stages=11,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=32,splitk=1,stages=11,l2pf=0,pdl=1"
run l70o 8192,8192 16 63
run l70qkv 10240,8192 1 78 "--add-tactic small_m:wgmma,rows=32,splitk=1,stages=11,l2pf=0,pdl=1,wload=cp"
run superqkv 4608,4096 1 35
run nano9qkv 7168,4480 1 55 "--add-tactic small_m:wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1,wload=cp"
run l8gu 28672,4096 1 109 "--add-tactic small_m:wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=128,splitk=1,stages=6,l2pf=0,pdl=1,wload=cp"
# fitted cp.async at 2-4 blocks per SM (the predicate change): old vs new on their winners
F2="--add-tactic small_m:wgmma,rows=47,splitk=1,stages=8,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=71,splitk=1,stages=6,l2pf=0,pdl=1,wload=cp"
for r in a b; do for v in old new zf; do F=$B/fp8gemm; [ $v = old ] && F=.gpu/old/fp8gemm; [ $v = zf ] && F=.gpu/alt/fp8gemm
  timeout 40 $F bench --shape 18560,4096 --shape 28672,4096 --m 1,16 --backend small_m --tactics default --replays 9 $F2 \
    --add-tactic small_m:wgmma,rows=109,splitk=1,stages=6,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=55,splitk=1,stages=6,l2pf=0,pdl=1,wload=cp \
    --json $R/fit_${v}_$r.json > $R/fit_${v}_$r.log 2>&1 || echo "fit $v $r rc=$?"
done; done
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
  print(f"{s:11} {m:2} {n:58} " + " ".join(f"{k}={v[k]:6.2f}" for k in sorted(v)))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s16_call3.sh
#!/usr/bin/env bash
# Session 16 call 3 (56b637b): every GPU test, check, the small_m bench over the suite at M <= 16
# (cp.async kblocks candidates in), then two whole-suite tunes at M <= 32 by a binary with an
# empty default table (for the table's regeneration).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
xz -dk .gpu/empty/fp8gemm.xz 2>/dev/null; chmod +x .gpu/empty/fp8gemm
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 90 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
  --replays 7 --json $R/sm.json > $R/sm.log 2>&1; echo "bench small_m rc=$? $((SECONDS-s))s"
python3 .gpu/summarize.py --family 're:kblocks=.*wload=cp' $R/sm.json > $R/sum_cpkb.txt 2>&1
python3 .gpu/summarize.py --family 'kblocks=' $R/sm.json > $R/sum_kb.txt 2>&1
grep -E "^geomean|MB M<=16:" $R/sum_cpkb.txt
for i in 1 2; do
  s=$SECONDS; timeout 150 .gpu/empty/fp8gemm tune --model all --m 1,2,4,8,16,24,32 --run-budget-s 140 --cache $R/empty_$i.json \
    --json $R/tune_empty_$i.json > $R/tune_empty_$i.log 2>&1; echo "tune empty $i rc=$? $((SECONDS-s))s $(tail -1 $R/tune_empty_$i.log)"
done
s=$SECONDS; timeout 260 $B/fp8gemm_gpu_tests > $R/gtest_all.txt 2>&1; rc=$?
echo "gtest all rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/gtest_all.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_all.txt | head -20
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s16_call4.sh
#!/usr/bin/env bash
# Session 16 call 4 (7e44e5a, the regenerated default table): the tune/API GPU tests, untuned auto
# against every tactic at the suite's M <= 256 and between bucket edges, the whole-suite tune and
# auto between edges, and the small_m bench again.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 60 $B/fp8gemm_gpu_tests --gtest_filter='TuneGpu.*:Api*' > $R/t_1.txt 2>&1
echo "tune/api rc=$? $(grep -E '^\[  (PASSED|FAILED)' $R/t_1.txt | tr '\n' ' ')"
s=$SECONDS; timeout 110 $B/fp8gemm bench --model all --m 1,2,4,8,16,24,32,48,64,96,128,192,256 --tactics all --csv $R/untuned_small.csv > $R/untuned_small.log 2>&1; echo "untuned small rc=$? $((SECONDS-s))s"
s=$SECONDS; timeout 80 $B/fp8gemm bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all --csv $R/untuned_between.csv > $R/untuned_between.log 2>&1; echo "untuned between rc=$? $((SECONDS-s))s"
for f in untuned_small untuned_between; do echo "== $f"; python3 .gpu/auto_regret.py --by-m --worst 4 $R/$f.csv 2>&1 | head -24; done
OUT=$R/acc bash .gpu/gpu_acceptance.sh $B tune-between > $R/acc_summary.txt 2>&1
tail -6 $R/acc_summary.txt
python3 .gpu/auto_regret.py --by-m --worst 8 $R/acc/auto_between.csv 2>&1 | head -24
s=$SECONDS; timeout 90 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
  --replays 7 --json $R/sm.json > $R/sm.log 2>&1; echo "bench small_m rc=$? $((SECONDS-s))s"
python3 .gpu/summarize.py --family 're:kblocks=.*wload=cp' $R/sm.json > $R/sum_cpkb.txt 2>&1
grep -E "^geomean|MB M<=16" $R/sum_cpkb.txt
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s16_call5.sh
#!/usr/bin/env bash
# Session 16 call 5 (9577e74, rowstride=2): SmallM GPU tests; nano9b.down (k % 128 == 64) named with
# and without rowstride=2, and two controls whose K is a multiple of 128 (15616, 15744); the cp.async
# one-K-block tactics A/B against the call-2 zf build (alt); the small_m bench over the suite.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
xz -dk .gpu/alt/fp8gemm.xz 2>/dev/null; chmod +x .gpu/alt/fp8gemm
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
T=""; TR=""
for n in rows=34,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=4 rows=34,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4 \
         rows=34,splitk=1,stages=4,l2pf=0,pdl=1,kblocks=4 rows=128,splitk=3,stages=12,l2pf=0,pdl=1 \
         rows=64,splitk=3,stages=12,l2pf=0,pdl=1 rows=34,splitk=1,stages=12,l2pf=0,pdl=1,kblocks=2; do
  T="$T --add-tactic small_m:wgmma,$n,wload=cp"; TR="$TR --add-tactic small_m:wgmma,$n,rowstride=2,wload=cp"; done
T="$T --add-tactic small_m:wgmma,rows=34,splitk=1,stages=9,l2pf=0,pdl=1,kblocks=4"
for r in a b; do
  timeout 60 $B/fp8gemm bench --shape 4480,15680 --m 1,16 --backend small_m --tactics default --replays 9 $T $TR \
    --json $R/nano_$r.json > $R/nano_$r.log 2>&1 || echo "nano $r rc=$?"
  timeout 60 $B/fp8gemm bench --shape 4480,15616 --shape 4480,15744 --m 1,16 --backend small_m --tactics default \
    --replays 9 $T --json $R/ctrl_$r.json > $R/ctrl_$r.log 2>&1 || echo "ctrl $r rc=$?"
done
A="--add-tactic small_m:wgmma,rows=71,splitk=1,stages=6,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=47,splitk=1,stages=8,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=32,splitk=1,stages=7,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=63,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4,wload=cp"
for r in a b; do for v in zf new; do F=$B/fp8gemm; [ $v = zf ] && F=.gpu/alt/fp8gemm
  timeout 60 $F bench --shape 18560,4096 --shape 8192,8192 --m 1,16 --backend small_m --tactics default --replays 9 $A \
    --json $R/ab_${v}_$r.json > $R/ab_${v}_$r.log 2>&1 || echo "ab $v $r rc=$?"
done; done
python3 - $R <<'PY'
import json, sys, glob, collections, os
t = collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
  lab = os.path.basename(f)[:-5]; parts = lab.split("_"); v = "".join(parts[-2:]) if parts[0] == "ab" else parts[-1]
  for p in json.load(open(f))["points"]:
    for x in p["timings"]:
      if len(x["samples_us"]) > 1 or not x["ok"]:
        t[(f'{p["N"]}x{p["K"]}', p["M"], x["tactic"][8:])][v] = x["median_us"] if x["ok"] else -1
for (s, m, n), v in sorted(t.items()):
  print(f"{s:11} {m:2} {n:66} " + " ".join(f"{k}={v[k]:6.2f}" for k in sorted(v)))
PY
s=$SECONDS; timeout 90 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
  --replays 7 --json $R/sm.json > $R/sm.log 2>&1; echo "bench small_m rc=$? $((SECONDS-s))s"
python3 .gpu/summarize.py --family 'rowstride=' $R/sm.json > $R/sum_rs.txt 2>&1
grep -E "^geomean|MB M<=16" $R/sum_rs.txt; grep -E "^nano9b.down" $R/sum_rs.txt
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s16_call6.sh
#!/usr/bin/env bash
# Session 16 call 6 (the final code, kernels identical in SASS to 56b637b's): every GPU test, check,
# and call 5's A/B of cp.async tactics against the call-2 zf build.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
xz -dk .gpu/alt/fp8gemm.xz 2>/dev/null; chmod +x .gpu/alt/fp8gemm
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
A="--add-tactic small_m:wgmma,rows=71,splitk=1,stages=6,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=47,splitk=1,stages=8,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=64,splitk=1,stages=12,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=32,splitk=1,stages=7,l2pf=0,pdl=1,wload=cp --add-tactic small_m:wgmma,rows=63,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4,wload=cp --add-tactic small_m:wgmma,rows=128,splitk=3,stages=12,l2pf=0,pdl=1,wload=cp"
for r in a b; do for v in zf new; do F=$B/fp8gemm; [ $v = zf ] && F=.gpu/alt/fp8gemm
  timeout 60 $F bench --shape 18560,4096 --shape 8192,8192 --shape 4480,15680 --m 1,16 --backend small_m --tactics default --replays 9 $A \
    --json $R/ab_${v}_$r.json > $R/ab_${v}_$r.log 2>&1 || echo "ab $v $r rc=$?"
done; done
python3 - $R <<'PY'
import json, sys, glob, collections, os
t = collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] + "/ab_*.json")):
  parts = os.path.basename(f)[:-5].split("_"); v = parts[1] + parts[2]
  for p in json.load(open(f))["points"]:
    for x in p["timings"]:
      if len(x["samples_us"]) > 1 and "wload=cp" in x["tactic"]:
        t[(f'{p["N"]}x{p["K"]}', p["M"], x["tactic"][8:])][v] = x["median_us"]
for (s, m, n), v in sorted(t.items()):
  print(f"{s:11} {m:2} {n:62} " + " ".join(f"{k}={v[k]:6.2f}" for k in sorted(v)))
PY
s=$SECONDS; timeout 260 $B/fp8gemm_gpu_tests > $R/gtest_all.txt 2>&1; rc=$?
echo "gtest all rc=$rc $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/gtest_all.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_all.txt | head -20
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== .gpu/s16_call7.sh
#!/usr/bin/env bash
# Session 16 call 7: cp.async weight copies without the L2 evict-first hint (bin: its SASS stage loop
# 46 instructions against 57, no R2UR of the policy per copy) against the final code (alt):
# SmallM GPU tests and check of the variant; named cp.async tactics alternating, twice; the
# variant's small_m bench over the suite.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/r; mkdir -p $R
xz -dk .gpu/alt/fp8gemm.xz 2>/dev/null; chmod +x .gpu/alt/fp8gemm
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 150 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/gtest_smallm.txt 2>&1
echo "gtest SmallM rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gtest_smallm.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gtest_smallm.txt | head -20
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet --backend small_m > $R/check.txt 2>&1; echo "check small_m rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
T=""
for n in rows=71,splitk=1,stages=6 rows=47,splitk=1,stages=8 rows=32,splitk=1,stages=7 rows=63,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4 \
         rows=64,splitk=1,stages=12 rows=128,splitk=3,stages=12 rows=34,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=4 \
         rows=78,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=2 rows=64,splitk=2,stages=8 rows=32,splitk=1,stages=11 rows=109,splitk=1,stages=6; do
  case $n in *kblocks*) T="$T --add-tactic small_m:wgmma,$n,wload=cp";; *) T="$T --add-tactic small_m:wgmma,$n,l2pf=0,pdl=1,wload=cp";; esac; done
for r in a b; do for v in cur nohint; do F=$B/fp8gemm; [ $v = cur ] && F=.gpu/alt/fp8gemm
  timeout 90 $F bench --shape 18560,4096 --shape 8192,8192 --shape 4480,15680 --shape 10240,8192 --shape 4096,4096 --shape 28672,4096 \
    --m 1,16 --backend small_m --tactics default --replays 9 $T --json $R/ab_${v}_$r.json > $R/ab_${v}_$r.log 2>&1 || echo "ab $v $r rc=$?"
done; done
python3 - $R <<'PY'
import json, sys, glob, collections, os, math
t = collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] + "/ab_*.json")):
  parts = os.path.basename(f)[:-5].split("_"); v = parts[1]
  for p in json.load(open(f))["points"]:
    for x in p["timings"]:
      if len(x["samples_us"]) > 1 and "wload=cp" in x["tactic"]:
        t[(f'{p["N"]}x{p["K"]}', p["M"], x["tactic"][8:])].setdefault(v, []).append(x["median_us"])
r = []
for (s, m, n), v in sorted(t.items()):
  if "cur" in v and "nohint" in v:
    a, b = sum(v["nohint"]) / len(v["nohint"]), sum(v["cur"]) / len(v["cur"]); r.append(a / b)
    print(f"{s:11} {m:2} {n:58} cur={b:6.2f} nohint={a:6.2f} {a/b:.3f}")
print(f"nohint/cur geomean {math.exp(sum(map(math.log, r)) / len(r)):.4f} over {len(r)}, min {min(r):.3f} max {max(r):.3f}")
PY
s=$SECONDS; timeout 90 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --max-finalists 24 \
  --replays 7 --json $R/sm.json > $R/sm.log 2>&1; echo "bench small_m rc=$? $((SECONDS-s))s"
python3 .gpu/summarize.py --family 're:kblocks=.*wload=cp' $R/sm.json > $R/sum_cpkb.txt 2>&1
grep -E "^geomean x \(best small_m\)|MB M<=16:" $R/sum_cpkb.txt
cd $OUT && tar czf r.tgz r && rm -rf r
