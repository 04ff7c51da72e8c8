#!/usr/bin/env bash
# Design probe for issue #24 on a lent NVIDIA machine (set-up: lab/runners/device_env.sh; carry .whl/):
# the CUDA C prototypes of lab/probes/gpu_proto_probe.py, then Nsight Compute (stall reasons, issue
# activity, memory) on the shipped best_R kernels of both presets.
set -uo pipefail
. "$(dirname "$0")/../../runners/device_env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1; cat "$OUT/gpu.txt"
which nvdisasm cuobjdump
(cd /tmp && timeout ${PROTO_LIMIT:-200} python "$OLDPWD/lab/probes/gpu_proto_probe.py" ${PROTO_OPS:-}) > "$OUT/proto.txt" 2>&1
echo "proto exit $?"; cat "$OUT/proto.txt" | cut -c1-200
for spec in "filter2d-u8-3x3-3072 numba_cuda/best_R5 opencl/best_R5" "sobel-4096x3072 numba_cuda/best_R8 opencl/best_R8"; do
  set -- $spec; preset=$1; shift
  env -C /tmp NO_PTX=1 PRESET=$preset timeout 150 ncu --target-processes all --section SpeedOfLight --section Occupancy \
     --section WarpStateStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis \
     --section LaunchStats python $PWD/lab/probes/twin_profile.py "$@" > "$OUT/ncu_${preset%%-*}.txt" 2>&1
  echo "ncu $preset exit $?"
  grep -E "^  [A-Za-z_0-9]+.*\(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Executed Instructions  |Issue Slots Busy|Issued Warp Per Scheduler|No Eligible|Active Warps Per|Eligible Warps|Executed Ipc A|Registers Per|Achieved Occ|Theoretical Occ|Grid Size|Block Size|Warp Cycles Per Issued|Local Memory|L1/TEX Hit|L2 Hit" "$OUT/ncu_${preset%%-*}.txt" | cut -c1-150
  grep -B1 -A3 "Stall\|stall" "$OUT/ncu_${preset%%-*}.txt" | grep -i "cycles\|stall" | head -12 | cut -c1-300
done
