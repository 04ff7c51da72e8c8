#!/usr/bin/env bash
# `refconv check --cuda gpu --sanitize` on a lent NVIDIA machine (issue 23 item 4): the hazard
# kernels of tests/meta/hazard_impls.py (and hazard_impls_warp.py when present) and their fixed
# twins, plain and sanitized, then built-in numba_cuda ops under --sanitize (false positives?),
# then the exit-2 error when compute-sanitizer is missing.  Results under $OUT.
# usage (from a checkout of the branch, with numpy 2.4.x cp312 wheels in $WHL):
#   WHL=path/to/wheels bash lab/runners/gpu_sanitize_run.sh [OPS...]
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SITE=/tmp/site
if [ ! -d $SITE/refconv ]; then
  python3 -m pip install -q --no-index --no-deps --target $SITE ${WHL:-$SRC/.whl}/*.whl 2>&1 | tail -2
  python3 -m pip install -q --no-deps --no-build-isolation --target $SITE "$SRC" 2>&1 | tail -2
fi
# the hazards backend as a plugin (an entry point in a .dist-info beside a one-line module)
HZ=/tmp/hzsite; mkdir -p $HZ/rcplug_hazards-0.1.dist-info
echo "from hazard_impls import backend" > $HZ/rcplug_hazards.py
printf 'Metadata-Version: 2.1\nName: rcplug_hazards\nVersion: 0.1\n' > $HZ/rcplug_hazards-0.1.dist-info/METADATA
printf '[refconv.backends]\nhazards = rcplug_hazards:backend\n' > $HZ/rcplug_hazards-0.1.dist-info/entry_points.txt
if [ -f "$SRC/tests/meta/hazard_impls_warp.py" ]; then
  mkdir -p $HZ/rcplug_hazards_warp-0.1.dist-info
  echo "from hazard_impls_warp import backend" > $HZ/rcplug_hazards_warp.py
  printf 'Metadata-Version: 2.1\nName: rcplug_hazards_warp\nVersion: 0.1\n' > $HZ/rcplug_hazards_warp-0.1.dist-info/METADATA
  printf '[refconv.backends]\nhazards_warp = rcplug_hazards_warp:backend\n' > $HZ/rcplug_hazards_warp-0.1.dist-info/entry_points.txt
fi
export PYTHONPATH=$HZ:$SRC/tests/meta:$SITE REFCONV_DATABASE=none PYTHONUNBUFFERED=1
cd /tmp
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; compute-sanitizer --version | tail -2
  python3 -c "import sys, numpy, numba, numba_cuda; print(sys.version.split()[0], 'numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__)"
  date -u; } 2>&1 | tee "$OUT/env.txt"
R="python3 -m refconv"
run() {  # name, then refconv check arguments (T: seconds allowed, default 400)
  local name=$1; shift
  timeout ${T:-400} /usr/bin/time -f "$name: %e s wall, %U s user" $R check --seed 0 --quiet --no-save --json "$OUT/$name.json" "$@" \
    > "$OUT/$name.txt" 2>&1
  echo "$name: exit $?"; grep -E "^(fail|error|unavailable) |variants:|s wall" "$OUT/$name.txt" | cut -c1-400
}
run hazards_gpu_plain --backend 'hazards*' --cuda gpu
run hazards_gpu_sanitize --backend 'hazards*' --cuda gpu --sanitize
# compute-sanitizer missing: exit 2 with the reason
env PATH=/usr/bin:/bin CUDA_HOME=/nonexistent $(command -v python3) -m refconv check --backend hazards --cuda gpu \
  --sanitize --variant global_oob > "$OUT/missing_tool.txt" 2>&1; echo "missing tool: exit $?"; tail -3 "$OUT/missing_tool.txt"
for op in ${@:-kron matvec conv2d}; do T=${OP_T:-150} run builtin_${op}_gpu_sanitize --backend numba_cuda --op $op --cuda gpu --sanitize; done
