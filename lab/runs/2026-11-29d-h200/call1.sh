#!/usr/bin/env bash
# 2026-11-29 (d), call 1: the lab/ab arms, the E3 splits, and filter2d's floors and Nsight Compute,
# in order of what the product can take from them, under one deadline (CALL_S, default 560 s).
# Set-up: lab/runners/device_env.sh (carry .whl/).  usage: bash lab/runs/2026-11-29d-h200/call1.sh
set -uo pipefail
. lab/runners/device_env.sh
DEADLINE=$(( SECONDS + ${CALL_S:-560} ))
lim() { local l=$(( DEADLINE - SECONDS - 5 )); echo $(( $1 < l ? $1 : l )); }
ok() { [ "$(lim 999)" -ge "$1" ] || { echo "skipped $2: $(lim 999) s left"; return 1; }; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1; cat "$OUT/gpu.txt"
ab() {  # TAG REPS PER_RUN_LIMIT ARMS ARGS
  ok 30 "ab $1" || return
  OUT=$OUT/ab_$1 AB_REPS=$2 AB_LIMIT=$(lim $3) AB_ARMS=$4 AB_ARGS="$5 --peers none" \
    bash lab/runners/gpu_ab_bench_run.sh 2>&1 | tail -n 40
}
ab f2d 1 70 "f2d_before_b8f3697 f2d_sm_int_place" \
  "--preset filter2d-u8-3x3-3072 --variant 'opencl/SM_CF1*' --variant 'opencl/SM_CF8' --variant '*/CM' --repeat 10"
ab split 2 40 "conv_split_maxreg32" \
  "--preset 'cuconv-T3-1x1-[BC]' --variant 'numba_cuda/cuconv_split' --variant 'opencl/cuconv_split' --repeat 10"
ab fused 1 70 "conv_fused_unroll1 conv_fused_local_static" \
  "--preset cuconv-T3-1x1-A,cuconv-T4-3x3-B,cuconv-E1,cuconv-E2 --variant '*/cuconv_fused' --repeat 10"
if ok 60 sweepE; then
  timeout $(lim 130) env -C /tmp python "$PWD/lab/sweeps/gpu_conv_best_sweep.py" "$OUT/sweepE3.json" --preset cuconv-E3 \
    --alt tile=128x64k16,split=3 --alt tile=128x64k16,split=6 --alt tile=128x128k16r128,split=8 --reps 10 > "$OUT/sweepE3.txt" 2>&1
  echo "sweepE3 exit $?"; cut -c1-400 "$OUT/sweepE3.txt" | tail -n 12
fi
if ok 40 ncu; then
  OUT=$OUT/ncu timeout $(lim 110) bash lab/runners/gpu_ncu_run.sh f2d filter2d-u8-3x3-3072 numba_cuda/best_R2 opencl/best_R5 2>&1 | tail -n 80
fi
if ok 25 swar; then   # the shipped two-lane arithmetic as CUDA C (128-bit rows), with the proto probe's floors beside it
  SWAR_R=2,4 SWAR_CW=16 SWAR_SPEC=1 SWAR_MIXF=0 SWAR_FTR=1 timeout $(lim 80) env -C /tmp python "$PWD/lab/probes/gpu_swar_probe.py" \
    > "$OUT/swar.jsonl" 2>&1; echo "swar exit $?"; cut -c1-220 "$OUT/swar.jsonl"
fi
echo "call1 done at $SECONDS s"
