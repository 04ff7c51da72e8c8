#!/usr/bin/env bash
# The third call of this run: the GPU check and the bench of the variants changed after the second
# call (matvec block_per_row with its work-group size built in, the stepped-offset kron loop of
# single_launch and streamed on both backends).
# usage (device call, carry .whl): bash lab/runs/2026-11-28b-h200/run_final.sh
set -uo pipefail
. lab/runners/device_env.sh
LOG=$OUT/log.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> "$LOG" 2>&1; cat "$LOG"
T0=$SECONDS
timeout ${CHECK_LIMIT:-35} $R check --cuda gpu --opencl nvidia --profile gpu --examples 1 -j 5 \
    --variant 'matvec/opencl/block_per_row' --variant 'kron/*/single_launch' --variant 'kron/*/streamed' > "$OUT/check.txt" 2>&1
echo "check exit $? ($((SECONDS - T0)) s)"; grep -E "^ (pass|fail|error|hang)|variants:" "$OUT/check.txt"
T0=$SECONDS
timeout ${BENCH_LIMIT:-70} $R bench --backend '*[al]' --cuda gpu --opencl nvidia --timeout 60 --peers none \
    --repeat 5 --budget 2 --preset "${PRESETS:-matvec-16384,kron-100,matvec-4096}" \
    --variant block_per_row --variant streamed --variant single_launch \
    --json "$OUT/bench_final.json" --markdown "$OUT/bench_final.md" >> "$LOG" 2>&1
echo "bench exit $? ($((SECONDS - T0)) s)"; grep -E "^\| [a-z_]+ \||^\| [a-z0-9]+/" "$OUT/bench_final.md" | cut -d'|' -f2,3,4
