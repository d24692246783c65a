# ==== .gpu-s31/call1.sh
#!/usr/bin/env bash
# Session 31 call 1: K rotation (FP8GEMM_SMALL_M_KROT=1: each block starts its K walk at its own
# offset) A/B over the suite at M <= 16, small_m only, alternating off/on twice; the SmallM GPU
# tests with the rotation on; named K-pair / fitted tactics with l2pf (L2 prefetch of the rest of
# the block's K range before the wait) at llama8b.o and nemotron3super.qkv.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS
FP8GEMM_SMALL_M_KROT=1 timeout 200 $B/fp8gemm_gpu_tests --gtest_filter='SmallM*' --gtest_brief=1 > $R/smallm_tests_krot.log 2>&1
echo "SmallM tests (krot=1) rc=$? $((SECONDS-s))s"; grep -E "PASSED|FAILED" $R/smallm_tests_krot.log | head -8
for run in 0a 1a 0b 1b; do
  s=$SECONDS
  FP8GEMM_SMALL_M_KROT=${run:0:1} timeout 150 $B/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all \
    --json $R/suite_krot$run.json > $R/suite_krot$run.log 2>&1
  echo "suite krot=$run rc=$? $((SECONDS-s))s"
  python3 src/backends/small_m/bench/device/summarize.py $R/suite_krot$run.json > $R/sum_krot$run.txt 2>&1
  grep -E "^geomean|MB M<=16" $R/sum_krot$run.txt | cut -c1-150
done
T=()
for st in 9 10 11; do for l in 4 10 64; do for pdl in 1 2; do T+=(--add-tactic "small_m:wgmma,rows=32,splitk=1,stages=$st,l2pf=$l,pdl=$pdl"); done; done; done
for st in 8 9; do for l in 8 64; do for pdl in 1 2; do T+=(--add-tactic "small_m:wgmma,rows=35,splitk=1,stages=$st,l2pf=$l,pdl=$pdl,kblocks=2"); done; done; done
s=$SECONDS
timeout 120 $B/fp8gemm bench --shape 4096,4096 --shape 4608,4096 --m 1,16 --backend small_m --tactics all --max-finalists 40 \
  --replays 7 --no-confirm-auto "${T[@]}" --json $R/l2pf.json > $R/l2pf.log 2>&1
echo "l2pf bench rc=$? $((SECONDS-s))s"
python3 - $R/l2pf.json <<'PY'
import json,sys
for p in json.load(open(sys.argv[1]))['points']:
    ts=sorted([t for t in p['timings'] if t.get('ok') and t.get('median_us')], key=lambda t: t['median_us'])
    fl=(p['N']*p['K']+p['M']*p['K']+2*p['M']*p['N'])/4.5e6
    print(p['N'],p['K'],'M=%d'%p['M'],'floor %.2f'%fl)
    for t in ts[:6]: print('   %.2f (%.3f) %s'%(t['median_us'], fl/t['median_us'], t['tactic'][8:100]))
    nl=[t for t in ts if 'l2pf=0' in t['tactic']]
    if nl: print('   best l2pf=0: %.2f %s'%(nl[0]['median_us'], nl[0]['tactic'][8:100]))
PY
python3 - $R <<'PY'
import json,sys,math,glob
R=sys.argv[1]
def best(f):
    out={}
    for p in json.load(open(f))['points']:
        ts=[t for t in p['timings'] if t.get('ok') and t.get('median_us') and t['tactic'].startswith('small_m:')]
        if ts: out[(p['shape'],p['M'])]=(min(t['median_us'] for t in ts),(p['N']*p['K']+p['M']*p['K']+2*p['M']*p['N'])/4.5e6, p['N']*p['K']/1e6)
    return out
r={k:best('%s/suite_krot%s.json'%(R,k)) for k in ['0a','1a','0b','1b']}
keys=sorted(set.intersection(*[set(v) for v in r.values()]))
print('best small_m, krot on / off (mean of the two runs each): geomean %.4f over %d points' % (
  math.exp(sum(math.log((r['1a'][k][0]+r['1b'][k][0])/(r['0a'][k][0]+r['0b'][k][0])) for k in keys)/len(keys)), len(keys)))
for cls,lo,hi,thr in [('>=64MB',64,1e9,0.9),('16-32MB',16,32.5,0.7)]:
    for run in ['0a','1a','0b','1b']:
        pts=[k for k in keys if lo<=r[run][k][2]<hi]
        print(cls, run, '%d of %d >= %.2f' % (sum(1 for k in pts if r[run][k][1]/r[run][k][0]>=thr), len(pts), thr))
print('points (us): off a, on a, off b, on b')
for k in keys:
    v=[r[x][k][0] for x in ['0a','1a','0b','1b']]; fl=r['0a'][k][1]
    if r['0a'][k][2]>=16: print('%-22s M=%-2d %6.2f %6.2f %6.2f %6.2f  on/off %.3f  frac on %.3f' % (k[0],k[1],*v,(v[1]+v[3])/(v[0]+v[2]), fl/min(v[1],v[3])))
