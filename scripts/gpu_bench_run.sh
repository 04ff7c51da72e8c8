#!/usr/bin/env bash
# refconv bench on a lent NVIDIA machine (see scripts/gpu_scale_run.sh for the set-up it shares).
# usage: bash scripts/gpu_bench_run.sh TAG PRESETS [extra bench args...]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SITE=/tmp/site
if [ ! -d $SITE/refconv ]; then
  pip install -q --no-deps --target $SITE .whl/*.whl 2>/dev/null
  pip install -q --no-deps --no-build-isolation --target $SITE . >/dev/null 2>&1
fi
export PYTHONPATH=$SITE REFCONV_DATABASE=none
mkdir -p /tmp/icd; echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
tag=$1; presets=$2; shift 2
env -C /tmp python -m refconv.cli bench --backend '*[al]' --cuda gpu --opencl nvidia \
    --preset "$presets" --json "$OUT/bench_$tag.json" --markdown "$OUT/bench_$tag.md" --plots "$OUT/plots_$tag" "$@" \
    > "$OUT/bench_$tag.txt" 2>&1
echo "exit $?"; tail -c 6000 "$OUT/bench_$tag.txt"
