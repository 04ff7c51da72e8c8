#!/usr/bin/env bash
# Issue 42 item 3 (the matvec and kron Numba/OpenCL twins) on a lent NVIDIA machine, one call:
# the GPU check of the changed OpenCL variants, then the bench of the twins with the working tree
# ("after", both backends), the PTX of the OpenCL matvec kernels before and after, and the bench
# of the OpenCL rows with the committed kernels ("before": the tree with the files of .ab/ in place
# of backends/opencl/{matvec,kron}.{py,cl}; `git show <commit>:backends/opencl/matvec.py > .ab/matvec.py`, ...).
# usage (device call, carry .whl and .ab): bash lab/runs/2026-11-28b-h200/run.sh
set -uo pipefail
. lab/runners/device_env.sh
LOG=$OUT/log.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> "$LOG" 2>&1; cat "$LOG"
rm -rf /tmp/treeA && mkdir /tmp/treeA && cp -r $(ls -A | grep -vE "^(.git|.venv|.whl|.ab|.hypothesis)$") /tmp/treeA/
cp .ab/matvec.py .ab/matvec.cl .ab/kron.py .ab/kron.cl /tmp/treeA/backends/opencl/
pip install -q --no-deps --no-build-isolation --target /tmp/siteA /tmp/treeA >/dev/null 2>&1 || echo "A install failed"
T0=$SECONDS
timeout ${CHECK_LIMIT:-70} $R check --cuda gpu --opencl nvidia --profile gpu --examples 1 -j 5 \
    --variant 'matvec/opencl/*' --variant 'kron/opencl/*' > "$OUT/check.txt" 2>&1
echo "check exit $? ($((SECONDS - T0)) s)"; grep -E "^ (pass|fail|error|hang)|variants:" "$OUT/check.txt"
SEL="--variant thread_per_row --variant block_per_row --variant block_launches --variant streamed --variant single_launch"
PRESETS=${PRESETS:-matvec-16384,kron-100,matvec-4096}
T0=$SECONDS
timeout ${AFTER_LIMIT:-150} $R bench --backend '*[al]' --cuda gpu --opencl nvidia --timeout 60 --peers none \
    --repeat 5 --budget 2 --preset "$PRESETS" $SEL --json "$OUT/bench_after.json" --markdown "$OUT/bench_after.md" >> "$LOG" 2>&1
echo "bench after exit $? ($((SECONDS - T0)) s)"; grep -E "^\| [a-z_]+ \||^\| [a-z0-9]+/" "$OUT/bench_after.md" | cut -d'|' -f2,3,4
for ab in A B; do   # the OpenCL matvec kernels' PTX (NVIDIA's OpenCL binaries are PTX)
  if [ $ab = A ]; then P=/tmp/siteA:$SITE; else P=$SITE; fi
  PYTHONPATH=$P OUT=/tmp/ptx/$ab PRESET=matvec-4096 timeout 25 env -C /tmp python "$PWD/lab/probes/twin_profile.py" \
      opencl/thread_per_row opencl/block_per_row 2>&1 | grep -v Warn | tail -n 2
done
tar -C /tmp -czf "$OUT/ptx.tgz" ptx
T0=$SECONDS
env -C /tmp PYTHONPATH=/tmp/siteA:$SITE python -c "import refconv.backends.opencl.kron as k; print('before:', k.__file__, '_sizes' in dir(k))"
timeout ${BEFORE_LIMIT:-80} env -C /tmp env PYTHONPATH=/tmp/siteA:$SITE python -m refconv.cli bench --backend opencl --opencl nvidia \
    --timeout 60 --peers none --repeat 5 --budget 2 --preset "${BEFORE_PRESETS:-$PRESETS}" ${BEFORE_SEL:-$SEL} \
    --json "$OUT/bench_before.json" --markdown "$OUT/bench_before.md" >> "$LOG" 2>&1
echo "bench before exit $? ($((SECONDS - T0)) s)"; grep -E "^\| [a-z0-9]+/" "$OUT/bench_before.md" | cut -d'|' -f2,3
