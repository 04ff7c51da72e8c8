#!/usr/bin/env bash
# Nsight Compute on one launch of each named variant for a bench preset (set-up: lab/runners/device_env.sh).
# usage: bash lab/runners/gpu_ncu_run.sh TAG PRESET BACKEND/VARIANT [...]
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
tag=$1; preset=$2; shift 2
env -C /tmp NO_PTX=1 PRESET=$preset ncu --target-processes all --section SpeedOfLight --section LaunchStats \
   --section Occupancy --section InstructionStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
   --section SchedulerStats --section WarpStateStats \
   --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
   python $PWD/lab/probes/twin_profile.py "$@" > "$OUT/ncu_$tag.txt" 2>&1
echo "ncu exit $?"
grep -E "^  [A-Za-z_0-9]+.*\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Executed Instructions  |Issue Slots Busy|Executed Ipc A|Registers Per|Achieved Occ|Grid Size|Block Size|No Eligible|Stall|Warp Cycles Per Issued|Eligible Warps" "$OUT/ncu_$tag.txt" | cut -c1-160
# the stall reasons (cycles a warp spends stalled for each, per issued instruction), largest first
grep -E "issue_stalled_.*ratio" "$OUT/ncu_$tag.txt" | awk '$NF+0 >= 0.05 {print $1, $NF}' | sort -k2 -gr | head -n 24
