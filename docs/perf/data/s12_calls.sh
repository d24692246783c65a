# Session 12's device calls (docs/perf/h200.md), as they ran from a .gpu/ bundle: .gpu/bin held the binaries named there,
# .gpu/ the scripts of scripts/ (gpu_acceptance.sh, gpu_tune_ab.sh, auto_regret.py, summarize.py).

######## .gpu/s12_call1.sh
#!/usr/bin/env bash
# Session 12 call 1 (binaries of 8454728, no cudnn backend): --adaptive-floor-interior A/B
# (whole-suite tune, then auto between edges), the bench --add-tactic smoke run, and where cuDNN
# lives on this machine.
cd "$(dirname "$0")/.."
B=.gpu/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
( find / -xdev -name 'libcudnn.so*' 2>/dev/null | head -8; python3 -c 'import nvidia.cudnn,os;print(list(nvidia.cudnn.__path__))' 2>&1; ldconfig -p | grep cudnn | head -3 ) > $OUT/cudnn_probe.txt 2>&1
cat $OUT/cudnn_probe.txt
s=$SECONDS; timeout 60 $B/fp8gemm bench --shape 4096,4096 --m 1,16 --backend small_m \
  --add-tactic "small_m:wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1,wload=cp" --add-tactic cublaslt:heuristic > $OUT/add_tactic.txt 2>&1
echo "add_tactic rc=$? $((SECONDS-s))s"; tail -8 $OUT/add_tactic.txt
s=$SECONDS; timeout 30 $B/fp8gemm bench --shape 4096,4096 --m 1 --add-tactic "small_m:wgmma,rows=64,splitk=2,stages=12,l2pf=0,pdl=1,early=4,wload=cp" > $OUT/add_tactic_bad.txt 2>&1
echo "add_tactic(never runs) rc=$? (expect nonzero) $((SECONDS-s))s"; tail -2 $OUT/add_tactic_bad.txt
OUT=$OUT timeout 420 bash .gpu/gpu_tune_ab.sh $B "" "--adaptive-floor-interior"

######## .gpu/s12_call2.sh
#!/usr/bin/env bash
# Session 12 call 2 (binaries of 44cf45d: the cudnn backend): info, every GPU test, check, the
# cudnn tactics against cuBLASLt's default over the suite, and a one-model tune (cudnn's cost).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
$B/fp8gemm info > $OUT/info.txt 2>&1; grep -iE "gpu|cudnn|backend" $OUT/info.txt | head -12
s=$SECONDS; timeout 270 $B/fp8gemm_gpu_tests --gtest_brief=1 > $OUT/gtest_all.txt 2>&1
echo "gtest rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests? from .* ran' $OUT/gtest_all.txt | tr '\n' ' ')"
grep -E "FAILED|Failure|\[cudnn\]" $OUT/gtest_all.txt | head -20
s=$SECONDS; timeout 100 $B/fp8gemm check --quiet > $OUT/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $OUT/check.txt)"
s=$SECONDS; timeout 100 $B/fp8gemm check --backend cudnn > $OUT/check_cudnn.txt 2>&1; echo "check cudnn rc=$? $((SECONDS-s))s $(tail -1 $OUT/check_cudnn.txt)"
s=$SECONDS; timeout 150 $B/fp8gemm bench --model all --m 1,16,128,1024,4096 --backend cudnn --tactics all \
  --csv $OUT/cudnn_suite.csv > $OUT/cudnn_bench.txt 2>&1; echo "cudnn bench rc=$? $((SECONDS-s))s"; tail -9 $OUT/cudnn_bench.txt
s=$SECONDS; timeout 90 $B/fp8gemm tune --model llama8b --m buckets --cache /tmp/c.json --json $OUT/tune_llama8b.json > $OUT/tune_llama8b.log 2>&1
echo "tune llama8b rc=$? $((SECONDS-s))s"; grep -E "where the time went|keys," $OUT/tune_llama8b.log | head -5
grep -c '"cudnn:' $OUT/tune_llama8b.json; grep -o '"choice": *"cudnn:[^"]*"' $OUT/tune_llama8b.json | sort | uniq -c | head
gzip $OUT/tune_llama8b.json $OUT/gtest_all.txt

######## .gpu/s12_call3.sh
#!/usr/bin/env bash
# Session 12 call 3: the cudnn backend with its listing's reasons; cudnn GPU tests, check, bench.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
ls /usr/lib/x86_64-linux-gnu/ | grep -E "libcudart|libnvrtc|libcublasLt" | head; ldconfig -p | grep -E "libcudart.so|libnvrtc.so" | head -4
s=$SECONDS; CUDNN_FRONTEND_LOG_INFO=1 CUDNN_FRONTEND_LOG_FILE=$OUT/fe_log.txt CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=$OUT/cudnn_log.txt \
  timeout 60 $B/fp8gemm_gpu_tests --gtest_filter='CudnnGpu.NamesRebuildTheirPlans' > $OUT/gtest_names.txt 2>&1
