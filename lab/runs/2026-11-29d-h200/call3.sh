#!/usr/bin/env bash
# 2026-11-29 (d), call 3: the three kernel changes taken from calls 1-2 on the GPU -- `refconv check
# --profile gpu` of every changed variant, then the cuconv seeds' twins on every cuconv preset and
# filter2d's variants (seeds and best), under one deadline (CALL_S, default 560 s).
# usage: bash lab/runs/2026-11-29d-h200/call3.sh
set -uo pipefail
. lab/runners/device_env.sh
set -f
DEADLINE=$(( SECONDS + ${CALL_S:-560} ))
lim() { local l=$(( DEADLINE - SECONDS - 5 )); echo $(( $1 < l ? $1 : l )); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
timeout $(lim 150) $R check --cuda gpu --opencl nvidia --profile gpu --examples 1 --variant 'conv2d/*/cuconv_*' \
  --variant 'filter2d/opencl/SM*' > "$OUT/check.txt" 2>&1
echo "check exit $?"; grep -E "variants:|fail|error|hang" "$OUT/check.txt" | tail -n 8
bench() {  # TAG LIMIT ARGS...
  local tag=$1 l=$(lim $2); shift 2
  timeout $l $R bench --backend "*[al]" --cuda gpu --opencl nvidia --timeout 90 --json "$OUT/bench_$tag.json" \
    --markdown "$OUT/bench_$tag.md" "$@" > "$OUT/bench_$tag.txt" 2>&1
  echo "bench $tag exit $?"; grep -E "^\| [A-Za-z0-9_]+ \|" "$OUT/bench_$tag.md" | head -n 60
}
bench cuconv 170 --preset 'cuconv-*' --variant 'cuconv_*' --repeat 10
bench f2d 220 --preset filter2d-u8-3x3-3072 --repeat 5
tar czf /tmp/call3.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/call3.tgz "$OUT/"
echo "call3 done at $SECONDS s"
