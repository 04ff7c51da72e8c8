#!/usr/bin/env bash
# Second part: plugins as issue 40 found them, on a lent GPU, each selected alone with
# `--cuda gpu --sanitize`:
#   hooks: tests/plugins/refconv-cudarace with its Backend written the old way
#          (available=rc.reason, preflight=rc.preflight, describe, target: no backend_fields);
#   mycuda: docs/plugins.md's numba-cuda example, its `cuda.syncthreads()` line deleted.
# usage (from the checkout's root, numpy 2.4.x cp312 wheels in .whl/, carried):
#   bash lab/runs/2026-11-28-h200-plugin-sanitize/run2.sh      (results under $OUT)
set -uo pipefail
SRC=$(pwd)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SITE=/tmp/site PLUG=/tmp/plug
python3 -m pip install -q --no-index --no-deps --target $SITE .whl/*.whl 2>&1 | tail -2
python3 -m pip install -q --no-deps --no-build-isolation --target $SITE "$SRC" 2>&1 | tail -2
plugin() {  # name, module source on stdin: a module and an entry point in a .dist-info beside it
  mkdir -p $PLUG/rcplug_$1-0.1.dist-info; cat > $PLUG/rcplug_$1.py
  printf 'Metadata-Version: 2.1\nName: rcplug_%s\nVersion: 0.1\n' $1 > $PLUG/rcplug_$1-0.1.dist-info/METADATA
  printf '[refconv.backends]\n%s = rcplug_%s:backend\n' $1 $1 > $PLUG/rcplug_$1-0.1.dist-info/entry_points.txt
}
sed -e 's/backend="cudarace"/backend="hooks"/' \
    -e 's/^backend = Backend(name="cudarace", variants=_variants, \*\*rc.backend_fields())$/backend = Backend(name="hooks", variants=_variants, available=rc.reason, preflight=rc.preflight, describe=rc.describe, target=rc.target)/' \
    "$SRC/tests/plugins/refconv-cudarace/src/refconv_cudarace/__init__.py" | plugin hooks
python3 - "$SRC/docs/plugins.md" <<'PY' | plugin mycuda
import sys
text = open(sys.argv[1]).read()
sec = text[text.index("### numba-cuda"):]
start = sec.index("```python\n") + len("```python\n")
src = sec[start:sec.index("```", start)]
line = "            cuda.syncthreads()     # delete it: `refconv check --sanitize` names a shared-race\n"
assert line in src
print(src.replace(line, ""), end="")
PY
grep -n "^backend = " $PLUG/rcplug_hooks.py; grep -c syncthreads $PLUG/rcplug_mycuda.py
export PYTHONPATH=$PLUG:$SITE REFCONV_DATABASE=none PYTHONUNBUFFERED=1
cd /tmp
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; compute-sanitizer --version | tail -1
  python3 -c "import sys, numpy, numba, numba_cuda; print(sys.version.split()[0], 'numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__)"
  date -u; } 2>&1 | tee "$OUT/env2.txt"
R="python3 -m refconv"
run() {  # name, backend, then refconv check arguments
  local name=$1 b=$2; shift 2
  echo "+ refconv check --backend $b $* --seed 0 --no-save --json $name.json" > "$OUT/$name.txt"
  timeout ${T:-200} /usr/bin/time -f "$name: %e s wall" $R check --backend $b "$@" --seed 0 --no-save \
    --json "$OUT/$name.json" >> "$OUT/$name.txt" 2>&1
  echo "$name: exit $?"; grep -E "^(pass|fail|error|unavailable) |warning|variants:|s wall" "$OUT/$name.txt" | cut -c1-600
}
run hooks_sanitize hooks --cuda gpu --sanitize
run mycuda_plain mycuda --cuda gpu --no-sanitize
run mycuda_sanitize mycuda --cuda gpu --sanitize
