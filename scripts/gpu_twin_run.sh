#!/usr/bin/env bash
# Why are the Numba kernels slower than their OpenCL twins?  Bench with and without the L2 flush,
# then Nsight Compute on one launch of each twin (set-up: scripts/device_env.sh).
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
V=${V:-"GM GM_CF8_Vec CM_CF16 SM"}
for fb in 0 134217728; do for g in '[GCS]M' '*_CF8_Vec'; do
  t="flush${fb}_$(echo "$g" | tr -dc 'A-Za-z0-9_')"
  $R bench --backend '*[al]' --cuda gpu --opencl nvidia --preset filter2d-u8-3x3-3072 --variant "$g" \
      --repeat 20 --peers none --flush-bytes $fb --json "$OUT/twins_$t.json" > "$OUT/twins_$t.txt" 2>&1
  grep -E "numba_cuda|opencl" "$OUT/twins_$t.txt" | head -20
done; done
args=""; for v in $V; do args="$args numba_cuda/$v opencl/$v"; done
env -C /tmp ncu --target-processes all --section SpeedOfLight --section LaunchStats --section Occupancy \
   --section InstructionStats --section MemoryWorkloadAnalysis --section WarpStateStats \
   -k 'regex:kern|filter2d' python $PWD/scripts/twin_profile.py $args > "$OUT/ncu_twins.txt" 2>&1
echo "ncu exit $?"; grep -E "kern|filter2d_3x3|Duration|DRAM Through|Executed Ipc A|Registers Per|Achieved Occ|Executed Instructions  |Memory Throughput|Dynamic Shared|Block Size|Grid Size|L2 Hit|L1/TEX Hit" "$OUT/ncu_twins.txt" | head -150
