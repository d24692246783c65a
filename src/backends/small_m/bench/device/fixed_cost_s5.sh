#!/bin/bash
# Session 5 device calls (issue 4): SET=s5a: timelines, geometry/occupancy sweep, late trigger,
# per-warp push reduction, then `fp8gemm bench` at M = 1, 16 (the unchanged library, the session's
# reference); SET=s5b: activations once per block; SET=s5c: stream probes. Binaries (built here) in $B with
# fixed_cost_table.py and summarize.py beside them.
B=${B:-.gpu-smallm/s5}
SET=${SET:-s5b}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 200 $B/small_m_fixed_cost --set $SET > $OUT/diag_$SET.txt 2> $OUT/diag_$SET.err; echo "diag rc=$?"
tail -3 $OUT/diag_$SET.err; grep "^#" $OUT/diag_$SET.txt
grep "^trace|" $OUT/diag_$SET.txt | sed 's/^trace|//' | cut -c1-200
python3 $B/fixed_cost_table.py $OUT/diag_$SET.txt | cut -c1-220
if [ "$SET" = s5a ]; then
  timeout 80 $B/fp8gemm bench --model all --m 1,16 --backend small_m --tactics all --max-finalists 12 --replays 7 \
    --json $OUT/b0.json > $OUT/bench0.log 2>&1; echo "bench0 rc=$?"
  python3 $B/summarize.py $OUT/b0.json > $OUT/table0.txt 2>&1
  grep -vE "^(llama|tp8|nemo|nano|super|[0-9]+x[0-9]+)" $OUT/table0.txt | grep -v "^  " | head -16
fi
