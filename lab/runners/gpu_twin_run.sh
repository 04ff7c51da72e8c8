#!/usr/bin/env bash
# Why are the Numba kernels slower than their OpenCL twins?  Nsight Compute on one launch of each
# twin (PTX dumps beside), then the bench of the twins (set-up: lab/runners/device_env.sh).
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
python lab/probes/hold_probe.py 2>&1 | tail -9
V=${V:-"GM GM_CF8_Vec CM_CF16 SM"}
args=""; for v in $V; do args="$args numba_cuda/$v opencl/$v"; done
env -C /tmp ncu --target-processes all --section SpeedOfLight --section LaunchStats --section Occupancy \
   --section InstructionStats --section MemoryWorkloadAnalysis --section WarpStateStats \
   -k 'regex:kern|filter2d' python $PWD/lab/probes/twin_profile.py $args > "$OUT/ncu_twins.txt" 2>&1
echo "ncu exit $?"; grep -E "^  [a-z_0-9]+.*\(|Duration|DRAM Through|Registers Per|Achieved Occ|Executed Instructions  |Block Size|Grid Size" "$OUT/ncu_twins.txt" | head -80
for g in ${G:-'[GCS]M' '*_CF8_Vec'}; do
  t="hold_$(echo "$g" | tr -dc 'A-Za-z0-9_')"
  $R bench --backend '*[al]' --cuda gpu --opencl nvidia --preset filter2d-u8-3x3-3072 --variant "$g" \
      --repeat 20 --peers none --json "$OUT/twins_$t.json" > "$OUT/twins_$t.txt" 2>&1
  grep -E "numba_cuda|opencl|copy" "$OUT/twins_$t.txt" | head -20
done
