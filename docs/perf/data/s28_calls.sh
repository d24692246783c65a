# ==== s28_call1.sh
#!/usr/bin/env bash
# Session 28 call 1: rows=32 with two K pairs a stage (kblocks=2): the SmallM GPU tests, then named
# tactics beside every listed small_m tactic on the 16-32 MB weights that miss 0.70 and two more,
# M = 1, 16.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS
timeout 240 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.*' > $R/smallm_tests.log 2>&1
echo "SmallM tests rc=$? $((SECONDS-s))s"; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" $R/smallm_tests.log | head -12
T=()
for st in 3 4 5 6 8 10; do for w in "" ",wload=cp"; do T+=(--add-tactic "small_m:wgmma,rows=32,splitk=1,stages=$st,l2pf=0,pdl=1,kblocks=2$w"); done; done
for st in 4 5; do for w in "" ",wload=cp"; do T+=(--add-tactic "small_m:wgmma,rows=32,splitk=1,stages=$st,l2pf=0,pdl=2,kblocks=2$w"); done; done
s=$SECONDS
timeout 330 $B/fp8gemm bench --shape 4096,4096 --shape 4608,4096 --shape 4096,5376 --shape 6144,4096 --shape 4096,8192 --shape 4096,21504 \
  --m 1,16 --backend small_m --tactics all --max-finalists 40 --replays 7 --no-confirm-auto "${T[@]}" \
  --csv $R/bench_named.csv --json $R/bench_named.json > $R/bench_named.log 2>&1
echo "bench rc=$? $((SECONDS-s))s"
python3 - $R/bench_named.json <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
for p in d['points']:
    ts=[t for t in p['timings'] if t.get('median_us')]
    ts.sort(key=lambda t: t['median_us'])
    kp=[t for t in ts if 'rows=32' in t['tactic'] and 'kblocks=2' in t['tactic']]
    old=[t for t in ts if not ('rows=32' in t['tactic'] and 'kblocks=2' in t['tactic']) and t['tactic'].startswith('small_m')]
    fl=(p['N']*p['K']+p['M']*p['K']+2*p['M']*p['N'])/4.5e6
    b_old=old[0]['median_us'] if old else float('nan'); b_kp=kp[0]['median_us'] if kp else float('nan')
    print('%5d %5d M=%-2d floor %.2f  best listed %.2f (%.3f)  best kblocks=2 K pairs %.2f (%.3f)  %s' % (
        p['N'],p['K'],p['M'],fl,b_old,fl/b_old,b_kp,fl/b_kp, kp[0]['tactic'][8:] if kp else '-'))
    for t in ts[:5]: print('      %.2f %s' % (t['median_us'], t['tactic'][:100]))
PY
gzip $R/bench_named.json
# ==== s28_call2.sh
#!/usr/bin/env bash
# Session 28 call 2: every GPU test and `check` on the K-pairs-two-a-stage build with its
# candidates; the DESIGN suite at M <= 16 with every tactic of every backend (issue 4's numbers);
# named early=E twins of the two-pair tactics at llama8b.o and nemotron3super.qkv.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
OUT=$R/acc bash scripts/gpu_acceptance.sh $B tests > $R/acc_summary.txt 2>&1
tail -5 $R/acc_summary.txt | cut -c1-160
grep -E "^\[  FAILED" $R/acc/logs/gpu_tests.log | head -8
s=$SECONDS
timeout 200 $B/fp8gemm bench --model all --m 1,2,4,8,16 --tactics all --csv $R/suite_m16.csv --json $R/suite_m16.json > $R/suite_m16.log 2>&1
echo "suite bench rc=$? $((SECONDS-s))s"
python3 src/backends/small_m/bench/device/summarize.py --family 're:rows=32,.*kblocks=2' $R/suite_m16.json > $R/small_m_summary.txt 2>&1
grep -E "^geomean|MB M<=16:|^  M=(1|2|4|8|16):" $R/small_m_summary.txt | cut -c1-170
python3 scripts/auto_regret.py --by-m --worst 4 $R/suite_m16.csv 2>&1 | tail -12 | cut -c1-160
T=()
for st in 8 10; do for e in 2 4 6; do T+=(--add-tactic "small_m:wgmma,rows=32,splitk=1,stages=$st,l2pf=0,pdl=1,early=$e,kblocks=2"); done; done
timeout 60 $B/fp8gemm bench --shape 4096,4096 --shape 4608,4096 --m 1,16 --backend small_m --tactics all --max-finalists 40 \
  --replays 7 --no-confirm-auto "${T[@]}" --json $R/early.json > $R/early.log 2>&1
echo "early bench rc=$?"
python3 - $R/early.json <<'PY'
import json,sys
for p in json.load(open(sys.argv[1]))['points']:
    ts=sorted([t for t in p['timings'] if t.get('ok') and t.get('median_us')], key=lambda t: t['median_us'])
    print(p['N'],p['K'],p['M'])
    for t in ts[:4]: print('   %.2f %s'%(t['median_us'], t['tactic'][8:100]))
