#!/usr/bin/env bash
# On a lent NVIDIA machine (set-up: lab/runners/device_env.sh): the triton backend compiled for the GPU
# (issue 25): ci and gpu profiles, plus the numba_cuda warp_shuffle variant on the GPU.
# TRITON_VARIANT='cuconv_*' (a --variant glob) checks only those variants (the warp_shuffle line is skipped).
set -uo pipefail
V=(${TRITON_VARIANT:+--variant "$TRITON_VARIANT"})
. "$(dirname "$0")/device_env.sh"
python -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$R list --backend triton --triton gpu 2>&1 | tail -15
timeout ${LIMIT1:-200} $R check --backend triton --triton gpu "${V[@]}" --profile ci --seed 0 --json "$OUT/triton_ci.json" \
    > "$OUT/triton_ci.txt" 2>&1; echo "triton ci exit $?"; tail -25 "$OUT/triton_ci.txt"
timeout ${LIMIT2:-300} $R check --backend triton --triton gpu "${V[@]}" --profile gpu --seed 0 --json "$OUT/triton_gpu.json" \
    > "$OUT/triton_gpu.txt" 2>&1; echo "triton gpu-profile exit $?"; tail -25 "$OUT/triton_gpu.txt"
[ -n "${TRITON_VARIANT:-}" ] || timeout 60 $R check --backend numba_cuda --cuda gpu --variant warp_shuffle --profile ci --seed 0 2>&1 | tail -4
