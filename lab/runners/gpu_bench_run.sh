#!/usr/bin/env bash
# refconv bench on a lent NVIDIA machine (set-up: lab/runners/device_env.sh).
# usage: [LIMIT=seconds] bash lab/runners/gpu_bench_run.sh TAG PRESETS [extra bench args...]
# (the bench stops after LIMIT s, default 540; the JSON and Markdown hold every problem finished by then)
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
tag=$1; presets=$2; shift 2
timeout ${LIMIT:-540} $R bench --backend '*[al]' --cuda gpu --opencl nvidia \
    --preset "$presets" --json "$OUT/bench_$tag.json" --markdown "$OUT/bench_$tag.md" --plots "$OUT/plots_$tag" "$@" \
    > "$OUT/bench_$tag.txt" 2>&1
rc=$?; echo "exit $rc"; tail -c 3000 "$OUT/bench_$tag.txt"
# one archive of the plots (the device returns a limited number of files)
tar -C "$OUT" -czf "$OUT/plots_$tag.tgz" "plots_$tag" && rm -r "$OUT/plots_$tag"
