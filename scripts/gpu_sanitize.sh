#!/usr/bin/env bash
# compute-sanitizer's memcheck, racecheck, synccheck and initcheck over every backend's tactics
# (`fp8gemm check` on a few small problems), in one GPU run that fits a 10-minute call.
#
#   scripts/gpu_sanitize.sh [BIN_DIR]        BIN_DIR holds fp8gemm and fp8gemm_gpu_tests (or a build
#                                            tree: tools/cli/, tests/); default build
#   scripts/gpu_sanitize.sh --dry-run [BIN]  the plan: every step's command and share, nothing run
#   scripts/gpu_sanitize.sh --self-test      the log parser on canned sanitizer output (no GPU)
#
# Our own kernels (small_m, mid_m) get all four tools, the issue's split-K case first; the vendor
# backends (cuBLASLt, CUTLASS, cuDNN) get memcheck and initcheck over their cases, and racecheck
# and synccheck over every tactic at one small point (VR), over all their cases only with
# SANITIZE_VENDOR_RACE=1: racecheck over their many tactics would take most of the run.
# Steps run in that order, each under a
# timeout drawn by weight from what is left of SANITIZE_BUDGET_S (default 520), so time a step
# does not use goes to the later ones. SANITIZE_ONLY (an extended regex over "CASE:backend", e.g.
# 'S1|T' or 'cutlass') keeps only the matching cases. Logs: $OUT/sanitize/<tool>.log (default
# OUT=./gpu-out), one section per step; the table (tool x backend -> cases run, tactics or tests,
# check failures, errors, racecheck hazards, rc, seconds) is printed last and kept in
# $OUT/sanitize/summary.txt. Racecheck's errors are its reports (errors and warnings); its
# hazards the instances they count. Exit status: 0 every step ran clean; 1 a finding, a check
# failure, a timeout or a tool error.
set -uo pipefail

# --- the plan -------------------------------------------------------------------------------
# name|backend|weight|program|arguments[|tools] (program: check = fp8gemm check --backend BACKEND,
# or gtest = fp8gemm_gpu_tests; tools: a space-separated subset of the backend's tools, default all). small_m: S1 is the split-K case of issue 44 (TMA, cp.async and persistent
# rings, every split, DSMEM reduction); S2 the activation-once kernel (m=1), K pairs and persistent
# grids walking several batches (NP 8 and 24); S3 fitted rows (compact cp.async tiles), kblocks=2/4
# and NP=32; T the GPU test whose persistent clusters reduce split-K over several units each (no
# candidate list offers that, so `check` never runs it). mid_m (M1, where built): every tactic at
# an even and an odd M on a split-K shape and a ragged one. cuBLASLt's initcheck gets one small
# point (V1): over V's four it did not finish in two minutes. VR: racecheck and synccheck of every
# vendor tactic at M = 64 (CUTLASS's swap and cluster kernels, cuBLASLt's split-K and cluster ones).
CASES=(
  "S1|small_m|1.3|check|--shape 2560,8192 --m 5"
  "S2|small_m|1.1|check|--shape 1024,1024 --batch 3 --m 1,17"
  "S3|small_m|0.6|check|--shape 5120,1024 --m 32"
  "T|small_m|1.0|gtest|--gtest_filter=SmallM.WgmmaPersistentLoopsAndSplits"
  "M1|mid_m|1.0|check|--shape 2560,8192 --shape 1040,2064 --m 48,129"
  "V|cublaslt|1.0|check|--shape 1024,2048 --shape 2560,8192 --m 1,64|memcheck"
  "V1|cublaslt|1.5|check|--shape 1024,2048 --m 1|initcheck"
  "V|cutlass|1.0|check|--shape 1024,2048 --shape 2560,8192 --m 1,64"
  "V|cudnn|1.0|check|--shape 1024,2048 --shape 2560,8192 --m 1,64"
  "VR|cublaslt|0.8|check|--shape 1024,2048 --m 64|racecheck synccheck"
  "VR|cutlass|1.0|check|--shape 1024,2048 --m 64|racecheck synccheck"
  "VR|cudnn|0.4|check|--shape 1024,2048 --m 64|racecheck synccheck"
)
TOOLS_OURS=(racecheck synccheck memcheck initcheck)
TOOLS_VENDOR=(memcheck initcheck)
[ "${SANITIZE_VENDOR_RACE:-0}" = 1 ] && TOOLS_VENDOR=(memcheck initcheck racecheck synccheck)
tool_weight() { case $1 in racecheck) echo 3 ;; synccheck) echo 1 ;; *) echo 1.5 ;; esac; }
MIN_STEP_S=20  # a step with less than this left is skipped (too short to start the sanitizer)

