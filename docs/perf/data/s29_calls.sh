# ==== s29_call1.sh
#!/usr/bin/env bash
# Session 29 call 1: both power states. The GraphTimer and tuner GPU tests; then two whole-suite
# tunes with the auto-between-edges judge on each cache, the power-state pass on (A) and off (B),
# SM clocks recorded in both.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv,noheader
s=$SECONDS
timeout 200 $B/fp8gemm_gpu_tests --gtest_filter='GraphTimer.*:*Tune*:*Auto*' > $R/gpu_tests.log 2>&1
echo "GraphTimer/tune GPU tests rc=$? $((SECONDS-s))s"; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" $R/gpu_tests.log | head -12
export FP8GEMM_RECORD_CLOCK=1
OUT=$R/A TUNE_ARGS="--power-states" bash scripts/gpu_acceptance.sh $B tune-between > $R/A_summary.txt 2>&1
OUT=$R/B TUNE_ARGS="--no-power-states" bash scripts/gpu_acceptance.sh $B tune-between > $R/B_summary.txt 2>&1
for v in A B; do
  echo "==== $v"
  tar -xzf $R/$v/logs.tar.gz -C $R/$v logs/tune.log 2>/dev/null; grep -E "^tune:" $R/$v/logs/tune.log | cut -c1-300
  tail -5 $R/${v}_summary.txt | cut -c1-150
  python3 scripts/auto_regret.py --by-m --worst 12 $R/$v/auto_between.csv 2>&1 | tail -24 | cut -c1-170
done
# ==== s29_call2.sh
#!/usr/bin/env bash
# Session 29 call 2: both power states. The GraphTimer and tuner GPU tests; then two whole-suite
# tunes with the auto-between-edges judge on each cache, the pass off (B) first, then on (A), with the rule that a winner holds across its segment,
# SM clocks recorded in both.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv,noheader
s=$SECONDS
timeout 200 $B/fp8gemm_gpu_tests --gtest_filter='GraphTimer.*:*Tune*:*Auto*' > $R/gpu_tests.log 2>&1
echo "GraphTimer/tune GPU tests rc=$? $((SECONDS-s))s"; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" $R/gpu_tests.log | head -12
export FP8GEMM_RECORD_CLOCK=1
OUT=$R/B TUNE_ARGS="--no-power-states" bash scripts/gpu_acceptance.sh $B tune-between > $R/B_summary.txt 2>&1
OUT=$R/A TUNE_ARGS="--power-states" bash scripts/gpu_acceptance.sh $B tune-between > $R/A_summary.txt 2>&1
for v in A B; do
  echo "==== $v"
  tar -xzf $R/$v/logs.tar.gz -C $R/$v logs/tune.log 2>/dev/null; grep -E "^tune:" $R/$v/logs/tune.log | cut -c1-300
  tail -5 $R/${v}_summary.txt | cut -c1-150
  python3 scripts/auto_regret.py --by-m --worst 12 $R/$v/auto_between.csv 2>&1 | tail -24 | cut -c1-170
  rm -rf $R/$v/logs $R/$v/cache.json $R/$v/cache.json.lock  # the tune's JSON is in logs.tar.gz
done
# ==== s29_call3.sh
#!/usr/bin/env bash
# Session 29 call 3: every GPU test, `check`, then a whole-suite tune with both power states (the
# winner timed at its segment's lowest M always) and auto between bucket edges on its cache; no
# clock recording (the tune's time is a target).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; R=$OUT; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_RECORD_CLOCK
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv,noheader
OUT=$R/T bash scripts/gpu_acceptance.sh $B tests > $R/T_summary.txt 2>&1
tail -5 $R/T_summary.txt | cut -c1-160
tar -xzf $R/T/logs.tar.gz -C $R/T logs/gpu_tests.log; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" $R/T/logs/gpu_tests.log | head -8; rm -rf $R/T/logs
OUT=$R/A TUNE_ARGS="--power-states" bash scripts/gpu_acceptance.sh $B tune-between > $R/A_summary.txt 2>&1
tar -xzf $R/A/logs.tar.gz -C $R/A logs/tune.log; grep -E "^tune:" $R/A/logs/tune.log | cut -c1-300
tail -5 $R/A_summary.txt | cut -c1-150
python3 scripts/auto_regret.py --by-m --worst 12 $R/A/auto_between.csv 2>&1 | tail -24 | cut -c1-170
rm -rf $R/A/logs $R/A/cache.json $R/A/cache.json.lock
