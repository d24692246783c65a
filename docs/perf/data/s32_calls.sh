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
# ==== .gpu-s32/call2.sh
#!/usr/bin/env bash
# Session 32 call 2 (9929c9d, the compact cp.async tile at every m): every GPU test and `check`; then
# two whole-suite tunes at M <= 32 by a binary whose default table is empty (.gpu-s32/empty, the
# generated rules removed), for the table's M <= 32 rules with the compact tile's deeper rings.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm $B/fp8gemm_gpu_tests .gpu-s32/empty/fp8gemm; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv,noheader
OUT=$R/acc GTEST_FILTER='*' bash scripts/gpu_acceptance.sh $B tests > $R/tests_summary.txt 2>&1
tail -5 $R/tests_summary.txt | cut -c1-160
tar -xzf $R/acc/logs.tar.gz -C $R/acc logs/gpu_tests.log 2>/dev/null; grep -E "^\[  (FAILED|PASSED)" $R/acc/logs/gpu_tests.log | head -8; rm -rf $R/acc/logs
for i in 1 2; do
  s=$SECONDS; timeout 110 .gpu-s32/empty/fp8gemm tune --model all --m 1,2,4,8,16,24,32 --run-budget-s 95 --cache $R/empty_$i.json \
    --json $R/tune_empty_$i.json > $R/tune_empty_$i.log 2>&1; echo "tune empty $i rc=$? $((SECONDS-s))s $(tail -1 $R/tune_empty_$i.log | cut -c1-150)"
done
rm -f $R/empty_*.json
gzip $R/tune_empty_*.json
cd $R && tar czf logs.tgz *.log && rm -f *.log
# ==== .gpu-s32/call3.sh
#!/usr/bin/env bash
# Session 32 call 3 (the regenerated M <= 32 table): the whole issue-5 acceptance,
# `scripts/gpu_acceptance.sh .gpu/bin tune`: the whole-suite tune, then auto (that cache) against
# every tactic at the suite's M values and between bucket edges; the first pass at M <= 16 gives
# issue 4's numbers (summarize.py).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
OUT=$R/acc bash scripts/gpu_acceptance.sh $B tune > $R/tune_summary.txt 2>&1
tail -6 $R/tune_summary.txt | cut -c1-160
rm -f $R/acc/cache.json*
tar -xzf $R/acc/logs.tar.gz -C $R/acc logs/auto_suite.json logs/tune.json 2>/dev/null
python3 src/backends/small_m/bench/device/summarize.py $R/acc/logs/auto_suite.json > $R/small_m_summary.txt 2>&1
grep -E "^geomean x \(best small_m\) vs|^  M=|MB M<=16" $R/small_m_summary.txt | cut -c1-160
gzip -f $R/acc/logs/tune.json; mv $R/acc/logs/tune.json.gz $R/; rm -rf $R/acc/logs
for f in auto_suite auto_between; do
  echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 10 $R/acc/$f.csv 2>&1 | tail -32 | cut -c1-200