# --- log parsing ----------------------------------------------------------------------------
# parse LOG TOOL -> "tactics failed errors hazards tool_errors": the check's own counts, the
# sanitizer's summary ("?" where it never printed one: killed), racecheck's hazard instances
# (the [N hazards] of its reports, else the reports shown), and the sanitizer's own failures.
parse() {
  local log=$1 tool=$2
  local tactics failed errors hazards tool_errors summaries
  # `check: P passed, F failed`, or gtest's `[  PASSED  ] P tests.` and `[  FAILED  ] F tests, listed below`
  tactics=$(grep -E '^check: [0-9]+ passed, [0-9]+ failed|^\[  (PASSED|FAILED)  \] [0-9]+ tests?[.,]' "$log" |
    sed -E 's/^check: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/; s/^\[  (PASSED|FAILED)  \] ([0-9]+) .*/\2/' |
    awk '{t += $1 + $2} END {print t + 0}')
  failed=$(grep -E '^check: [0-9]+ passed, [0-9]+ failed|^\[  FAILED  \] [0-9]+ tests?, listed below' "$log" |
    sed -E 's/^check: [0-9]+ passed, ([0-9]+) failed.*/\1/; s/^\[  FAILED  \] ([0-9]+) .*/\1/' | awk '{f += $1} END {print f + 0}')
  tool_errors=$(grep -cE '^========= (Error: (Device not supported|Target application)|Internal Sanitizer Error|Sanitizer Error|Error: No attachable)' "$log")
  if [ "$tool" = racecheck ]; then
    summaries=$(grep -E 'RACECHECK SUMMARY: [0-9]+ hazards? displayed' "$log")
    if [ -z "$summaries" ]; then
      errors='?'
      hazards='?'
    else
      errors=$(sed -nE 's/.*RACECHECK SUMMARY: [0-9]+ hazards? displayed \(([0-9]+) errors?, ([0-9]+) warnings?\).*/\1 \2/p' "$log" |
        awk '{e += $1 + $2} END {print e + 0}')
      hazards=$(grep -oE '\[[0-9]+ hazards?\]' "$log" | tr -dc '0-9\n' | awk '{h += $1} END {print h + 0}')
      [ "$hazards" = 0 ] && hazards=$(echo "$summaries" | sed -nE 's/.*SUMMARY: ([0-9]+) hazard.*/\1/p' | awk '{h += $1} END {print h + 0}')
    fi
  else
    summaries=$(grep -E 'ERROR SUMMARY: [0-9]+ errors?' "$log")
    if [ -z "$summaries" ]; then errors='?'; else
      errors=$(echo "$summaries" | sed -nE 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/p' | awk '{e += $1} END {print e + 0}')
    fi
    hazards='-'
  fi
  echo "$tactics $failed $errors $hazards $tool_errors"
}

self_test() {
  local d
  d=$(mktemp -d)
  cat > "$d/race.log" <<'EOF'
========= COMPUTE-SANITIZER
check: 130 passed, 0 failed
========= Error: Race reported between Write access at small_m_wgmma_persistent_kernel+0x1a20
=========     and Read access at small_m_wgmma_persistent_kernel+0x18e0 [42000 hazards]
========= Warning: Race reported between Read access at k+0x10
=========     and Write access at k+0x20 [7 hazards]
========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
EOF
  cat > "$d/mem.log" <<'EOF'
========= COMPUTE-SANITIZER
check: 60 passed, 2 failed
========= ERROR SUMMARY: 0 errors
========= COMPUTE-SANITIZER
check: 10 passed, 0 failed
========= Invalid __global__ write of size 4 bytes
========= ERROR SUMMARY: 1 error
EOF
  cat > "$d/gtest.log" <<'EOF'
[  FAILED  ] SmallM.WgmmaPersistentLoopsAndSplits (812 ms)
[  PASSED  ] 2 tests.
[  FAILED  ] 1 test, listed below:
[  FAILED  ] SmallM.WgmmaPersistentLoopsAndSplits
========= ERROR SUMMARY: 0 errors
EOF
  cat > "$d/killed.log" <<'EOF'
========= COMPUTE-SANITIZER
========= Error: Device not supported
EOF
  local ok=1 got
  got=$(parse "$d/race.log" racecheck); [ "$got" = "130 0 2 42007 0" ] || { echo "race: got '$got'"; ok=0; }
  got=$(parse "$d/mem.log" memcheck); [ "$got" = "72 2 1 - 0" ] || { echo "mem: got '$got'"; ok=0; }
  got=$(parse "$d/gtest.log" synccheck); [ "$got" = "3 1 0 - 0" ] || { echo "gtest: got '$got'"; ok=0; }
  got=$(parse "$d/killed.log" initcheck); [ "$got" = "0 0 ? - 1" ] || { echo "killed: got '$got'"; ok=0; }
  rm -rf "$d"
  [ $ok = 1 ] && echo "self-test: 4 passed, 0 failed" && return 0
  echo "self-test: failed"
  return 1
}

# --- running --------------------------------------------------------------------------------
DRY=0
case "${1:-}" in
  --self-test) self_test; exit $? ;;
  --dry-run) DRY=1; shift ;;