echo "names rc=$? $((SECONDS-s))s"; grep -vE "^\[ " $OUT/gtest_names.txt | head -20
grep -iE "error|not supported|fail|runtime_comp" $OUT/fe_log.txt 2>/dev/null | head -20
s=$SECONDS; timeout 200 $B/fp8gemm_gpu_tests --gtest_filter='*Cudnn*' > $OUT/gtest_cudnn.txt 2>&1
echo "gtest cudnn rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED)|tests? from .* ran' $OUT/gtest_cudnn.txt | tr '\n' ' ')"
grep -E "Failure|\[cudnn\]|threw|no engine" $OUT/gtest_cudnn.txt | head -20
s=$SECONDS; timeout 100 $B/fp8gemm check --backend cudnn > $OUT/check_cudnn.txt 2>&1; echo "check cudnn rc=$? $((SECONDS-s))s $(tail -1 $OUT/check_cudnn.txt)"
s=$SECONDS; timeout 150 $B/fp8gemm bench --model all --m 1,16,128,1024,4096 --backend cudnn --tactics all \
  --csv $OUT/cudnn_suite.csv > $OUT/cudnn_bench.txt 2>&1; echo "cudnn bench rc=$? $((SECONDS-s))s"; tail -9 $OUT/cudnn_bench.txt
gzip -f $OUT/fe_log.txt $OUT/cudnn_log.txt 2>/dev/null

######## .gpu/s12_call4.sh
#!/usr/bin/env bash
# Session 12 call 4 (the cudnn backend, runtime-compiled plans listed only on request): every GPU
# test, check (which lists them), then the whole-suite tune and auto between bucket edges (does the
# cudnn backend's listing cost the tune anything?).
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
s=$SECONDS; timeout 260 $B/fp8gemm_gpu_tests --gtest_brief=1 > $OUT/gtest_all.txt 2>&1
echo "gtest rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests? from .* ran' $OUT/gtest_all.txt | tr '\n' ' ')"
grep -E "FAILED|Failure|\[cudnn\]" $OUT/gtest_all.txt | head -20
s=$SECONDS; timeout 100 $B/fp8gemm check --quiet > $OUT/check.txt 2>&1; echo "check rc=$? $((SECONDS-s))s $(tail -1 $OUT/check.txt)"
grep -c "cudnn: [1-9]" $OUT/check.txt
OUT=$OUT/tb timeout 300 bash .gpu/gpu_acceptance.sh $B tune-between > $OUT/tb_summary.txt 2>&1; tail -6 $OUT/tb_summary.txt
python3 .gpu/auto_regret.py --by-m --worst 5 $OUT/tb/auto_between.csv 2>&1 | head -24
grep -E "where the time went|keys," $OUT/tb/logs.tar.gz 2>/dev/null; tar -xzOf $OUT/tb/logs.tar.gz logs/tune.log 2>/dev/null | grep -E "where the time went|keys," | head
rm -f $OUT/tb/cache.json.lock; gzip $OUT/gtest_all.txt

######## .gpu/s12_call5.sh
#!/usr/bin/env bash
# Session 12 call 5: what the cudnn backend's listing costs the whole-suite tune: the same binary
# with cuDNN unloadable (FP8GEMM_CUDNN_LIBRARY=/nonexistent: backend unavailable) and with it, in turn.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
for v in nocudnn cudnn; do
  if [ $v = nocudnn ]; then export FP8GEMM_CUDNN_LIBRARY=/nonexistent; else unset FP8GEMM_CUDNN_LIBRARY; fi
  s=$SECONDS; timeout 185 $B/fp8gemm tune --model all --m buckets --run-budget-s 170 --cache /tmp/$v.json > $OUT/tune_$v.log 2>&1
  echo "== $v rc=$? $((SECONDS-s))s"; grep -E "keys,|time went" $OUT/tune_$v.log
done

######## .gpu/s12_call6.sh
#!/usr/bin/env bash
# Session 12 call 6: the whole-suite tune with the cudnn backend available, after its listing
# went to one heuristic query per type signature when no plan would be listed.
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE FP8GEMM_CUDNN_LIBRARY
$B/fp8gemm info 2>&1 | grep cudnn
s=$SECONDS; timeout 175 $B/fp8gemm tune --model all --m buckets --run-budget-s 170 --cache /tmp/c.json > $OUT/tune_cudnn_sig.log 2>&1
echo "== cudnn (per-signature listing) rc=$? $((SECONDS-s))s"; grep -E "keys,|time went" $OUT/tune_cudnn_sig.log
