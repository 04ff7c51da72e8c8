#!/usr/bin/env bash
# A third-party numba-cuda plugin (tests/plugins/refconv-cudarace, written from docs/plugins.md:
# Backend(..., **refconv.cuda.backend_fields())) checked on a lent GPU, selected alone:
#   1. plain --cuda gpu: the GPU's values (the races pass there);
#   2. --cuda gpu --sanitize: compute-sanitizer and the simulator sanitizer name both races;
#   3. --cuda gpu --compile: the plugin's kernels compiled for sm_90 by the kit's compile check.
# usage (from the checkout's root, numpy 2.4.x cp312 wheels in .whl/, carried):
#   bash lab/runs/2026-11-28-h200-plugin-sanitize/run.sh      (results under $OUT)
set -uo pipefail
SRC=$(pwd)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SITE=/tmp/site
python3 -m pip install -q --no-index --no-deps --target $SITE .whl/*.whl 2>&1 | tail -2
python3 -m pip install -q --no-deps --no-build-isolation --target $SITE "$SRC" 2>&1 | tail -2
python3 -m pip install -q --no-deps --no-build-isolation --target $SITE "$SRC/tests/plugins/refconv-cudarace" 2>&1 | tail -2
export PYTHONPATH=$SITE REFCONV_DATABASE=none PYTHONUNBUFFERED=1
cd /tmp                                   # not the checkout: its refconv/ would shadow the install
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; compute-sanitizer --version | tail -2
  python3 -c "import sys, numpy, numba, numba_cuda; print(sys.version.split()[0], 'numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__)"
  git -C "$SRC" log -1 --format='refconv %h %s' 2>/dev/null; date -u; } 2>&1 | tee "$OUT/env.txt"
R="python3 -m refconv"
$R list --backend cudarace --cuda gpu --sanitize > "$OUT/list.txt" 2>&1; echo "list: exit $?"; cat "$OUT/list.txt"
run() {  # name, then refconv check arguments
  local name=$1; shift
  echo "+ refconv check --backend cudarace $* --seed 0 --no-save --json $name.json" > "$OUT/$name.txt"
  timeout ${T:-240} /usr/bin/time -f "$name: %e s wall" $R check --backend cudarace "$@" --seed 0 --no-save \
    --json "$OUT/$name.json" >> "$OUT/$name.txt" 2>&1
  echo "$name: exit $?"; grep -E "^(pass|fail|error|unavailable) |warning|variants:|s wall" "$OUT/$name.txt" | cut -c1-600
}
run plain --cuda gpu --no-sanitize --examples 40
run sanitize --cuda gpu --sanitize
T=150 run compile --cuda gpu --compile --examples 4
