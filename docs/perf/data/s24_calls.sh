# ==== s24_call1.sh
#!/usr/bin/env bash
# Session 24 call 1: every GPU test and `check` on f56b924 (GraphTimer's clock record and the
# review's measure()/prepare() changes have not run on a GPU yet); then a whole-suite tune with the
# SM clock recorded per measurement, and bench between edges on that cache twice: head-to-head
# rounds lightest first (the default) and by M (--confirm-order m), clocks recorded.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS FP8GEMM_SETTLE_MS FP8GEMM_SETTLE_MIN_CALL_US FP8GEMM_KEEP_BUSY_MS
[ -f $B/fp8gemm_gpu_tests ] || xz -dk $B/fp8gemm_gpu_tests.xz; chmod +x $B/fp8gemm_gpu_tests
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 200 > $R/clocks.csv 2>&1 &
SMI=$!
s=$SECONDS; timeout 250 $B/fp8gemm_gpu_tests --gtest_brief=1 > $R/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gpu_tests.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gpu_tests.txt | head -20
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
export FP8GEMM_RECORD_CLOCK=1
s=$SECONDS
timeout 150 $B/fp8gemm tune --model all --m buckets --run-budget-s 145 --cache $R/cache.json --json $R/tune.json > $R/tune.log 2>&1
echo "tune rc=$? $((SECONDS-s))s"; grep -E "where the time went|^tune: 575" $R/tune.log
for o in time m; do
  s=$SECONDS
  FP8GEMM_CACHE=$R/cache.json timeout 120 $B/fp8gemm bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all \
    --confirm-order $o --csv $R/between_$o.csv --json $R/between_$o.json > $R/between_$o.log 2>&1
  echo "bench between (confirm order $o) rc=$? $((SECONDS-s))s"
done
kill $SMI
for o in time m; do echo "==== $o"; python3 .gpu/auto_regret.py --worst 8 $R/between_$o.csv | sed -n '8,30p' | cut -c1-200; done
echo "==== per point: time vs m"; python3 .gpu/auto_regret.py $R/between_time.csv --against $R/between_m.csv 2>&1 | tail -25 | cut -c1-200
gzip $R/tune.json $R/between_time.json $R/between_m.json
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== s24_call2.sh
#!/usr/bin/env bash
# Session 24 call 2: the whole acceptance (defaults) with e04fa07: a segment that a low-end check
# hands over keeps its new contender's reach above its sampled M (s23 call 3: nano9b.in_proj M=300
# 1.196 that way). Baseline s23 call 1: tune 117.4 s, suite timed again 1.002 / 1.050 / 452 of 460,
# between 1.003 / 1.057 / 177 of 184; s24 call 1 (f56b924, clock recorded): between 178 and 180.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS FP8GEMM_SETTLE_MS FP8GEMM_SETTLE_MIN_CALL_US FP8GEMM_KEEP_BUSY_MS FP8GEMM_RECORD_CLOCK
OUT=$OUT/acc bash scripts/gpu_acceptance.sh $B tune > $OUT/acc_summary.txt 2>&1
tail -6 $OUT/acc_summary.txt
tar xzf $OUT/acc/logs.tar.gz -O logs/tune.log | grep -E "where the time went|^tune: 575"
for f in auto_between auto_suite; do
  echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 10 $OUT/acc/$f.csv | sed -n '/timed again/,$p' | cut -c1-200
done
cd $OUT && tar czf acc.tgz acc && rm -rf acc
# ==== s24_call3.sh
#!/usr/bin/env bash
# Session 24 call 3: every GPU test and `check` on e04fa07 (the tuner's segment reach after a
# low-end check); then llama70b_tp8.o (8192x1024) at M=37-48, every tactic, with bench's 20-call
# first-pass replays and with >= 300 us replays (the tuner's), twice each, alternating: in call 2's
# tune CUTLASS 64x128 PDL took 4.46 us in the edge's short round and 5.04 in its full round and
# missed the sample at 37; bench timed it the fastest at M=40 (4.52), auto (the heuristic) 1.071x.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS FP8GEMM_SETTLE_MS FP8GEMM_SETTLE_MIN_CALL_US FP8GEMM_KEEP_BUSY_MS FP8GEMM_RECORD_CLOCK
[ -f $B/fp8gemm_gpu_tests ] || xz -dk $B/fp8gemm_gpu_tests.xz; chmod +x $B/fp8gemm_gpu_tests
R=$OUT/r; mkdir -p $R
s=$SECONDS; timeout 250 $B/fp8gemm_gpu_tests --gtest_brief=1 > $R/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gpu_tests.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gpu_tests.txt | head -20
s=$SECONDS; timeout 60 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
for run in a b; do
  for rl in 0 300; do
    timeout 60 $B/fp8gemm bench --shape 8192,1024 --m 37,40,43,48 --tactics all --no-confirm-auto --min-replay-us $rl \
      --json $R/tp8o_${rl}_$run.json > $R/tp8o_${rl}_$run.log 2>&1; echo "bench replay>=${rl}us run $run rc=$?"
  done
done
python3 - $R <<'PY'
import json,sys,glob,os
R=sys.argv[1]; want=['cutlass:sm90_warpspecialized_64x128x128_c1x1x1_pdl','cutlass:sm90_pingpong_64x64x256_c1x1x1_swap_pdl','cublaslt:heuristic']
for f in sorted(glob.glob(R+'/tp8o_*.json')):
  d=json.load(open(f)); row=[]
  for p in d['points']:
    t={x['tactic']:x['median_us'] for x in p['timings'] if x.get('ok')}
    best=min(t.values()); bt=min(t,key=t.get)
    row.append('M=%d best %.2f %s | %s' % (p['M'],best,bt.split(':')[1][:28],' '.join('%.2f'%t.get(w,0) for w in want)))
  print(os.path.basename(f)); print('\n'.join('  '+r for r in row))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
# ==== s24_call4.sh
#!/usr/bin/env bash
# Session 24 call 4: tune-between with 6ba4b66: the edge's finalists ranked for the samples by the
# better of their full and (scaled) short round (and e04fa07's segment reach). Baseline: call 2
# (e04fa07) tune 113.9 s, between 1.004 / 1.073 / 175 of 184 (llama70b_tp8.o M=40 1.071).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECOVER_MS FP8GEMM_SETTLE_MS FP8GEMM_SETTLE_MIN_CALL_US FP8GEMM_KEEP_BUSY_MS FP8GEMM_RECORD_CLOCK
OUT=$OUT/acc bash scripts/gpu_acceptance.sh $B tune-between > $OUT/acc_summary.txt 2>&1
tail -5 $OUT/acc_summary.txt
tar xzf $OUT/acc/logs.tar.gz -O logs/tune.log | grep -E "where the time went|^tune: 575"
python3 scripts/auto_regret.py --by-m --worst 10 $OUT/acc/auto_between.csv | sed -n '/timed again/,$p' | cut -c1-200
cd $OUT && tar czf acc.tgz acc && rm -rf acc
