#!/usr/bin/env bash
# Does a row's time move between processes, or between launches of one process?  `refconv bench`
# with VAR_ARGS (e.g. "--preset filter2d-u8-3x3-3072 --variant '*/SM_CF8_Vec' --variant '*/SM_CF16*'")
# in VAR_PROCS fresh processes (default 5) with the bench's L2 flush, then as many with
# --flush-bytes 0, each --repeat ${VAR_REPEAT:-30}; one table per variant of each process's median
# and IQR (variance.md), the runs' files archived in variance_runs.tgz.  On a lent NVIDIA machine
# (set-up: lab/runners/device_env.sh; carry .whl/).
#   usage: VAR_ARGS="..." bash lab/runners/gpu_variance_run.sh
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
set -f
for flush in default 0; do
  for i in $(seq "${VAR_PROCS:-5}"); do
    fb=""; [ "$flush" = 0 ] && fb="--flush-bytes 0"
    eval "timeout ${VAR_LIMIT:-120} $R bench --backend '*[al]' --cuda gpu --opencl nvidia --timeout 90 --peers none \
      --repeat ${VAR_REPEAT:-30} $fb --json $OUT/var_${flush}_$i.json ${VAR_ARGS:-}" > "$OUT/var_${flush}_$i.txt" 2>&1
    echo "flush $flush process $i exit $?"
  done
done
env -C /tmp python - "$OUT" <<'PY' | tee "$OUT/variance.md"
import collections, glob, json, os, sys
t = collections.defaultdict(list)
for f in sorted(glob.glob(os.path.join(sys.argv[1], "var_*.json"))):
    flush = os.path.basename(f).split("_")[1]
    for r in json.load(open(f))["rows"]:
        k = r.get("kernel_s") or {}
        if k.get("median"):
            t[(r["problem"][:28], r["variant"], flush)].append(
                f"{k['median'] * 1e6:.1f} [{k['q1'] * 1e6:.1f}-{k['q3'] * 1e6:.1f}]")
print("| problem | variant | flush | each process: median [IQR] µs |\n|---|---|---|---|")
for (p, v, fl), cells in sorted(t.items()):
    print(f"| {p} | {v} | {fl} | " + ", ".join(cells) + " |")
PY
(cd "$OUT" && tar czf variance_runs.tgz var_* && rm -f var_*)
