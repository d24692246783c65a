# ==== .gpu/s18_call1.sh
#!/usr/bin/env bash
# Session 18 call 1: tuner A/B, split segments (bisection) off / on, each a whole-suite tune then
# auto against every tactic between bucket edges, with bench's head-to-head confirm.
set -u
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/nvidia-smi.csv"
OUT="$OUT" bash scripts/gpu_tune_ab.sh .gpu/bin "" "--split-segments" > "$OUT/ab_summary.txt" 2>&1
cat "$OUT/ab_summary.txt"
# ==== .gpu/s18_call2.sh
#!/usr/bin/env bash
# Session 18 call 2: (1) CUTLASS 64x128 (warpspecialized, c1x1x1) against cuBLASLt's heuristic
# and default at M=193..256 in bench (twice) and in explain's tune-path round at M=200: is its time
# at a partial fourth M tile consistent between runs and between the two paths? (2) the whole
# acceptance (tune of the suite, auto at the suite's M and between edges, with the head-to-head
# confirm), defaults.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/diag; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
s=$SECONDS
for r in a b; do
  for shape in 4096,8192 4096,21504; do
    timeout 60 $B/fp8gemm bench --shape $shape --m 193,200,206,213,256 --tactics default \
      --add-tactic cutlass:sm90_warpspecialized_64x128x128_c1x1x1 --add-tactic cublaslt:heuristic --replays 9 \
      --json $R/${shape/,/x}_$r.json > $R/${shape/,/x}_$r.log 2>&1 || echo "bench $shape $r rc=$?"
  done
done
timeout 30 $B/fp8gemm explain --shape 4096,8192 --m 200 > $R/explain_4096x8192_m200.txt 2>&1
echo "diag $((SECONDS - s)) s"
python3 - $R <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    for p in json.load(open(f))["points"]:
        e = {x["label"]: x for x in p["entries"]}
        c = p.get("confirm", {})
        print(f'{os.path.basename(f)[:-5]:14} M={p["M"]:4} default {e["cublaslt_default"]["us"]:7.2f}'
              f' cutlass64x128 {e["named_1"]["us"] or 0:7.2f} heuristic {e["named_2"]["us"] or 0:7.2f}')
PY
grep -E "sm90_warpspecialized_64x128x128_c1x1x1 |cublaslt:heuristic|default|choice" $R/explain_4096x8192_m200.txt | head -12
OUT=$OUT/acc bash scripts/gpu_acceptance.sh $B tune > $OUT/acc_summary.txt 2>&1
tail -12 $OUT/acc_summary.txt
for f in auto_suite auto_between; do
  echo "==== $f"; python3 scripts/auto_regret.py --by-m --worst 8 $OUT/acc/$f.csv | cut -c1-200
done
# ==== .gpu/s18_call3.sh
#!/usr/bin/env bash
# Session 18 call 3: every GPU test and `check` on the final binaries; bench with and without the
# head-to-head confirm on one shape (the flag, the CSV columns).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
R=$OUT/t; mkdir -p $R
s=$SECONDS; timeout 300 $B/fp8gemm_gpu_tests --gtest_brief=1 > $R/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)' $R/gpu_tests.txt | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure" -A4 $R/gpu_tests.txt | head -20
s=$SECONDS; timeout 90 $B/fp8gemm check --quiet > $R/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $R/check.txt)"
timeout 60 $B/fp8gemm bench --shape 8192,1024 --m 32 --tactics all --csv $R/confirm_on.csv > $R/confirm_on.txt 2>&1; echo "bench confirm rc=$?"
timeout 60 $B/fp8gemm bench --shape 8192,1024 --m 32 --tactics all --no-confirm-auto --csv $R/confirm_off.csv > $R/confirm_off.txt 2>&1; echo "bench no-confirm rc=$?"
grep -c confirm_regret $R/confirm_on.csv $R/confirm_off.csv
grep -E "timed again|regret|first pass" $R/confirm_on.txt $R/confirm_off.txt | cut -c1-220
# ==== .gpu/s18_call4.sh
#!/usr/bin/env bash
# Session 18 call 4: tuner A/B, retime of close calls off / on (each a whole-suite tune, then auto
# against every tactic between bucket edges, with bench's head-to-head confirm).
set -u
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
OUT="$OUT" bash scripts/gpu_tune_ab.sh .gpu/bin "" "--retime-close-calls" > "$OUT/ab_summary.txt" 2>&1
cat "$OUT/ab_summary.txt"
# ==== .gpu/s18_call5.sh
#!/usr/bin/env bash
# Session 18 call 5: untuned bench at M=1,2,16384 (each shape's M=1 follows the previous shape's
# M=16384) with the head-to-head rounds after all first passes: is M=1's first pass unperturbed?
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
s=$SECONDS
timeout 200 $B/fp8gemm bench --model all --m 1,2,16384 --tactics all --csv $OUT/untuned_1_2_16384.csv > $OUT/untuned_1_2_16384.log 2>&1
echo "bench rc=$? $((SECONDS-s)) s"
python3 scripts/auto_regret.py --by-m --worst 6 $OUT/untuned_1_2_16384.csv | cut -c1-160
