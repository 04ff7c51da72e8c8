#!/usr/bin/env bash
# Issue 42's twin and GPU-check calls on a lent NVIDIA machine (set-up: lab/runners/device_env.sh;
# carry .whl/).  usage: bash lab/runners/gpu_twins_run.sh STEP...  (each with its own limit, env NAME_LIMIT)
#   check    refconv check --profile gpu --examples ${CHECK_EXAMPLES:-1} of CHECK_VARIANTS (space-separated
#            --variant globs; default: every filter2d, sobel and conv2d variant of both twins but best_*)
#   sobel    refconv bench of sobel-4096x3072, every Numba/OpenCL variant (SOBEL_VARIANTS), --repeat 10
#   f2d      refconv bench of filter2d-u8-3x3-3072, F2D_VARIANTS (default: every variant), --repeat 5
#   cuconv   refconv bench of every cuconv preset (CUCONV_PRESETS), CUCONV_VARIANTS (default the seeds), --repeat 10
#   sweepE   lab/sweeps/gpu_conv_best_sweep.py on SWEEP_PRESETS (default cuconv-E[34]): SWEEP_ALTS (space-separated
#            --alt values) or else --alts candidates
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
set -f   # the variant globs are refconv's, not the shell's (after device_env.sh, whose install globs .whl/*.whl)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1; cat "$OUT/gpu.txt"
bench() {  # TAG LIMIT ARGS...
  local tag=$1 lim=$2; shift 2
  timeout $lim $R bench --backend "*[al]" --cuda gpu --opencl nvidia --timeout 90 --json "$OUT/bench_$tag.json" \
    --markdown "$OUT/bench_$tag.md" "$@" > "$OUT/bench_$tag.txt" 2>&1
  echo "bench $tag exit $?"; grep -E "^\| [a-z0-9]+/" "$OUT/bench_$tag.md" | cut -d'|' -f2,3,7,8 | head -n 80
}
vargs() { for v in $1; do printf -- "--variant %s " "$v"; done; }
for s in "$@"; do
  case $s in
    check) timeout ${CHECK_LIMIT:-200} $R check --cuda gpu --opencl nvidia --profile gpu --examples ${CHECK_EXAMPLES:-1} \
             $(vargs "${CHECK_VARIANTS:-filter2d/[no]*/[GCS]M* sobel/[no]*/[gsu]* conv2d/[no]*/*}") > "$OUT/check.txt" 2>&1
           echo "check exit $?"; grep -E "^ (pass|fail|error|hang|skip)|variants:|FAIL|fail " "$OUT/check.txt" | head -n 40 ;;
    sobel) bench sobel ${SOBEL_LIMIT:-120} --preset sobel-4096x3072 --repeat 10 $(vargs "${SOBEL_VARIANTS:-*}") ;;
    f2d) bench f2d ${F2D_LIMIT:-200} --preset filter2d-u8-3x3-3072 --repeat 5 $(vargs "${F2D_VARIANTS:-*}") ;;
    cuconv) bench cuconv ${CUCONV_LIMIT:-200} --preset "${CUCONV_PRESETS:-cuconv-*}" --repeat 10 $(vargs "${CUCONV_VARIANTS:-cuconv_*}") ;;
    sweepE) timeout ${SWEEP_LIMIT:-150} env -C /tmp python "$PWD/lab/sweeps/gpu_conv_best_sweep.py" "$OUT/sweepE.json" $(for a in ${SWEEP_ALTS:-}; do printf -- "--alt %s " "$a"; done) --alts candidates \
              --preset "${SWEEP_PRESETS:-cuconv-E[34]}" --reps 10 > "$OUT/sweepE.txt" 2>&1
            echo "sweepE exit $?"; cat "$OUT/sweepE.md" 2>/dev/null | head -n 40 ;;
    *) echo "unknown step $s (accepted: check sobel f2d cuconv sweepE)"; exit 2 ;;
  esac
done
