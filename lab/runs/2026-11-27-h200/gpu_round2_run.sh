#!/usr/bin/env bash
# Issue #24, second round on a lent NVIDIA machine (set-up: lab/runners/device_env.sh; carry .whl/):
# the best variants checked on the GPU (--profile gpu), the roofline sweep of the filter2d/sobel
# best kernels, the conv2d best sweep over the cuconv presets, and Nsight Compute's instruction
# counts of the Numba best kernels.
set -uo pipefail
. "$(dirname "$0")/../../runners/device_env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1; cat "$OUT/gpu.txt"
timeout ${CHECK_LIMIT:-150} $R check --cuda gpu --opencl nvidia --profile gpu --examples 3 \
   --variant 'filter2d/*/best_*' --variant 'sobel/*/best_*' --variant 'conv2d/*/best' > "$OUT/check.txt" 2>&1
echo "check exit $?"; grep -E "pass|fail|error|hang|variants" "$OUT/check.txt" | tail -n 22
(cd /tmp && timeout ${SWEEP_LIMIT:-110} python "$OLDPWD/lab/sweeps/gpu_roofline_sweep.py" "$OUT/roofline_sweep.json") > "$OUT/roofline_sweep.txt" 2>&1
echo "sweep exit $?"; cut -c1-230 "$OUT/roofline_sweep.txt" | grep -v Warning | tail -n 30
(cd /tmp && timeout ${CONV_LIMIT:-220} python "$OLDPWD/lab/sweeps/gpu_conv_best_sweep.py" "$OUT/conv_sweep.json" --reps 15) > "$OUT/conv_sweep.txt" 2>&1
echo "conv sweep exit $?"; cut -c1-260 "$OUT/conv_sweep.txt" | grep -v Warning | tail -n 45
for spec in "filter2d-u8-3x3-3072 numba_cuda/best_R2" "sobel-4096x3072 numba_cuda/best_R8"; do
  set -- $spec; preset=$1; shift
  env -C /tmp NO_PTX=1 PRESET=$preset timeout 40 ncu --section SpeedOfLight --section Occupancy --section SchedulerStats \
     --section InstructionStats python $PWD/lab/probes/twin_profile.py "$@" > "$OUT/ncu_${preset%%-*}.txt" 2>&1
  grep -E "Duration|DRAM Throughput|Executed Instructions  |Issued Warp Per|Registers Per|Achieved Occ" "$OUT/ncu_${preset%%-*}.txt"
done