done
gzip -f $R/acc/*.csv
# ==== .gpu-s32/call4.sh
#!/usr/bin/env bash
# Session 32 call 4 (dfa461f, the regenerated M <= 32 table): untuned auto (the default table, no
# cache) against every tactic at M <= 32: the suite's M values and 3, 12.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
s=$SECONDS; timeout 200 $B/fp8gemm bench --model all --m 1,2,3,4,8,12,16,24,32 --tactics all --csv $R/untuned_small.csv > $R/untuned_small.log 2>&1
echo "untuned M<=32 (new table) rc=$? $((SECONDS-s))s"
python3 scripts/auto_regret.py --by-m --worst 8 $R/untuned_small.csv | tail -24 | cut -c1-230
gzip $R/untuned_small.log $R/untuned_small.csv
# ==== .gpu-s32/call5.sh
#!/usr/bin/env bash
# Session 32 call 5 (dfa461f): nano9b.down (4480x15680) with fitted 34-row blocks and split-K 2
# (264 blocks, two per SM: twice the rows streaming per SM, each over half of K) with four and two
# K blocks a stage, TMA and cp.async, named beside every listed small_m tactic; and the listed TMA
# kblocks=4 ring with early=4 and pdl=2. M = 1, 8, 16.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
args=()
for t in rows=34,splitk=2,stages=3,l2pf=0,pdl=1,kblocks=4,wload=cp rows=34,splitk=2,stages=7,l2pf=0,pdl=1,kblocks=2,wload=cp \
  rows=34,splitk=2,stages=6,l2pf=0,pdl=1,kblocks=2,wload=cp rows=34,splitk=2,stages=13,l2pf=0,pdl=1,wload=cp \
  rows=34,splitk=2,stages=4,l2pf=0,pdl=1,kblocks=4 rows=34,splitk=2,stages=3,l2pf=0,pdl=1,kblocks=4 \
  rows=34,splitk=2,stages=8,l2pf=0,pdl=1,kblocks=2 rows=34,splitk=2,stages=7,l2pf=0,pdl=1,kblocks=2 \
  rows=34,splitk=1,stages=9,l2pf=0,pdl=1,early=4,kblocks=4 rows=34,splitk=1,stages=9,l2pf=0,pdl=2,kblocks=4; do
  args+=(--add-tactic "small_m:wgmma,$t")
done
for run in a b; do
  s=$SECONDS
  timeout 120 $B/fp8gemm bench --shape 4480,15680 --m 1,8,16 --backend small_m --tactics all "${args[@]}" \
    --json $R/nano_$run.json > $R/nano_$run.log 2>&1
  echo "bench $run rc=$? $((SECONDS-s))s $(tail -1 $R/nano_$run.log)"
done
python3 - $R <<'PY'
import json,sys,collections
R=sys.argv[1]
t=collections.defaultdict(list)
for run in 'ab':
    for p in json.load(open('%s/nano_%s.json'%(R,run)))['points']:
        for x in p['timings']:
            if x.get('ok') and x.get('median_us'): t[(p['M'],x['tactic'])].append(x['median_us'])
for M in (1,8,16):
    rows=sorted(((sum(v)/len(v),k[1],v) for k,v in t.items() if k[0]==M), key=lambda r:r[0])
    print('M=%d floor %.2f us' % (M, (4480*15680+M*15680+2*M*4480)/4.5e6))
    for us,tac,v in rows[:8]: print('  %6.2f (%s) %s' % (us, ' '.join('%.2f'%x for x in v), tac[8:]))
    for us,tac,v in rows[8:]:
        if 'splitk=2' in tac and 'rows=34' in tac or 'early=4,kblocks=4' in tac or ('pdl=2,kblocks=4' in tac and 'rows=34' in tac):
            print('  %6.2f (%s) %s' % (us, ' '.join('%.2f'%x for x in v), tac[8:]))
PY
cd $R && gzip -f *.json && tar czf logs.tgz *.log && rm -f *.log
# ==== .gpu-s32/call6.sh (on a build of the aslots experiment: docs/perf/data/s32_call6_aslots_experiment.patch applied to 2e1c788; reverted after)
#!/usr/bin/env bash
# Session 32 call 6 (aslots=A: K pairs with the activations in a ring of their own): the GPU test
# SmallM.WgmmaKPairsActivationSlots; then the 16-22 MB weights with K pairs (llama8b.o 4096x4096,
# nemotron3super.qkv 4608x4096, shared_down 4096x5376) at M = 1, 8, 16, named aslots tactics beside
# every listed small_m tactic, twice.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm $B/fp8gemm_gpu_tests; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
s=$SECONDS; timeout 90 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.WgmmaKPairsActivationSlots' --gtest_brief=1 > $R/aslots_test.log 2>&1
rc=$?; echo "aslots GPU test rc=$rc $((SECONDS-s))s"; grep -E "PASSED|FAILED|Failure" $R/aslots_test.log | head -6
grep -A6 "Failure" $R/aslots_test.log | head -30
args=()
for t in stages=6,l2pf=0,pdl=1,kblocks=2,aslots=3 stages=6,l2pf=0,pdl=1,kblocks=2,aslots=2 stages=6,l2pf=0,pdl=2,kblocks=2,aslots=2 \
  stages=5,l2pf=0,pdl=1,kblocks=2,aslots=2 stages=12,l2pf=0,pdl=1,aslots=3 stages=13,l2pf=0,pdl=1,aslots=2 \
  stages=12,l2pf=0,pdl=1,aslots=2 stages=12,l2pf=0,pdl=2,aslots=2 stages=11,l2pf=0,pdl=1,aslots=3; do
  args+=(--add-tactic "small_m:wgmma,rows=32,splitk=1,$t")
done
for run in a b; do
  s=$SECONDS
  timeout 100 $B/fp8gemm bench --shape 4096,4096 --shape 4608,4096 --shape 4096,5376 --m 1,8,16 --backend small_m \
    --tactics all "${args[@]}" --json $R/aslots_$run.json > $R/aslots_$run.log 2>&1
  echo "bench $run rc=$? $((SECONDS-s))s $(tail -1 $R/aslots_$run.log | cut -c1-120)"
done
python3 - $R <<'PY'
import json,sys,collections
R=sys.argv[1]
t=collections.defaultdict(list); nk={}
for run in 'ab':
    try: pts=json.load(open('%s/aslots_%s.json'%(R,run)))['points']
    except Exception as e: print('no json', run, e); continue
    for p in pts:
        nk[(p['N'],p['K'])]=1
        for x in p['timings']:
            if x.get('ok') and x.get('median_us'): t[(p['N'],p['K'],p['M'],x['tactic'])].append(x['median_us'])
for (N,K) in nk:
    for M in (1,8,16):
        rows=sorted(((sum(v)/len(v),k[3],v) for k,v in t.items() if k[:3]==(N,K,M)), key=lambda r:r[0])
        if not rows: continue
        fl=(N*K+M*K+2*M*N)/4.5e6
        best=[r for r in rows if 'aslots' not in r[1]][0]; bas=[r for r in rows if 'aslots' in r[1]]
        print('%dx%d M=%d floor %.2f: listed best %.2f (%.3f) %s' % (N,K,M,fl,best[0],fl/best[0],best[1][8:]))
        for us,tac,v in bas[:4]: print('   aslots %.2f (%.3f) [%s] %s' % (us, fl/us, ' '.join('%.2f'%x for x in v), tac[8:]))
PY
cd $R && gzip -f *.json 2>/dev/null; tar czf logs.tgz *.log && rm -f *.log
