#!/usr/bin/env bash
# A/B of kernel sources by `refconv bench` on a lent NVIDIA machine (set-up: lab/runners/device_env.sh;
# carry .whl/).  B is the tree as it is; each arm A is the tree with the patch lab/ab/<arm>.patch applied
# (`git apply`, paths relative to the repository root).  The arms and B alternate AB_REPS times (default 2), each a `refconv bench`
# with AB_ARGS (e.g. "--preset filter2d-u8-3x3-3072 --variant '*/SM_CF1*' --repeat 10"); JSON and
# Markdown per run in $OUT (archived into ab_runs.tgz at the end), then one table of kernel medians (µs) per
# variant and arm (ab_summary.md).
#   usage: AB_ARMS="f2d_sm_int_place" AB_ARGS="..." bash lab/runners/gpu_ab_bench_run.sh
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
set -f
arms=${AB_ARMS:-$(ls lab/ab | sed -n 's/\.patch$//p')}
for arm in $arms; do
  [ -f "lab/ab/$arm.patch" ] || { echo "no arm lab/ab/$arm.patch (accepted: $(ls lab/ab | sed -n 's/\.patch$//p' | tr '\n' ' '))"; exit 2; }
  rm -rf "/tmp/tree_$arm" "/tmp/site_$arm" && mkdir "/tmp/tree_$arm"
  cp -r $(ls -A | grep -vE "^(.git|.venv|.whl|.hypothesis|build)$") "/tmp/tree_$arm/"
  (cd "/tmp/tree_$arm" && git apply "$OLDPWD/lab/ab/$arm.patch") || { echo "arm $arm: the patch does not apply"; exit 1; }
  pip install -q --no-deps --no-build-isolation --target "/tmp/site_$arm" "/tmp/tree_$arm" >/dev/null 2>&1 \
    || { echo "arm $arm: install failed"; exit 1; }
done
for rep in $(seq "${AB_REPS:-2}"); do
  for arm in $arms B; do
    if [ "$arm" = B ]; then PP=$SITE; else PP=/tmp/site_$arm:$SITE; fi
    eval "PYTHONPATH=$PP timeout ${AB_LIMIT:-150} $R bench --backend '*[al]' --cuda gpu --opencl nvidia --timeout 90 \
      --json $OUT/ab_${arm}_$rep.json --markdown $OUT/ab_${arm}_$rep.md ${AB_ARGS:-}" > "$OUT/ab_${arm}_$rep.txt" 2>&1
    echo "$arm run $rep exit $?"
  done
done
env -C /tmp python - "$OUT" <<'PY' | tee "$OUT/ab_summary.md"
import collections, glob, json, os, sys
t = collections.defaultdict(dict)
for f in sorted(glob.glob(os.path.join(sys.argv[1], "ab_*.json"))):
    arm = os.path.basename(f)[3:].rsplit("_", 1)[0]
    for r in json.load(open(f))["rows"]:
        med = (r.get("kernel_s") or {}).get("median")
        if med:
            t[(r["problem"][:28], r["variant"])].setdefault(arm, []).append(med * 1e6)
arms = sorted({a for v in t.values() for a in v}, key=lambda a: (a == "B", a))
print("| problem | variant | " + " | ".join(arms) + " |")
for (p, v), d in sorted(t.items()):
    print(f"| {p} | {v} | " + " | ".join("/".join(f"{x:.1f}" for x in d.get(a, [])) for a in arms) + " |")
PY
# a lent machine returns a few files of $OUT only: the runs' JSON, Markdown and logs in one archive
(cd "$OUT" && tar czf ab_runs.tgz ab_*_[0-9]*.* && rm -f ab_*_[0-9]*.json ab_*_[0-9]*.md ab_*_[0-9]*.txt)