esac
BIN=${1:-build}
F="$BIN/fp8gemm"
[ -x "$F" ] || F="$BIN/tools/cli/fp8gemm"
G="$BIN/fp8gemm_gpu_tests"
[ -x "$G" ] || G="$BIN/tests/fp8gemm_gpu_tests"
if [ $DRY = 0 ] && [ ! -x "$F" ]; then
  echo "gpu_sanitize: no fp8gemm under BIN_DIR '$BIN' (looked for fp8gemm and tools/cli/fp8gemm)" >&2
  exit 2
fi
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)}
[ $DRY = 1 ] && SAN=${SAN:-compute-sanitizer}
if [ $DRY = 0 ] && [ ! -x "${SAN:-}" ]; then
  echo "gpu_sanitize: compute-sanitizer not found (PATH, /usr/local/cuda*/bin; or set COMPUTE_SANITIZER)" >&2
  exit 2
fi
OUT=${OUT:-$PWD/gpu-out}
LOGS="$OUT/sanitize"
BUDGET=${SANITIZE_BUDGET_S:-520}
[ $DRY = 0 ] && mkdir -p "$LOGS" && rm -f "$LOGS"/*.log "$LOGS/summary.txt"
export CUDA_MODULE_LOADING=LAZY  # each kernel is loaded (and instrumented) only when first launched

# The steps in order: every tool over S1, then S2, S3, then the vendor backends. A backend this
# fp8gemm was built without, or that is not available here, has no steps (`fp8gemm info` lists
# "  NAME: available" with a GPU, "Backends compiled in: ..." without one; if it lists neither,
# every case runs).
built=" $("$F" info 2> /dev/null | sed -n -e 's/^Backends compiled in: //p' -e 's/^  \([a-z_]*\): available.*/\1/p' | tr '\n' ' ') "
[[ "$built" =~ [a-z] ]] || built=" $(cut -d'|' -f2 <<< "$(printf '%s\n' "${CASES[@]}")" | tr '\n' ' ') "
steps=()  # "tool|name|backend|weight|program|args"
for c in "${CASES[@]}"; do
  IFS='|' read -r name backend w prog args only <<< "$c"
  [[ "$name:$backend" =~ ${SANITIZE_ONLY:-.} ]] || continue
  [ $DRY = 1 ] || [[ "$built" == *" $backend "* ]] || continue
  case $backend in small_m | mid_m) tools=("${TOOLS_OURS[@]}") ;; *) tools=("${TOOLS_VENDOR[@]}") ;; esac
  # shellcheck disable=SC2206
  [ -n "${only:-}" ] && tools=($only)
  for t in "${tools[@]}"; do steps+=("$t|$name|$backend|$(awk -v a="$w" -v b="$(tool_weight "$t")" 'BEGIN {print a * b}')|$prog|$args"); done
