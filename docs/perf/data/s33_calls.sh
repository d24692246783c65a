#!/usr/bin/env bash
# ==== .gpu-s33/call1.sh (binaries built with docs/perf/data/s33_call1_areg_experiment.patch applied to 8f4409f; reverted after)
# Session 33 call 1: the stream probe with the activations read into registers (--set areg), twice;
# the GPU test SmallM.WgmmaActivationsInRegisters; then the 16-22 MB weights (4096x4096,
# 4608x4096, 4096x5376) at M = 1, 8, 16 with named areg tactics beside every listed small_m
# tactic, twice.
set -u
cd "$(dirname "$0")/.."
B=.gpu-s33/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm $B/fp8gemm_gpu_tests; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for i in 1 2; do .gpu-s33/small_m_align_probe areg > $R/probe_areg_$i.txt 2>&1; echo "probe $i rc=$?"; done
s=$SECONDS; timeout 120 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.WgmmaActivationsInRegisters' --gtest_brief=1 > $R/areg_test.log 2>&1
rc=$?; echo "areg GPU test rc=$rc $((SECONDS-s))s"; grep -E "PASSED|FAILED|Failure" $R/areg_test.log | head -6
grep -B2 -A8 "Failure" $R/areg_test.log | head -40
args=()
for t in rows=32,splitk=1,stages=7,l2pf=0,pdl=1,kblocks=4,areg=1 rows=32,splitk=1,stages=7,l2pf=0,pdl=2,kblocks=4,areg=1 \
  rows=32,splitk=1,stages=6,l2pf=0,pdl=1,kblocks=4,areg=1 rows=32,splitk=1,stages=14,l2pf=0,pdl=1,kblocks=2,areg=2 \
  rows=32,splitk=1,stages=14,l2pf=0,pdl=2,kblocks=2,areg=2 rows=32,splitk=1,stages=12,l2pf=0,pdl=1,kblocks=2,areg=2 \
  rows=32,splitk=1,stages=7,l2pf=0,pdl=1,kblocks=4,areg=2 rows=32,splitk=1,stages=7,l2pf=0,pdl=2,kblocks=4,areg=2 \
  rows=35,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4,areg=1 rows=35,splitk=1,stages=11,l2pf=0,pdl=1,kblocks=2,areg=2 \
  rows=35,splitk=1,stages=11,l2pf=0,pdl=2,kblocks=2,areg=2 rows=36,splitk=1,stages=5,l2pf=0,pdl=1,kblocks=4,areg=1; do
  args+=(--add-tactic "small_m:wgmma,$t")
done
for run in a b; do
  s=$SECONDS
  timeout 150 $B/fp8gemm bench --shape 4096,4096 --shape 4608,4096 --shape 4096,5376 --m 1,8,16 --backend small_m \
    --tactics all "${args[@]}" --json $R/areg_$run.json > $R/areg_$run.log 2>&1
  echo "bench $run rc=$? $((SECONDS-s))s $(tail -1 $R/areg_$run.log | cut -c1-120)"
done
cat $R/probe_areg_1.txt; cut -d'|' -f1,3,4,6,8 $R/probe_areg_2.txt | paste -sd' ' | fold -w 4000 | head -0
python3 - $R <<'PY'
import json,sys,collections
R=sys.argv[1]
p2={}
for l in open(R+'/probe_areg_2.txt'):
    f=l.strip().split('|')
    if len(f)>=8 and f[0][0].isdigit(): p2['|'.join(f[:5])]=f[5]
print('probe run 2 us:', ' '.join(p2.values()))
t=collections.defaultdict(list); nk={}; bad=collections.Counter()
for run in 'ab':
    try: pts=json.load(open('%s/areg_%s.json'%(R,run)))['points']
    except Exception as e: print('no json', run, e); continue
    for p in pts:
        nk[(p['N'],p['K'])]=1
        for x in p['timings']:
            if x.get('ok') and x.get('median_us'): t[(p['N'],p['K'],p['M'],x['tactic'])].append(x['median_us'])
            elif 'areg' in x.get('tactic',''): bad[(x['tactic'][8:], str(x.get('error',x.get('status','')))[:80])]+=1
for k,v in list(bad.items())[:8]: print('not ok', v, k)
for (N,K) in nk:
    for M in (1,8,16):
        rows=sorted(((sum(v)/len(v),k[3],v) for k,v in t.items() if k[:3]==(N,K,M)), key=lambda r:r[0])
        if not rows: continue
        fl=(N*K+M*K+2*M*N)/4.5e6
        best=[r for r in rows if 'areg' not in r[1]][0]; ar=[r for r in rows if 'areg' in r[1]]
        print('%dx%d M=%d floor %.2f: listed best %.2f (%.3f) %s' % (N,K,M,fl,best[0],fl/best[0],best[1][8:]))
        for us,tac,v in ar[:4]: print('   areg %.2f (%.3f) [%s] %s' % (us, fl/us, ' '.join('%.2f'%x for x in v), tac[8:]))
