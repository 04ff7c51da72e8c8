#!/usr/bin/env bash
# The roofline variants (issue #24: filter2d and sobel best_R{R}, numba_cuda and OpenCL) on a lent
# NVIDIA machine (set-up: lab/runners/device_env.sh; carry .whl/).
# usage: bash lab/runners/gpu_roofline_run.sh [sweep] [bench] [check]   (default: all three, in that order)
#   sweep  lab/sweeps/gpu_roofline_sweep.py: every best_R{R} over its launch parameters (and arith=cvt),
#          a few seed variants for reference, timed by the bench's method -> $OUT/roofline_sweep.json
#   check  refconv check --profile gpu of the best_* variants on the GPU (numba_cuda and OpenCL)
#   bench  refconv bench of both presets: the best_* variants and the seed variants the issue names
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
steps=${*:-sweep bench check}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
for s in $steps; do
  case $s in
    sweep) (cd /tmp && timeout ${SWEEP_LIMIT:-150} python "$OLDPWD/lab/sweeps/gpu_roofline_sweep.py" "$OUT/roofline_sweep.json") \
             > "$OUT/roofline_sweep.txt" 2>&1; echo "sweep exit $?"; tail -n 60 "$OUT/roofline_sweep.txt" ;;
    check) timeout ${CHECK_LIMIT:-120} $R check --cuda gpu --opencl nvidia --profile gpu \
             --variant 'filter2d/*/best_*' --variant 'sobel/*/best_*' > "$OUT/roofline_check.txt" 2>&1
           echo "check exit $?"; tail -n 25 "$OUT/roofline_check.txt" ;;
    bench) timeout ${BENCH_LIMIT:-120} $R bench --backend '*[al]' --cuda gpu --opencl nvidia \
             --preset filter2d-u8-3x3-3072,sobel-4096x3072 --peers none --repeat 20 \
             --variant 'best_*' --variant '*/CM_CF8' --variant '*/gmem' --variant '*/smem_rows2' \
             --json "$OUT/bench_roofline.json" --markdown "$OUT/bench_roofline.md" > "$OUT/bench_roofline.txt" 2>&1
           echo "bench exit $?"; tail -c 4000 "$OUT/bench_roofline.txt" ;;
    *) echo "unknown step $s (accepted: sweep check bench)"; exit 2 ;;
  esac
done
