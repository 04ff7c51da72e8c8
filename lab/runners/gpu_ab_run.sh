# A/B timing on a lent GPU (set-up: lab/runners/device_env.sh; carry .whl/): B = the working tree, A = the
# same tree with the files of ab/ in place of the filter2d best kernels' (ab/filter2d_best.py for
# numba's, ab/filter2d_best.cl and ab/filter2d_best_cl.py for OpenCL's, each where present, e.g.
# `git show HEAD:backends/opencl/filter2d_best.cl > ab/filter2d_best.cl`); sweeps of the filter2d
# preset's best variants (AB_MATCH, default best_R2/R5), alternated A B, AB_REPS times (default 2).
. lab/runners/device_env.sh
rm -rf /tmp/treeA && mkdir /tmp/treeA && cp -r $(ls -A | grep -vE "^(.git|.venv|.whl|ab|.hypothesis)$") /tmp/treeA/
[ -f ab/filter2d_best.py ] && cp ab/filter2d_best.py /tmp/treeA/backends/numba_cuda/
[ -f ab/filter2d_best.cl ] && cp ab/filter2d_best.cl /tmp/treeA/backends/opencl/
[ -f ab/filter2d_best_cl.py ] && cp ab/filter2d_best_cl.py /tmp/treeA/backends/opencl/filter2d_best.py
pip install -q --no-deps --no-build-isolation --target /tmp/siteA /tmp/treeA >/dev/null 2>&1 || echo "A install failed"
for rep in $(seq "${AB_REPS:-2}"); do
  for ab in A B; do
    if [ $ab = A ]; then PP=/tmp/siteA:/tmp/site; else PP=/tmp/site; fi
    PYTHONPATH=$PP SWEEP_BUILDS=shipped SWEEP_PRESETS=filter2d-u8-3x3-3072 SWEEP_MATCH="${AB_MATCH:-filter2d/*/best_R[25]}" \
      timeout 200 env -C /tmp python $PWD/lab/sweeps/gpu_roofline_sweep.py $OUT/ab_${ab}$rep.json 2>&1 | grep -v Warn \
      | grep -o '"variant": "[^"]*".*"kernel_us_median": [0-9.]*' | sed "s/\"params.*kernel_us_median\"/$ab$rep/"
  done
done
