# ==== s25_call1.sh
#!/usr/bin/env bash
# Session 25 call 1: is nano9b.down's gap its rows' 64-byte misalignment (K = 15680 = 122.5 x 128)?
# (1) the stream probe at K = 15616 / 15680 / 15744 (N=4480) and 4096 / 4128 / 4160 (N=4096),
# consecutive rows vs rows grouped by offset class; (2) the library's small_m tactics and
# cuBLASLt's default at the three N=4480 K values, M = 1, 8, 16.
set -u
cd "$(dirname "$0")/.."
G=.gpu-s25; R=$OUT; for f in fp8gemm small_m_align_probe; do [ -f $G/$f ] || xz -dk $G/$f.xz; chmod +x $G/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
$G/small_m_align_probe > $R/probe.txt 2>&1; echo "probe rc=$?"
s=$SECONDS
timeout 300 $G/fp8gemm bench --shape 4480,15616 --shape 4480,15680 --shape 4480,15744 --shape 4096,4096 --shape 4096,4160 \
  --m 1,8,16 --backend small_m --tactics all --max-finalists 24 --replays 7 --no-confirm-auto \
  --csv $R/bench_k.csv --json $R/bench_k.json > $R/bench_k.log 2>&1
echo "bench rc=$? $((SECONDS-s))s"
gzip $R/bench_k.json
grep -vE "^#" $R/bench_k.log | tail -40 | cut -c1-220
echo "==== probe"; cat $R/probe.txt
# ==== s25_call2.sh
#!/usr/bin/env bash
# Session 25 call 2: the ring's shape in a PDL chain (probe --set sweep: rows of one block, bytes of
# a row per stage, ring depth, blocks per SM), and named small_m tactics outside the candidate list
# at llama8b.o (4096x4096) and nano9b.down (4480x15680), M = 1, 16.
set -u
cd "$(dirname "$0")/.."
G=.gpu-s25; R=$OUT; for f in fp8gemm small_m_align_probe; do [ -f $G/$f ] || xz -dk $G/$f.xz; chmod +x $G/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
$G/small_m_align_probe sweep > $R/probe_sweep.txt 2>&1; echo "probe rc=$?"
T=()
for s in 6 8 9 10 12 13 14; do for w in "" ",wload=cp"; do T+=(--add-tactic "small_m:wgmma,rows=32,splitk=1,stages=$s,l2pf=0,pdl=1$w"); done; done
for s in 3 4; do for w in "" ",wload=cp"; do T+=(--add-tactic "small_m:wgmma,rows=34,splitk=1,stages=$s,l2pf=0,pdl=1,kblocks=4$w"); done; done
for s in 6 8 10 12; do for w in "" ",wload=cp"; do T+=(--add-tactic "small_m:wgmma,rows=34,splitk=1,stages=$s,l2pf=0,pdl=1,kblocks=2$w"); done; done
s=$SECONDS
timeout 300 $G/fp8gemm bench --shape 4096,4096 --shape 4480,15680 --m 1,16 --backend small_m --tactics all \
  --max-finalists 40 --replays 7 --no-confirm-auto "${T[@]}" --csv $R/bench_named.csv --json $R/bench_named.json > $R/bench_named.log 2>&1
echo "bench rc=$? $((SECONDS-s))s"
python3 - $R/bench_named.json <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
for p in d['points']:
    print(p['N'],p['K'],p['M'])
    for t in sorted(p['timings'], key=lambda t: t.get('median_us') or 1e9)[:12]:
        print('   %.2f %d %s'%(t.get('median_us') or -1, len(t.get('samples_us',[])), t['tactic'][8:110]))
PY
gzip $R/bench_named.json
echo "==== probe"; sort -t'|' -k6 -n $R/probe_sweep.txt | awk -F'|' '{print}' | head -3
python3 - $R/probe_sweep.txt <<'PY'
import sys
rows=[l.strip().split('|') for l in open(sys.argv[1]) if l.count('|')>=7 and not l.startswith('shape')]
by={}
for r in rows: by.setdefault(r[0],[]).append(r)
for k,v in by.items():
    v.sort(key=lambda r: float(r[5]))
    print('==',k)
    for r in v[:10]: print('  ',' | '.join(r[1:]))