done
weight_left() {  # the weights of steps $1.. together
  local i s=0
  for ((i = $1; i < ${#steps[@]}; ++i)); do s=$(awk -v s="$s" -v w="$(cut -d'|' -f4 <<< "${steps[$i]}")" 'BEGIN {print s + w}'); done
  echo "$s"
}

add() { awk -v a="${1:-0}" -v b="$2" 'BEGIN {if (a == "?" || b == "?") print "?"; else if (b == "-") print "-"; else print a + b}'; }
declare -A row_tactics row_failed row_errors row_hazards row_rc row_secs row_cases row_steps row_note
t_start=$SECONDS
for ((i = 0; i < ${#steps[@]}; ++i)); do
  IFS='|' read -r tool name backend w prog args <<< "${steps[$i]}"
  key="$tool|$backend"
  row_steps[$key]=$(( ${row_steps[$key]:-0} + 1 ))
  left=$((BUDGET - (SECONDS - t_start)))
  # Up to three times its share of what is left, as long as every later step keeps at least half
  # of its own.
  cap=$(awk -v l="$left" -v w="$w" -v s="$(weight_left "$i")" \
    'BEGIN {share = l * w / s; c = l * (1 - 0.5 * (s - w) / s); printf "%d", (3 * share < c ? 3 * share : c)}')
  read -r -a argv <<< "$args"
  san=("$SAN" --tool "$tool" --error-exitcode 86 --show-backtrace device)
  # synccheck tracks a fixed number of barriers per block by default; cuDNN's kernels overflow it
  # ("Detected overflow of tracked cuda::barrier structures") and then fail to launch under the tool.
  [ "$tool" = synccheck ] && san+=(--num-cuda-barriers 1024)
  if [ "$prog" = gtest ]; then cmd=("${san[@]}" "$G" "${argv[@]}"); else cmd=("${san[@]}" "$F" check --backend "$backend" "${argv[@]}"); fi
  if [ $DRY = 1 ]; then  # each step's share of the whole budget
    printf 'step %2d  %-9s %-8s %-2s share %4ss  %s\n' "$i" "$tool" "$backend" "$name" \
      "$(awk -v b="$BUDGET" -v w="$w" -v s="$(weight_left 0)" 'BEGIN {printf "%d", b * w / s}')" "${cmd[*]}"
    continue
  fi
  if [ "$prog" = gtest ] && [ ! -x "$G" ]; then
    row_note[$key]="${row_note[$key]:-}${name}:no-fp8gemm_gpu_tests "
    continue
  fi
  if [ "$cap" -lt "$MIN_STEP_S" ]; then
    row_note[$key]="${row_note[$key]:-}${name}:skipped(budget) "
    row_rc[$key]=${row_rc[$key]:-125}
    continue
  fi
  log="$LOGS/$tool.log"
  tmp=$(mktemp)
  t0=$SECONDS
  timeout -k 10 "$cap" "${cmd[@]}" > "$tmp" 2>&1
  rc=$?
  secs=$((SECONDS - t0))
  read -r tactics failed errors hazards tool_errors <<< "$(parse "$tmp" "$tool")"
  {
    echo "#### $tool $backend $name: ${cmd[*]}"
    echo "#### rc=$rc, ${secs}s of a ${cap}s cap; tactics $tactics, check failures $failed, errors $errors, hazards $hazards"
    # A long report keeps its head and tail (the returned files are capped in size).
    if [ "$(wc -c < "$tmp")" -gt 3000000 ]; then head -c 2000000 "$tmp"; echo "#### ... cut ..."; tail -c 1000000 "$tmp"; else cat "$tmp"; fi
  } >> "$log"
  no_tactics=$(grep -c '^check: no tactic matched' "$tmp")
  unsupported=$(grep -c 'Device not supported' "$tmp")
  rm -f "$tmp"
  row_tactics[$key]=$(add "${row_tactics[$key]:-0}" "$tactics")
  row_failed[$key]=$(add "${row_failed[$key]:-0}" "$failed")
  row_errors[$key]=$(add "${row_errors[$key]:-0}" "$errors")
  row_hazards[$key]=$(add "${row_hazards[$key]:-0}" "$hazards")
  row_secs[$key]=$(( ${row_secs[$key]:-0} + secs ))
  row_cases[$key]=$(( ${row_cases[$key]:-0} + 1 ))
  [ "${row_rc[$key]:-0}" = 0 ] && row_rc[$key]=$rc
  [ $rc = 124 ] || [ $rc = 137 ] && row_note[$key]="${row_note[$key]:-}${name}:timeout "
  [ "$tool_errors" != 0 ] && row_note[$key]="${row_note[$key]:-}${name}:sanitizer-error "
  # A backend this GPU or build does not have lists no tactics: reported, not a finding.
  if [ "$tactics" = 0 ] && [ "$no_tactics" != 0 ]; then
    row_note[$key]="${row_note[$key]:-}${name}:no-tactics(unavailable?) "
    row_rc[$key]=n/a
  fi
  if [ "$unsupported" != 0 ]; then
    stopped="stopped after step $i: compute-sanitizer cannot instrument this device (see $log)"
    break
  fi
done
[ $DRY = 1 ] && exit 0

# --- the table ------------------------------------------------------------------------------
{
  echo "compute-sanitizer: $("$SAN" --version 2>/dev/null | grep -iE 'version' | tail -n 1)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1
  echo "budget ${BUDGET}s, used $((SECONDS - t_start))s; logs in $LOGS"
  [ -n "${stopped:-}" ] && echo "$stopped"
  printf '%-9s %-8s %5s %7s %6s %6s %8s %4s %5s  %s\n' tool backend cases tactics failed errors hazards rc secs note
  clean=1
  declare -A seen
  for c in "${CASES[@]}"; do
    backend=$(cut -d'|' -f2 <<< "$c")
    [ "${seen[$backend]:-}" ] && continue
    seen[$backend]=1
    for tool in memcheck racecheck synccheck initcheck; do
      key="$tool|$backend"
      if [ -z "${row_steps[$key]:-}" ]; then
        why="not run (vendor kernels)"
        [[ " small_m mid_m " == *" $backend "* ]] || [[ " ${TOOLS_VENDOR[*]} " == *" $tool "* ]] &&
          why="not run (SANITIZE_ONLY)" && [ -n "${stopped:-}" ] && why="not run (stopped)"
        [[ "$built" == *" $backend "* ]] || why="not run (not built or not available)"
        printf '%-9s %-8s %5s %7s %6s %6s %8s %4s %5s  %s\n' "$tool" "$backend" - - - - - - - "$why"
        continue
      fi
      printf '%-9s %-8s %5s %7s %6s %6s %8s %4s %5s  %s\n' "$tool" "$backend" "${row_cases[$key]:-0}/${row_steps[$key]}" \
        "${row_tactics[$key]:-0}" "${row_failed[$key]:-0}" "${row_errors[$key]:--}" "${row_hazards[$key]:--}" \
        "${row_rc[$key]:-}" "${row_secs[$key]:-0}" "${row_note[$key]:-}"
      [ "${row_rc[$key]}" = n/a ] && continue
      [ "${row_rc[$key]:-1}" = 0 ] && [ "${row_errors[$key]:-?}" = 0 ] && [[ "${row_hazards[$key]:--}" =~ ^(0|-)$ ]] &&
        [ "${row_failed[$key]:-1}" = 0 ] || clean=0
    done
  done
  [ -n "${stopped:-}" ] && clean=0
  [ ${#steps[@]} = 0 ] && clean=0 && echo "no step ran (SANITIZE_ONLY or the backends' availability left none)"
  [ $clean = 1 ] && echo "sanitize: clean" || echo "sanitize: NOT clean (see the rows above and $LOGS)"
} | tee "$LOGS/summary.txt"
grep -q '^sanitize: clean' "$LOGS/summary.txt"
