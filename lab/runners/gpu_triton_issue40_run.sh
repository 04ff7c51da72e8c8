#!/usr/bin/env bash
# On a lent NVIDIA machine (set-up: lab/runners/device_env.sh; carry .whl): issue 40 part 3 on the GPU.
# The trihazards plugin (tests/meta/hazard_impls_triton.py, written against refconv.triton; every wrong
# Triton kernel with its fixed twin) installed as a refconv.backends entry point and checked with
# --triton gpu (ci profile, seed 0); the four issue-40 hazards again with seeds 1-2; then what the
# masked-off lanes of a load without other= hold on the GPU (lab/probes/gpu_triton_masked_lanes_probe.py).
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
python -c "import triton, torch, numpy; print('triton', triton.__version__, 'torch', torch.__version__, 'numpy', numpy.__version__)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PLUG=/tmp/plug; mkdir -p $PLUG/trihazards-0.1.dist-info
printf 'Metadata-Version: 2.1\nName: trihazards\nVersion: 0.1\n' > $PLUG/trihazards-0.1.dist-info/METADATA
printf '[refconv.backends]\ntrihazards = hazard_impls_triton:backend\n' > $PLUG/trihazards-0.1.dist-info/entry_points.txt
export PYTHONPATH=$SITE:$PLUG:$PWD/tests/meta
$R list --backend trihazards --triton gpu 2>&1 | tail -3
timeout ${LIMIT1:-150} $R check --backend trihazards --triton gpu --profile ci --seed 0 --jobs 8 --no-save \
    --json "$OUT/trihazards_ci_seed0.json" > "$OUT/trihazards_ci_seed0.txt" 2>&1
echo "trihazards ci seed 0 exit $?"; grep -E '^ *(pass|fail|error)' "$OUT/trihazards_ci_seed0.txt"
for s in 1 2; do
  timeout ${LIMIT2:-60} $R check --backend trihazards --triton gpu --profile ci --seed $s --jobs 8 --no-save \
      --variant 'triton_masked_no_other' --variant 'triton_strided_as_contiguous' \
      --variant 'triton_accumulates_unzeroed' --variant 'triton_scratch_short' > "$OUT/issue40_seed$s.txt" 2>&1
  echo "issue-40 hazards seed $s exit $?"; grep -E '^ *(pass|fail|error)' "$OUT/issue40_seed$s.txt"
done
REFCONV_TRITON=gpu timeout 60 python lab/probes/gpu_triton_masked_lanes_probe.py 2>&1 | tee "$OUT/masked_lanes.txt"