PY
cd $R && gzip -f *.json 2>/dev/null; tar czf logs.tgz *.log && rm -f *.log

# ==== .gpu-s33/call2.sh (binaries built at 8f4409f, whose library is 6f11149's; the probe from this session's small_m_align_probe.cu)
#!/usr/bin/env bash
# Session 33 call 2: the stream probe's register activations from 16-byte loads (--set areg16),
# twice; then every GPU test and `check` on this session's HEAD (no library change since
# 6f11149, whose compact-tile test refactor had not run on a GPU).
set -u
cd "$(dirname "$0")/.."
B=.gpu-s33/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm $B/fp8gemm_gpu_tests; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
for i in 1 2; do .gpu-s33/small_m_align_probe areg16 > $R/probe_areg16_$i.txt 2>&1; echo "probe $i rc=$?"; done
OUT=$R scripts/gpu_acceptance.sh $B tests 2>&1 | tail -8
cat $R/probe_areg16_1.txt; echo "run 2:"; cut -d'|' -f4,6 $R/probe_areg16_2.txt | paste -sd' '
cd $R && tar czf logs.tgz logs && rm -rf logs

# ==== call 3 (the command, run with the probe alone carried)
for i in 1 2; do .gpu-s33/small_m_align_probe areg16d > $OUT/probe_areg16d_$i.txt 2>&1; echo "rc=$?"; done

# ==== .gpu-s33/call4.sh
#!/usr/bin/env bash
# Session 33 call 4 (aonce=1: K pairs with the whole activation once, compact, m < 8): the GPU test
# SmallM.WgmmaKPairsActivationOnce; then the 16-25 MB weights at M = 1, 2, 4 with named aonce
# tactics beside every listed small_m tactic, twice.
set -u
cd "$(dirname "$0")/.."
B=.gpu-s33/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm $B/fp8gemm_gpu_tests; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
s=$SECONDS; timeout 120 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.WgmmaKPairsActivationOnce' --gtest_brief=1 > $R/aonce_test.log 2>&1
rc=$?; echo "aonce GPU test rc=$rc $((SECONDS-s))s"; grep -E "PASSED|FAILED|Failure" $R/aonce_test.log | head -6
grep -B2 -A8 "Failure" $R/aonce_test.log | head -30
args=()
for t in stages=6,l2pf=0,pdl=1 stages=6,l2pf=0,pdl=2 stages=5,l2pf=0,pdl=1 stages=5,l2pf=0,pdl=2; do
  args+=(--add-tactic "small_m:wgmma,rows=32,splitk=1,$t,kblocks=2,aonce=1")
done
for run in a b; do
  s=$SECONDS
  timeout 150 $B/fp8gemm bench --shape 4096,4096 --shape 4608,4096 --shape 4096,5376 --shape 5376,4096 --m 1,2,4 \
    --backend small_m --tactics all "${args[@]}" --json $R/aonce_$run.json > $R/aonce_$run.log 2>&1
  echo "bench $run rc=$? $((SECONDS-s))s $(tail -1 $R/aonce_$run.log | cut -c1-120)"
done
python3 - $R <<'PY'
import json,sys,collections
R=sys.argv[1]
t=collections.defaultdict(list); nk={}; bad=collections.Counter()
for run in 'ab':
    try: pts=json.load(open('%s/aonce_%s.json'%(R,run)))['points']
    except Exception as e: print('no json', run, e); continue
    for p in pts:
        nk[(p['N'],p['K'])]=1
        for x in p['timings']:
            if x.get('ok') and x.get('median_us'): t[(p['N'],p['K'],p['M'],x['tactic'])].append(x['median_us'])
            elif 'aonce' in x.get('tactic',''): bad[(x['tactic'][8:], str(x.get('error',x.get('status','')))[:100])]+=1
for k,v in list(bad.items())[:6]: print('not ok', v, k)
for (N,K) in nk:
    for M in (1,2,4):
        rows=sorted(((sum(v)/len(v),k[3],v) for k,v in t.items() if k[:3]==(N,K,M)), key=lambda r:r[0])
        if not rows: continue
        fl=(N*K+M*K+2*M*N)/4.5e6
        best=[r for r in rows if 'aonce' not in r[1]][0]; ao=[r for r in rows if 'aonce' in r[1]]
        print('%dx%d M=%d floor %.2f: listed best %.2f (%.3f) %s' % (N,K,M,fl,best[0],fl/best[0],best[1][8:]))
        for us,tac,v in ao[:4]: print('   aonce %.2f (%.3f) [%s] %s' % (us, fl/us, ' '.join('%.2f'%x for x in v), tac[8:]))
PY
cd $R && gzip -f *.json 2>/dev/null; tar czf logs.tgz *.log && rm -f *.log

