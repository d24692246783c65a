# Session 10's device calls (docs/perf/h200.md), as they ran from a .gpu/ bundle: .gpu/bin held the
# binaries named there, .gpu/ the scripts of scripts/ (gpu_acceptance.sh, gpu_tune_ab.sh, auto_regret.py).

######## .gpu/s10_call1.sh
#!/usr/bin/env bash
# Session 10 call 1: every GPU test + check (session 9's Context refactor and capture test not yet
# run on a GPU), then the tuner A/B: defaults vs --kept-floor-adapts (whole-suite tune, then auto
# against every tactic between edges), each variant archived as soon as it ends.
cd "$(dirname "$0")/.."
B=.gpu/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/t
OUT=$OUT/t bash .gpu/gpu_acceptance.sh $B tests > $OUT/tests_summary.txt 2>&1
mv $OUT/t/logs.tar.gz $OUT/tests_logs.tar.gz; rm -rf $OUT/t
tail -4 $OUT/tests_summary.txt
i=0
for args in "" "--kept-floor-adapts"; do
  i=$((i+1)); W=$OUT/v$i; mkdir -p $W; echo "$args" > $W/tune_args.txt
  TUNE_ARGS="$args" OUT=$W bash .gpu/gpu_acceptance.sh $B tune-between > $W/summary.txt 2>&1
  tar -C $OUT -czf $OUT/v$i.tar.gz v$i && rm -rf $W.keep
  echo "==== v$i: tune $args"; grep -E "^tune " $W/summary.txt
  python3 .gpu/auto_regret.py --by-m --worst 6 $W/auto_between.csv 2>/dev/null | cut -c1-200
  rm -rf $W
done