PY
# ==== s25_call3.sh
#!/usr/bin/env bash
# Session 25 call 3: the acceptance's "bench" phase on main (1430b0a: the review refactor of
# session 24 has not run on a GPU): every GPU test, `check`, then the whole DESIGN suite with
# every tactic of every backend (auto untuned: the default table). Summaries: untuned auto's
# regret (issue 5), best small_m vs cuBLASLt's default at M <= 16 (issue 4).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS FP8GEMM_SETTLE_MS FP8GEMM_SETTLE_MIN_CALL_US FP8GEMM_KEEP_BUSY_MS FP8GEMM_RECORD_CLOCK
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
OUT=$OUT/acc bash scripts/gpu_acceptance.sh $B bench > $OUT/acc_summary.txt 2>&1
tail -8 $OUT/acc_summary.txt | cut -c1-200
mkdir -p /tmp/l && tar xzf $OUT/acc/logs.tar.gz -C /tmp/l
grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" /tmp/l/logs/gpu_tests.log | head -8
tail -2 /tmp/l/logs/check.log
echo "==== untuned auto"; python3 scripts/auto_regret.py --by-m --worst 6 $OUT/acc/suite_small.csv $OUT/acc/suite_large.csv | cut -c1-180 | tail -30
echo "==== small_m (M <= 16)"
python3 src/backends/small_m/bench/device/summarize.py /tmp/l/logs/suite_small.json > $OUT/small_m_summary.txt 2>&1
grep -E "^geomean x \(best small_m\)|MB M<=16:|^  M=(1|2|4|8|16):" $OUT/small_m_summary.txt | cut -c1-170
cd $OUT && tar czf acc.tgz acc && rm -rf acc
# ==== s25_call4.sh
#!/usr/bin/env bash
# Session 25 call 4 (da53a18): the acceptance's tune-between with the three-round judge, then the
# same cache judged a second time: how many points change sides between the two judgings with the
# first round alone (the single-round judge of sessions 18-24) and with the median of three.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS FP8GEMM_SETTLE_MS FP8GEMM_SETTLE_MIN_CALL_US FP8GEMM_KEEP_BUSY_MS FP8GEMM_RECORD_CLOCK
for f in fp8gemm; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
A=$OUT/acc
OUT=$A bash scripts/gpu_acceptance.sh $B tune-between > $OUT/acc_summary.txt 2>&1
tail -6 $OUT/acc_summary.txt | cut -c1-160
s=$SECONDS
FP8GEMM_CACHE=$A/cache.json timeout 200 $B/fp8gemm bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all \
  --csv $A/auto_between_again.csv > $A/between_again.log 2>&1
echo "second judging rc=$? $((SECONDS-s))s"
mkdir -p /tmp/l && tar xzf $A/logs.tar.gz -C /tmp/l && grep -E "where the time went|^tune: 575" /tmp/l/logs/tune.log | cut -c1-200
for f in auto_between auto_between_again; do echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 8 $A/$f.csv | sed -n '/first round alone/,$p' | cut -c1-190; done
python3 - $A/auto_between.csv $A/auto_between_again.csv <<'PY'
import csv,sys
def load(f):
    out={}
    for r in csv.DictReader(open(f)):
        if not r.get('confirm_regret'): continue
        rr=[float(x) for x in r['confirm_round_ratios'].split(';') if x not in ('','nan')]
        out[(r['shape'],r['M'])]=(float(r['confirm_regret']), max(1.0,rr[0]) if rr else None, r['auto_tactic'])
    return out
a,b=load(sys.argv[1]),load(sys.argv[2])
for i,name in ((1,'first round alone'),(0,'median of 3')):
    flips=[(k,a[k][i],b[k][i],a[k][2]==b[k][2]) for k in a if k in b and a[k][i] and b[k][i] and ((a[k][i]<=1.03)!=(b[k][i]<=1.03))]
    print('%s: %d points change sides between the two judgings (%d with the same auto tactic)'%(name,len(flips),sum(f[3] for f in flips)))
    for f in flips: print('   %s M=%s %.3f -> %.3f %s'%(f[0][0],f[0][1],f[1],f[2],'same tactic' if f[3] else 'other tactic'))