PY
cd $R && gzip -f *.json
# ==== .gpu-s31/call2.sh
#!/usr/bin/env bash
# Session 31 call 2: the whole issue-5 acceptance on 145a25d (session 30's split rule, 2afd2df, not
# yet through one): `scripts/gpu_acceptance.sh .gpu/bin tune`: the whole-suite tune, then auto
# (that cache) against every tactic at the suite's M values and between bucket edges.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
OUT=$R/acc bash scripts/gpu_acceptance.sh $B tune > $R/tune_summary.txt 2>&1
tail -5 $R/tune_summary.txt | cut -c1-160
rm -f $R/acc/cache.json.*
for f in auto_suite auto_between; do
  echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 10 $R/acc/$f.csv 2>&1 | tail -32 | cut -c1-230
done
cd $R && tar czf acc.tgz acc && rm -rf acc
# ==== .gpu-s31/call3.sh
#!/usr/bin/env bash
# Session 31 call 3: the compact cp.async tile for fitted rows up to 48 at m <= 16 (48-row weight
# tile and a pad per ring stage): the SmallM GPU tests and `check` on the new build; then the suite at
# M <= 16 with small_m alone, old build (9fed203) / new / old / new.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; O=.gpu-s31/old; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
[ -f $O/fp8gemm ] || xz -dk $O/fp8gemm.xz; chmod +x $O/fp8gemm
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS
timeout 200 $B/fp8gemm_gpu_tests --gtest_filter='SmallM*' --gtest_brief=1 > $R/smallm_tests.log 2>&1
echo "SmallM tests rc=$? $((SECONDS-s))s"; grep -E "PASSED|FAILED" $R/smallm_tests.log | head -8
s=$SECONDS; timeout 90 $B/fp8gemm check --quiet > $R/check.log 2>&1; echo "check rc=$? $((SECONDS-s))s: $(tail -1 $R/check.log)"
for run in old_a new_a old_b new_b; do
  s=$SECONDS; bin=$B; [ ${run:0:3} = old ] && bin=$O
  timeout 150 $bin/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --json $R/$run.json > $R/$run.log 2>&1
  echo "suite $run rc=$? $((SECONDS-s))s"
done
python3 - $R <<'PY'
import json,sys,math
R=sys.argv[1]
def best(f):
    out={}
    for p in json.load(open(f))['points']:
        ts=[t for t in p['timings'] if t.get('ok') and t.get('median_us') and t['tactic'].startswith('small_m:')]
        if ts:
            b=min(ts,key=lambda t:t['median_us'])
            out[(p['shape'],p['M'])]=(b['median_us'],(p['N']*p['K']+p['M']*p['K']+2*p['M']*p['N'])/4.5e6,p['N']*p['K']/1e6,b['tactic'][8:])
    return out
r={k:best('%s/%s.json'%(R,k)) for k in ['old_a','new_a','old_b','new_b']}
keys=sorted(set.intersection(*[set(v) for v in r.values()]))
rat=lambda k:(r['new_a'][k][0]+r['new_b'][k][0])/(r['old_a'][k][0]+r['old_b'][k][0])
print('best small_m new / old (sum of two runs each): geomean %.4f over %d points' % (math.exp(sum(math.log(rat(k)) for k in keys)/len(keys)), len(keys)))
for cls,lo,hi,thr in [('>=64MB',64,1e9,0.9),('16-32MB',16,32.5,0.7)]:
    for run in ['old_a','new_a','old_b','new_b']:
        pts=[k for k in keys if lo<=r[run][k][2]<hi]
        print(cls, run, '%d of %d >= %.2f' % (sum(1 for k in pts if r[run][k][1]/r[run][k][0]>=thr), len(pts), thr))
print('points whose best is a compact tactic in a new run, or that moved > 1%:')
for k in keys:
    v=[r[x][k][0] for x in ['old_a','new_a','old_b','new_b']]
    comp=any('wload=cp' in r[x][k][3] and (lambda rows: 33<=rows<=48)(int(r[x][k][3].split('rows=')[1].split(',')[0])) for x in ['new_a','new_b'])
    if comp or abs(rat(k)-1)>0.01:
        print('%-26s M=%-2d %6.2f %6.2f %6.2f %6.2f new/old %.3f frac new %.3f  %s' % (k[0],k[1],*v,rat(k),r['new_a'][k][1]/min(v[1],v[3]), r['new_a'][k][3][:70]))