PY
cd $R && gzip -f suite_m16.json early.json && tar czf acc.tgz acc && rm -rf acc
# ==== s28_call3.sh
#!/usr/bin/env bash
# Session 28 call 3: the acceptance's tune-between on 44dc384 (K pairs two a stage offered where
# K >= 8192: does the whole-suite tune stay under 2 minutes, does auto hold between the edges?),
# then named fitted-row tactics at llama8b.o and nemotron3super.qkv (two K blocks a stage at two
# blocks per SM, early=E), M = 1, 16.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.log 2>&1; echo "check rc=$? $((SECONDS-s))s: $(tail -1 $R/check.log)"
OUT=$R/acc bash scripts/gpu_acceptance.sh $B tune-between > $R/acc_summary.txt 2>&1
tail -6 $R/acc_summary.txt | cut -c1-160
grep -E "tune took|whole run|total" $R/acc/logs/tune.log | tail -3
python3 scripts/auto_regret.py --by-m --worst 8 $R/acc/auto_between.csv 2>&1 | tail -22 | cut -c1-170
T=()
for r in 33 35; do
  for st in 8 9; do T+=(--add-tactic "small_m:wgmma,rows=$r,splitk=1,stages=$st,l2pf=0,pdl=1,kblocks=2"); done
  T+=(--add-tactic "small_m:wgmma,rows=$r,splitk=1,stages=4,l2pf=0,pdl=1,kblocks=4")
  for e in 2 4; do T+=(--add-tactic "small_m:wgmma,rows=$r,splitk=1,stages=8,l2pf=0,pdl=1,early=$e,kblocks=2"); done
done
timeout 60 $B/fp8gemm bench --shape 4096,4096 --shape 4608,4096 --m 1,16 --backend small_m --tactics all --max-finalists 40 \
  --replays 7 --no-confirm-auto "${T[@]}" --json $R/fitted.json > $R/fitted.log 2>&1
echo "fitted bench rc=$?"
python3 - $R/fitted.json <<'PY'
import json,sys
for p in json.load(open(sys.argv[1]))['points']:
    ts=sorted([t for t in p['timings'] if t.get('ok') and t.get('median_us')], key=lambda t: t['median_us'])
    print(p['N'],p['K'],p['M'])
    for t in ts[:5]: print('   %.2f %s'%(t['median_us'], t['tactic'][8:100]))
PY
cd $R && gzip -f fitted.json && tar czf acc.tgz acc && rm -rf acc
# ==== s28_call4.sh
#!/usr/bin/env bash
# Session 28 call 4 (the fitted rows' two-K-block candidates on <= 40 MB): `check`, the DESIGN
# suite at M <= 16 with every tactic of every backend (issue 4's numbers), then the acceptance's
# tune-between (issue 5).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.log 2>&1; echo "check rc=$? $((SECONDS-s))s: $(tail -1 $R/check.log)"
s=$SECONDS
timeout 200 $B/fp8gemm bench --model all --m 1,2,4,8,16 --tactics all --csv $R/suite_m16.csv --json $R/suite_m16.json > $R/suite_m16.log 2>&1
echo "suite bench rc=$? $((SECONDS-s))s"
python3 src/backends/small_m/bench/device/summarize.py --family 're:kblocks=2' $R/suite_m16.json > $R/small_m_summary.txt 2>&1
grep -E "^geomean|MB M<=16:|^  M=(1|2|4|8|16):" $R/small_m_summary.txt | cut -c1-170
OUT=$R/acc bash scripts/gpu_acceptance.sh $B tune-between > $R/acc_summary.txt 2>&1
tail -5 $R/acc_summary.txt | cut -c1-160
python3 scripts/auto_regret.py --by-m --worst 8 $R/acc/auto_between.csv 2>&1 | tail -22 | cut -c1-170
cd $R && gzip -f suite_m16.json && tar czf acc.tgz acc && rm -rf acc
# ==== s28_call5.sh
#!/usr/bin/env bash
# Session 28 call 5 (0aabafa: the fitted rows' two-K-block candidates): every GPU test; then named two-K-block fitted tactics
# at two blocks per SM on weights > 40 MB, where they are not offered (nano9b.down 34 rows,
# llama70b.o 63, llama70b.qkv 78), M = 1, 16, beside every listed small_m tactic.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
s=$SECONDS
timeout 240 $B/fp8gemm_gpu_tests --gtest_brief=1 > $R/gpu_tests.log 2>&1
echo "GPU tests rc=$? $((SECONDS-s))s"; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" $R/gpu_tests.log | head -8
T=()
for r in 34 63 78; do for st in 5 6 8 9; do for e in 0 4; do
  n="small_m:wgmma,rows=$r,splitk=1,stages=$st,l2pf=0,pdl=1"; [ $e -gt 0 ] && n="$n,early=$e"; T+=(--add-tactic "$n,kblocks=2")
done; done; done
timeout 120 $B/fp8gemm bench --shape 4480,15680 --shape 8192,8192 --shape 10240,8192 --m 1,16 --backend small_m --tactics all \
  --max-finalists 40 --replays 7 --no-confirm-auto "${T[@]}" --json $R/big.json > $R/big.log 2>&1
echo "named bench rc=$?"
python3 - $R/big.json <<'PY'
import json,sys
for p in json.load(open(sys.argv[1]))['points']:
    ts=sorted([t for t in p['timings'] if t.get('ok') and t.get('median_us')], key=lambda t: t['median_us'])
    fl=(p['N']*p['K']+p['M']*p['K']+2*p['M']*p['N'])/4.5e6
    print(p['N'],p['K'],p['M'],'floor %.2f'%fl)
    for t in ts[:4]: print('   %.2f (%.3f) %s'%(t['median_us'], fl/t['median_us'], t['tactic'][8:100]))
PY
gzip -f $R/big.json
