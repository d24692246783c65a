# ==== .gpu-s32/call1.sh
#!/usr/bin/env bash
# Session 32 call 1: (a) the stream probe in a PDL chain with and without a dependent read after the
# wait (what a GEMM must do before its first MMA); (b) the compact cp.async tile at m = 17-32: the
# SmallM GPU tests and `check` on the new build; then the suite at M = 17, 24, 32 with small_m
# alone, old build (6a57302) / new / old / new.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; O=.gpu-s32/old; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm $B/fp8gemm_gpu_tests $O/fp8gemm; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
chmod +x .gpu-s32/small_m_align_probe
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS; timeout 120 .gpu-s32/small_m_align_probe dep > $R/probe_dep.txt 2>&1
echo "probe rc=$? $((SECONDS-s))s"
s=$SECONDS
timeout 200 $B/fp8gemm_gpu_tests --gtest_filter='SmallM*' --gtest_brief=1 > $R/smallm_tests.log 2>&1
echo "SmallM tests rc=$? $((SECONDS-s))s"; grep -E "PASSED|FAILED" $R/smallm_tests.log | head -8
s=$SECONDS; timeout 90 $B/fp8gemm check --quiet > $R/check.log 2>&1; echo "check rc=$? $((SECONDS-s))s: $(tail -1 $R/check.log)"
for run in old_a new_a old_b new_b; do
  s=$SECONDS; bin=$B; [ ${run:0:3} = old ] && bin=$O
  timeout 150 $bin/fp8gemm bench --model all --m 17,24,32 --backend small_m --tactics all --json $R/$run.json > $R/$run.log 2>&1
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
def compact(t):
    if 'wload=cp' not in t: return False
    rows=int(t.split('rows=')[1].split(',')[0]); return 33<=rows<=48 or 65<=rows<=80
print('points whose best is a compact-tile tactic in a new run, or that moved > 1%:')
for k in keys:
    v=[r[x][k][0] for x in ['old_a','new_a','old_b','new_b']]
    if any(compact(r[x][k][3]) for x in ['new_a','new_b']) or abs(rat(k)-1)>0.01:
        print('%-26s M=%-2d %6.2f %6.2f %6.2f %6.2f new/old %.3f frac new %.3f  %s' % (k[0],k[1],*v,rat(k),r['new_a'][k][1]/min(v[1],v[3]), r['new_a'][k][3][:72]))
PY
echo "==== probe (us per call; dependency: free / wait / wait+read)"
sort -t'|' -k1,1 -k3,3 $R/probe_dep.txt | cut -c1-120
cd $R && gzip -f *.json && tar czf logs.tgz *.log && rm -f *.log