PY
cd $OUT && tar czf acc.tgz acc && rm -rf acc
# ==== s25_call5.sh
#!/usr/bin/env bash
# Session 25 call 5: is the judge's run-to-run spread the process's memory placement? Call 4 judged
# one cache twice: each process's three rounds agreed (nano9b.down M=200: 0.92 0.92 0.96, then
# 1.07 1.06 1.03) while the two processes disagreed. Here: the same points benched in separate
# processes, twice with nothing else on the GPU, and with another process holding 1, 3 and 7 GB
# of device memory first (so the bench's buffers land elsewhere).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; G=.gpu-s25; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done; chmod +x $G/hold_mem
C=.gpu-s25/cache4.json
i=0
for pad in 0 0 1024 3000 7000 0; do
  i=$((i+1))
  [ $pad -gt 0 ] && { $G/hold_mem $pad 120 > $OUT/hold_$i.txt & HP=$!; sleep 3; }
  FP8GEMM_CACHE=$C timeout 100 $B/fp8gemm bench --shape 4480,15680 --shape 4608,4096 --shape 15680,4480 --m 12,100,200 \
    --tactics all --csv $OUT/run${i}_pad$pad.csv > $OUT/run${i}.log 2>&1
  echo "run $i pad $pad MB rc=$?"
  [ $pad -gt 0 ] && { kill $HP; wait $HP 2>/dev/null; }
done
python3 - $OUT/run*_pad*.csv <<'PY'
import csv,sys
runs=[(f.split('/')[-1][:-4],{(r['shape'],r['M']):r for r in csv.DictReader(open(f))}) for f in sorted(sys.argv[1:])]
keys=list(runs[0][1].keys())
for k in keys:
    print('%s M=%s'%k)
    for name,d in runs:
        r=d.get(k)
        if r: print('   %-14s auto %s  best %-60s rounds %s'%(name, r['auto_tactic'][9:40], r['confirm_best_tactic'][:60], r['confirm_round_ratios']))
PY
# ==== s25_call6.sh
#!/usr/bin/env bash
# Session 25 call 6: time or process? Call 4 judged one cache in two processes: each process's three
# rounds agreed, the processes did not. Here the same cache (call 4's) judged by two processes with
# six rounds each: do rounds 1-3 and 4-6 of one process disagree as the two processes do (a drift
# over time), or agree (something a process keeps)?
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
for i in 1 2; do
  s=$SECONDS
  FP8GEMM_CACHE=.gpu-s25/cache4.json timeout 200 $B/fp8gemm bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all \
    --confirm-rounds 6 --csv $OUT/between6_p$i.csv > $OUT/between6_p$i.log 2>&1
  echo "process $i rc=$? $((SECONDS-s))s"
done
python3 - $OUT/between6_p1.csv $OUT/between6_p2.csv <<'PY'
import csv,sys,statistics as st
def load(f):
    out={}
    for r in csv.DictReader(open(f)):
        rr=r.get('confirm_round_ratios') or ''
        v=[float(x) if x!='nan' else None for x in rr.split(';')] if rr else []
        if len(v)==6 and all(x for x in v): out[(r['shape'],r['M'])]=(v,r['confirm_best_tactic'])
    return out
p1,p2=load(sys.argv[1]),load(sys.argv[2])
def side(x): return max(1.0,x)<=1.03
def cnt(pairs): return sum(side(a)!=side(b) for a,b in pairs)
keys=[k for k in p1 if k in p2]
same=[k for k in keys if p1[k][1]==p2[k][1]]
A=lambda v: st.median(v[:3]); Bm=lambda v: st.median(v[3:])
print('points with six rounds in both: %d (same opponent in both: %d)'%(len(keys),len(same)))
print('within process 1, rounds 1-3 vs 4-6 change sides: %d'%cnt([(A(p1[k][0]),Bm(p1[k][0])) for k in keys]))
print('within process 2, rounds 1-3 vs 4-6 change sides: %d'%cnt([(A(p2[k][0]),Bm(p2[k][0])) for k in keys]))
print('process 1 vs 2 (rounds 1-3 each), same opponent: %d'%cnt([(A(p1[k][0]),A(p2[k][0])) for k in same]))
print('process 1 vs 2 (all six each), same opponent: %d'%cnt([(st.median(p1[k][0]),st.median(p2[k][0])) for k in same]))
import math
def spread(pairs): return math.exp(st.mean([abs(math.log(a/b)) for a,b in pairs]))
print('mean |log ratio| as a factor: within p1 %.4f, within p2 %.4f, between processes %.4f'%(
  spread([(A(p1[k][0]),Bm(p1[k][0])) for k in keys]),spread([(A(p2[k][0]),Bm(p2[k][0])) for k in keys]),
  spread([(A(p1[k][0]),A(p2[k][0])) for k in same])))
big=sorted(same,key=lambda k:-abs(math.log(A(p1[k][0])/A(p2[k][0]))))[:8]
for k in big: print('  %s M=%s p1 %s | p2 %s'%(k[0],k[1],' '.join('%.3f'%x for x in p1[k][0]),' '.join('%.3f'%x for x in p2[k][0])))
PY
