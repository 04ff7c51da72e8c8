#!/usr/bin/env bash
# On a lent NVIDIA machine (set-up: lab/runners/device_env.sh; carry .whl): issue 40 part 3's masked load
# without other= on the GPU, now that the kit rewrites such loads to pass other=poison before compiling.
# The trihazards plugin (tests/meta/hazard_impls_triton.py) installed as a refconv.backends entry point:
# all 18 of its variants with --triton gpu (ci, seed 0), the masked-load pair again with seeds 1-2; what
# the masked-off lanes now read through the kit (lab/probes/gpu_triton_masked_lanes_probe.py); then the
# built-in triton backend's variants (ci, seed 0).
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
python -c "import triton, torch, numpy; print('triton', triton.__version__, 'torch', torch.__version__, 'numpy', numpy.__version__)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PLUG=/tmp/plug; mkdir -p $PLUG/trihazards-0.1.dist-info
printf 'Metadata-Version: 2.1\nName: trihazards\nVersion: 0.1\n' > $PLUG/trihazards-0.1.dist-info/METADATA
printf '[refconv.backends]\ntrihazards = hazard_impls_triton:backend\n' > $PLUG/trihazards-0.1.dist-info/entry_points.txt
export PYTHONPATH=$SITE:$PLUG:$PWD/tests/meta
timeout ${LIMIT1:-120} $R check --backend trihazards --triton gpu --profile ci --seed 0 --jobs 8 --no-save \
    --json "$OUT/lanes_trihazards_ci_seed0.json" > "$OUT/lanes_trihazards_ci_seed0.txt" 2>&1
echo "trihazards ci seed 0 exit $?"; grep -E '^ *(pass|fail|error)' "$OUT/lanes_trihazards_ci_seed0.txt"
for s in 1 2; do
  timeout ${LIMIT2:-60} $R check --backend trihazards --triton gpu --profile ci --seed $s --jobs 8 --no-save \
      --variant 'triton_masked_no_other' --variant 'triton_masked_no_other_fixed' > "$OUT/lanes_masked_seed$s.txt" 2>&1
  echo "masked pair seed $s exit $?"; grep -E '^ *(pass|fail|error)' "$OUT/lanes_masked_seed$s.txt"
done
REFCONV_TRITON=gpu timeout 60 python lab/probes/gpu_triton_masked_lanes_probe.py 2>&1 | tee "$OUT/lanes_probe.txt"
timeout ${LIMIT3:-150} $R check --backend triton --triton gpu --profile ci --seed 0 --jobs 8 --no-save \
    --json "$OUT/lanes_builtin_ci_seed0.json" > "$OUT/lanes_builtin_ci_seed0.txt" 2>&1
echo "built-in triton ci seed 0 exit $?"; grep -E '^ *(pass|fail|error)|variants:' "$OUT/lanes_builtin_ci_seed0.txt"
