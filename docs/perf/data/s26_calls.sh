# ---- .gpu-s26/call1.sh
#!/usr/bin/env bash
# Session 26 call 1 (638b361 + 2dfb898): every GPU test, the whole-suite tune with the lower
# bucket's choice timed at each bucket's lowest sample, then two processes judging its cache
# between edges with the new judge (auto against up to 3 contenders within 3%).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm fp8gemm_gpu_tests; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
s=$SECONDS
timeout 240 $B/fp8gemm_gpu_tests --gtest_brief=1 > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$? $((SECONDS-s))s: $(tail -n 1 $OUT/gpu_tests.log)"
s=$SECONDS
OUT=$OUT/acc scripts/gpu_acceptance.sh $B tune-between > $OUT/acc_summary.txt 2>&1
echo "acceptance $((SECONDS-s))s"
s=$SECONDS
FP8GEMM_CACHE=$OUT/acc/cache.json timeout 150 $B/fp8gemm bench --model all --m 3,12,40,100,200,300,700,3000 --tactics all \
  --csv $OUT/between_p2.csv > $OUT/between_p2.log 2>&1
echo "second judge rc=$? $((SECONDS-s))s"
cat $OUT/acc_summary.txt | tail -12
for f in $OUT/acc/auto_between.csv $OUT/between_p2.csv; do
  [ -f $f ] && python3 scripts/auto_regret.py --by-m --worst 8 $f 2>&1 | tail -22
done

# ---- .gpu-s26/call2.sh
#!/usr/bin/env bash
# Session 26 call 2 (2dfb898): untuned auto (the default table) over the whole DESIGN suite with
# the new judge (bench phase without the GPU tests, which call 1 ran), and where cuBLASLt's 64xM/1
# tile stops winning above M=192 at 6144x4096 (llama8b.qkv).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
s=$SECONDS
timeout 200 $B/fp8gemm bench --model all --m 1,2,4,8,16,24,32,48,64,96,128,192,256 --tactics all \
  --csv $OUT/suite_small.csv --json $OUT/suite_small.json > $OUT/suite_small.log 2>&1
echo "bench_small rc=$? $((SECONDS-s))s"
s=$SECONDS
timeout 330 $B/fp8gemm bench --model all --m 384,512,1024,2048,4096,8192,16384 --tactics all \
  --csv $OUT/suite_large.csv --json $OUT/suite_large.json > $OUT/suite_large.log 2>&1
echo "bench_large rc=$? $((SECONDS-s))s"
s=$SECONDS
timeout 40 $B/fp8gemm bench --shape 6144,4096 --m 193,196,200,204,208,213,224 --tactics all --no-confirm-auto \
  --csv $OUT/qkv_193_224.csv --json $OUT/qkv_193_224.json > $OUT/qkv_193_224.log 2>&1
echo "qkv rc=$? $((SECONDS-s))s"
python3 src/backends/small_m/bench/device/summarize.py $OUT/suite_small.json > $OUT/small_m_summary.txt 2>&1
gzip -9 $OUT/*.json
python3 scripts/auto_regret.py --by-m --worst 8 $OUT/suite_small.csv $OUT/suite_large.csv 2>&1 | tail -30
tail -12 $OUT/small_m_summary.txt

# ---- .gpu-s26/call3.sh
#!/usr/bin/env bash
# Session 26 call 3 (the flag's commit): A/B of the lower bucket's choice at the lowest sample, one
# machine: whole-suite tune + between-edges bench, with it (default) and without.
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
bash scripts/gpu_tune_ab.sh $B "" "--no-lower-choice-at-first-sample"

# ---- .gpu-s26/call4.sh
#!/usr/bin/env bash
# Session 26 call 4 (d0bf662): the acceptance's tune-between with the low end's kernel keeping
# its tiles (default on), to compare with call 3 (another machine).
set -u
cd "$(dirname "$0")/.."
B=.gpu/bin; unset FP8GEMM_CACHE FP8GEMM_TUNE
for f in fp8gemm; do [ -f $B/$f ] || xz -dk $B/$f.xz; chmod +x $B/$f; done
OUT=$OUT/acc timeout 290 scripts/gpu_acceptance.sh $B tune-between > $OUT/acc_summary.txt 2>&1
tail -6 $OUT/acc_summary.txt
python3 scripts/auto_regret.py --by-m --worst 8 $OUT/acc/auto_between.csv 2>&1 | tail -22
grep -c "keeps the M up to" <(tar -xzOf $OUT/acc/logs.tar.gz logs/tune.json) || true
