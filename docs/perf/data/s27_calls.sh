# ---- .gpu-s27/call1.sh
#!/usr/bin/env bash
# Session 27 call 1: the GraphTimer whose host capture overlaps GPU work (round 0 / the short
# round's replays launched as each graph is captured; probes in one batch). Its GPU tests, then a
# whole-suite tune with the overlap and without it (FP8GEMM_OVERLAP_CAPTURE=0) on one machine, the
# first cache judged between edges, and nemoH8b.down M=12 with weights over 2x and 4x L2.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm $B/fp8gemm_gpu_tests; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv > $OUT/smi.txt 2>&1
T0=$SECONDS
s=$SECONDS
timeout 150 $B/fp8gemm_gpu_tests --gtest_brief=1 --gtest_filter='GraphTimer*:TuneGpu*:Api*' > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s: $(tail -n 1 $OUT/gpu_tests.log)"
W=$OUT/w; mkdir -p $W
for v in new old; do
  ov=1; [ $v = old ] && ov=0
  s=$SECONDS
  FP8GEMM_OVERLAP_CAPTURE=$ov timeout 178 $B/fp8gemm tune --model all --m buckets --run-budget-s 170 --cache $W/cache_$v.json --json $W/tune_$v.json > $W/tune_$v.log 2>&1
  echo "tune $v rc=$? $((SECONDS-s))s: $(tail -n 1 $W/tune_$v.log)"
done
s=$SECONDS
FP8GEMM_CACHE=$W/cache_new.json timeout 170 $B/fp8gemm bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all \
  --csv $OUT/auto_between_new.csv > $W/between_new.log 2>&1
echo "judge rc=$? $((SECONDS-s))s"
for mult in 2 4 2 4; do
  [ $((SECONDS-T0)) -gt 520 ] && break
  FP8GEMM_WEIGHT_L2_MULTIPLE=$mult FP8GEMM_CACHE=$W/cache_new.json timeout 30 $B/fp8gemm bench --shape 4096,21504 --m 12 \
    --tactics all --csv $W/nemo_down12_l2x$mult.csv >> $W/nemo_down12_l2x$mult.log 2>&1
  echo "l2x$mult rc=$?"
  python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1])))[0]; print('  first pass: auto', r['auto_us'], r['auto_tactic'][:50], '| small_m', r['small_m_best_us'], '| cutlass', r['cutlass_best_us'], r['cutlass_best_tactic'][8:50], '| judge', r['confirm_regret'], r['confirm_round_ratios'], r['confirm_best_tactic'][:50])" $W/nemo_down12_l2x$mult.csv 2>&1
done
gzip -9 $W/tune_*.json
tar -C $OUT -czf $OUT/w.tar.gz w && rm -rf $W
python3 - $OUT/w.tar.gz <<'PY'
import sys, tarfile, json, gzip, collections
t = tarfile.open(sys.argv[1])
for v in ("new", "old"):
    try:
        d = json.load(gzip.open(t.extractfile(f"w/tune_{v}.json.gz")))
    except Exception as e:
        print(v, "no json", e); continue
    tot = collections.Counter(); el = 0
    for dec in d["decisions"]:
        for k, x in dec.get("phase_ms", {}).items(): tot[k] += x
        el += dec.get("elapsed_ms", 0)
    print(f"{v}: elapsed {el/1000:.1f} s, keys {len(d['decisions'])}, off default {sum(1 for x in d['decisions'] if x['choice'] != x['default'])};",
          ", ".join(f"{k} {x/1000:.1f}" for k, x in sorted(tot.items())))
PY
python3 scripts/auto_regret.py --by-m --worst 8 $OUT/auto_between_new.csv 2>&1 | tail -24

# ---- .gpu-s27/call2.sh
#!/usr/bin/env bash
# Session 27 call 2 (be179ad): every GPU test and `check` with the overlapping GraphTimer, then
# call 1's cache judged between edges again with the SM clock recorded (FP8GEMM_RECORD_CLOCK=1):
# were nemoH8b.down and llama8b.down M=12 (small_m at 1.07-1.11 head to head, 1.000 in the first
# pass and when benched alone) timed at lower clocks in their head-to-head rounds?
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm $B/fp8gemm_gpu_tests; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
s=$SECONDS
timeout 270 $B/fp8gemm_gpu_tests --gtest_brief=1 > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s: $(tail -n 1 $OUT/gpu_tests.log)"
s=$SECONDS
timeout 90 $B/fp8gemm check --quiet > $OUT/check.log 2>&1
echo "check rc=$? $((SECONDS-s))s: $(tail -n 1 $OUT/check.log)"
s=$SECONDS
FP8GEMM_RECORD_CLOCK=1 FP8GEMM_CACHE=.gpu-s27/cache_call1.json timeout 170 $B/fp8gemm bench --model all \
  --m 3,12,40,100,200,300,700,3000 --tactics all --csv $OUT/between_clock.csv --json $OUT/between_clock.json > $OUT/between_clock.log 2>&1
echo "judge rc=$? $((SECONDS-s))s"
gzip -9 $OUT/between_clock.json $OUT/between_clock.log
python3 scripts/auto_regret.py --by-m --worst 6 $OUT/between_clock.csv 2>&1 | tail -18

# ---- .gpu-s27/call3.sh
#!/usr/bin/env bash
# Session 27 call 3 (be179ad): call 1's cache judged between edges by M and lightest first, SM
# clock recorded (A/B of the head-to-head order on one machine; call 2 recorded M=12 weight-stream
# rounds at ~1400-1500 MHz lightest first, ~1830 in their first pass), then the suite's M values
# judged by M with the same cache.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
export FP8GEMM_CACHE=.gpu-s27/cache_call1.json FP8GEMM_RECORD_CLOCK=1
for order in m time; do
  s=$SECONDS
  timeout 120 $B/fp8gemm bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all --confirm-order $order \
    --csv $OUT/between_$order.csv --json $OUT/between_$order.json > $OUT/between_$order.log 2>&1
  echo "judge $order rc=$? $((SECONDS-s))s"
done
s=$SECONDS
timeout 400 $B/fp8gemm bench --model all --m suite --tactics all --confirm-order m \
  --csv $OUT/suite_m.csv --json $OUT/suite_m.json > $OUT/suite_m.log 2>&1
echo "suite by M rc=$? $((SECONDS-s))s"
gzip -9 $OUT/*.json $OUT/*.log
for f in between_m between_time suite_m; do echo "== $f"; python3 scripts/auto_regret.py --by-m --worst 4 $OUT/$f.csv 2>&1 | grep -v "^ *$" | tail -16; done

# ---- .gpu-s27/call4.sh
#!/usr/bin/env bash
# Session 27 call 4: every GPU test and `check` on the final GraphTimer (after the review).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in $B/fp8gemm $B/fp8gemm_gpu_tests; do [ -f $f ] || xz -dk $f.xz; chmod +x $f; done
s=$SECONDS
timeout 270 $B/fp8gemm_gpu_tests --gtest_brief=1 > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s: $(tail -n 1 $OUT/gpu_tests.log)"
s=$SECONDS
timeout 60 $B/fp8gemm check --quiet > $OUT/check.log 2>&1
echo "check rc=$? $((SECONDS-s))s: $(tail -n 1 $OUT/check.log)"