PY
cd $R && gzip -f *.json && tar czf logs.tgz *.log && rm -f *.log
# ==== .gpu-s31/call4.sh
#!/usr/bin/env bash
# Session 31 call 4: every GPU test and `check` on 52da25d (the compact cp.async tile; the GraphTimer's
# option helpers in their own file); the suite at M <= 16 with every backend (issue 4's numbers).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
OUT=$R/acc bash scripts/gpu_acceptance.sh $B tests > $R/acc_summary.txt 2>&1
tail -5 $R/acc_summary.txt | cut -c1-160
grep -E "^\[  FAILED" $R/acc/logs/gpu_tests.log | head -8
s=$SECONDS
timeout 150 $B/fp8gemm bench --model all --m 1,2,4,8,16 --tactics all --json $R/suite_m16.json > $R/suite_m16.log 2>&1
echo "suite bench rc=$? $((SECONDS-s))s"
python3 src/backends/small_m/bench/device/summarize.py $R/suite_m16.json > $R/small_m_summary.txt 2>&1
grep -E "^geomean x \(best small_m\)|MB M<=16:|^  M=(1|2|4|8|16):" $R/small_m_summary.txt | cut -c1-170
cd $R && gzip -f suite_m16.json && tar czf acc.tgz acc && rm -rf acc
# ==== .gpu-s31/call5.sh
#!/usr/bin/env bash
# Session 31 call 5: the compact cp.async tile for fitted rows up to 48 and 65..80 at m <= 16 (48- and 80-row weight
# tiles and a pad per ring stage): the SmallM GPU tests and `check` on the new build; then the suite at
# M <= 16 with small_m alone, old build (9fed203) / new / old / new.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; O=.gpu-s31/old; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
[ -f $O/fp8gemm ] || xz -dk $O/fp8gemm.xz; chmod +x $O/fp8gemm
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS
timeout 200 $B/fp8gemm_gpu_tests --gtest_filter='SmallM*' --gtest_brief=1 > $R/smallm_tests.log 2>&1
echo "SmallM tests rc=$? $((SECONDS-s))s"; grep -E "PASSED|FAILED" $R/smallm_tests.log | head -8
s=$SECONDS; timeout 90 $B/fp8gemm check --quiet > $R/check.log 2>&1; echo "check rc=$? $((SECONDS-s))s: $(tail -1 $R/check.log)"
for run in old_a new_a old_b new_b; do
  s=$SECONDS; bin=$B; [ ${run:0:3} = old ] && bin=$O
  timeout 150 $bin/fp8gemm bench --model all --m 1,2,4,8,16 --backend small_m --tactics all --json $R/$run.json > $R/$run.log 2>&1
  echo "suite $run rc=$? $((SECONDS-s))s"
done
python3 - $R <<'PY'
import json,sys,math
R=sys.argv[1]
def best(f):
    out={}
    for p in json.load(open(f))['points']:
        ts=[t for t in p['timings'] if t.get('ok') and t.get('median_us') and t['tactic'].startswith('small_m:')]
        if ts:
            b=min(ts,key=lambda t:t['median_us'])
            out[(p['shape'],p['M'])]=(b['median_us'],(p['N']*p['K']+p['M']*p['K']+2*p['M']*p['N'])/4.5e6,p['N']*p['K']/1e6,b['tactic'][8:])
    return out
r={k:best('%s/%s.json'%(R,k)) for k in ['old_a','new_a','old_b','new_b']}
keys=sorted(set.intersection(*[set(v) for v in r.values()]))
rat=lambda k:(r['new_a'][k][0]+r['new_b'][k][0])/(r['old_a'][k][0]+r['old_b'][k][0])
print('best small_m new / old (sum of two runs each): geomean %.4f over %d points' % (math.exp(sum(math.log(rat(k)) for k in keys)/len(keys)), len(keys)))
for cls,lo,hi,thr in [('>=64MB',64,1e9,0.9),('16-32MB',16,32.5,0.7)]:
    for run in ['old_a','new_a','old_b','new_b']:
        pts=[k for k in keys if lo<=r[run][k][2]<hi]
        print(cls, run, '%d of %d >= %.2f' % (sum(1 for k in pts if r[run][k][1]/r[run][k][0]>=thr), len(pts), thr))
print('points whose best is a compact tactic in a new run, or that moved > 1%:')
for k in keys:
    v=[r[x][k][0] for x in ['old_a','new_a','old_b','new_b']]
    comp=any('wload=cp' in r[x][k][3] and (lambda rows: 33<=rows<=48)(int(r[x][k][3].split('rows=')[1].split(',')[0])) for x in ['new_a','new_b'])
    if comp or abs(rat(k)-1)>0.01:
        print('%-26s M=%-2d %6.2f %6.2f %6.2f %6.2f new/old %.3f frac new %.3f  %s' % (k[0],k[1],*v,rat(k),r['new_a'][k][1]/min(v[1],v[3]), r['new_a'][k][3][:70]))
PY
cd $R && gzip -f *.json && tar czf logs.tgz *.log && rm -f *.log
