#!/usr/bin/env bash
# 2026-11-29 (d), call 4: the twins not re-measured since 2026-11-28b -- matvec, kron up to n = 200
# -- and sobel, each a `refconv bench` of every variant with the peers, under one deadline
# (CALL_S, default 440 s).  usage: bash lab/runs/2026-11-29d-h200/call4.sh
set -uo pipefail
. lab/runners/device_env.sh
set -f
DEADLINE=$(( SECONDS + ${CALL_S:-440} ))
lim() { local l=$(( DEADLINE - SECONDS - 5 )); echo $(( $1 < l ? $1 : l )); }
bench() {  # TAG LIMIT ARGS...
  local tag=$1 l=$(lim $2); shift 2
  [ "$l" -ge 20 ] || { echo "skipped $tag: $l s left"; return; }
  timeout $l $R bench --backend "*[al]" --cuda gpu --opencl nvidia --timeout 90 --json "$OUT/bench_$tag.json" \
    --markdown "$OUT/bench_$tag.md" "$@" > "$OUT/bench_$tag.txt" 2>&1
  echo "bench $tag exit $?"; grep -E "^\| [A-Za-z0-9_]+ \|" "$OUT/bench_$tag.md" | head -n 60
}
bench matvec 130 --preset 'matvec-*' --repeat 10
bench sobel 100 --preset sobel-4096x3072 --repeat 10
bench kron 200 --preset kron-100,kron-120,kron-140,kron-160,kron-180,kron-200 --repeat 5
rm -f "$OUT"/*.txt
echo "call4 done at $SECONDS s"
