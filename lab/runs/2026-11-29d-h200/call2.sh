#!/usr/bin/env bash
# 2026-11-29 (d), call 2: the lab/ab arms that call 1 missed (its `opencl/NAME` globs matched no
# variant id) and the depth loop's unrolling over every cuconv preset, both seeds of each twin,
# under one deadline (CALL_S, default 560 s).  usage: bash lab/runs/2026-11-29d-h200/call2.sh
set -uo pipefail
. lab/runners/device_env.sh
DEADLINE=$(( SECONDS + ${CALL_S:-560} ))
lim() { local l=$(( DEADLINE - SECONDS - 5 )); echo $(( $1 < l ? $1 : l )); }
ok() { [ "$(lim 999)" -ge "$1" ] || { echo "skipped $2: $(lim 999) s left"; return 1; }; }
ab() {  # TAG REPS PER_RUN_LIMIT ARMS ARGS
  ok 30 "ab $1" || return
  OUT=$OUT/ab_$1 AB_REPS=$2 AB_LIMIT=$(lim $3) AB_ARMS=$4 AB_ARGS="$5 --peers none" \
    bash lab/runners/gpu_ab_bench_run.sh 2>&1 | tail -n 60
}
ab unroll 1 110 "conv_fused_unroll1 conv_fused_unroll2" "--preset 'cuconv-*' --variant 'cuconv_*' --repeat 10"
ab sm 1 70 "f2d_before_b8f3697 f2d_sm_int_place" \
  "--preset filter2d-u8-3x3-3072 --variant 'SM_CF8*' --variant 'SM_CF1*' --repeat 10"
ab split 2 40 "conv_split_maxreg32" \
  "--preset cuconv-T3-1x1-B,cuconv-T3-1x1-C --variant 'cuconv_split' --repeat 10"
echo "call2 done at $SECONDS s"
# the device returns a few files only: everything in one archive
tar czf /tmp/call2.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/call2.tgz "$OUT/"