# ==== .gpu-s33/call5.sh
#!/usr/bin/env bash
# Session 33 call 5 (aonce=1 at m = 1 with one bulk copy of the activation row): the GPU test
# SmallM.WgmmaKPairsActivationOnce; then every suite shape at M = 1 with named aonce tactics beside
# every listed small_m tactic, twice.
set -u
cd "$(dirname "$0")/.."
B=.gpu-s33/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm $B/fp8gemm_gpu_tests; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
s=$SECONDS; timeout 120 $B/fp8gemm_gpu_tests --gtest_filter='SmallM.WgmmaKPairsActivationOnce' --gtest_brief=1 > $R/aonce_test.log 2>&1
rc=$?; echo "aonce GPU test rc=$rc $((SECONDS-s))s"; grep -E "PASSED|FAILED|Failure" $R/aonce_test.log | head -6
grep -B2 -A8 "Failure" $R/aonce_test.log | head -30
args=()
for t in stages=6,l2pf=0,pdl=1 stages=6,l2pf=0,pdl=2 stages=5,l2pf=0,pdl=1; do
  args+=(--add-tactic "small_m:wgmma,rows=32,splitk=1,$t,kblocks=2,aonce=1")
done
for run in a b; do
  s=$SECONDS
  timeout 200 $B/fp8gemm bench --model all --m 1 --backend small_m --tactics all "${args[@]}" --json $R/aonce1_$run.json > $R/aonce1_$run.log 2>&1
  echo "bench $run rc=$? $((SECONDS-s))s $(tail -1 $R/aonce1_$run.log | cut -c1-120)"
done
python3 - $R <<'PY'
import json,sys,collections
R=sys.argv[1]
t=collections.defaultdict(list); nk={}; bad=collections.Counter()
for run in 'ab':
    try: pts=json.load(open('%s/aonce1_%s.json'%(R,run)))['points']
    except Exception as e: print('no json', run, e); continue
    for p in pts:
        nk[(p['N'],p['K'])]=p.get('shape','')
        for x in p['timings']:
            if x.get('ok') and x.get('median_us'): t[(p['N'],p['K'],p['M'],x['tactic'])].append(x['median_us'])
            elif 'aonce' in x.get('tactic',''): bad[(x['tactic'][8:], str(x.get('error',x.get('status','')))[:100])]+=1
for k,v in list(bad.items())[:4]: print('not ok', v, k)
for (N,K),name in nk.items():
    rows=sorted(((sum(v)/len(v),k[3],v) for k,v in t.items() if k[:3]==(N,K,1)), key=lambda r:r[0])
    if not rows: continue
    fl=(N*K+K+2*N)/4.5e6
    best=[r for r in rows if 'aonce' not in r[1]][0]; ao=[r for r in rows if 'aonce' in r[1]]
    a=ao[0] if ao else (float('nan'),'',[])
    print('%-22s %5dx%-5d %5.1fMB listed %.2f (%.3f) aonce %.2f (%.3f) new/old %.3f [%s] %s' % (name,N,K,N*K/1e6,best[0],fl/best[0],a[0],fl/a[0],a[0]/best[0],' '.join('%.2f'%x for x in a[2]),a[1][8:]))
PY
cd $R && gzip -f *.json 2>/dev/null; tar czf logs.tgz *.log && rm -f *.log

# ==== .gpu-s33/call6.sh
#!/usr/bin/env bash
# Session 33 call 6 (aonce=1 offered at m = 1 on weights <= 40 MB): every GPU test and `check`
# (which runs every candidate of its shapes), then `bench --model all --m 1 --backend small_m
# --tactics all` (the new candidates listed, no names).
set -u
cd "$(dirname "$0")/.."
B=.gpu-s33/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm $B/fp8gemm_gpu_tests; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
OUT=$R scripts/gpu_acceptance.sh $B tests 2>&1 | tail -5
timeout 100 $B/fp8gemm bench --model all --m 1 --backend small_m --tactics all --json $R/m1_listed.json > $R/m1_listed.log 2>&1
echo "bench rc=$? $(tail -1 $R/m1_listed.log | cut -c1-100)"
python3 - $R <<'PY'
import json,sys
pts=json.load(open(sys.argv[1]+'/m1_listed.json'))['points']
for p in pts:
    ok=sorted([x for x in p['timings'] if x.get('ok') and x.get('median_us')], key=lambda x:x['median_us'])
    if not ok: continue
    N,K=p['N'],p['K']; fl=(N*K+K+2*N)/4.5e6
    ao=[x for x in ok if 'aonce' in x['tactic']]
    if N*K > 40*2**20: continue
    print('%-26s best %.2f (%.3f) %s%s' % (p.get('shape',''), ok[0]['median_us'], fl/ok[0]['median_us'], ok[0]['tactic'][8:70], '' if not ao else '  aonce %.2f' % ao[0]['median_us']))
PY
cd $R && gzip -f *.json; tar czf logs.tgz logs *.log && rm -rf logs *.log
