# A/B timing on a lent GPU: B = the working tree (installed by device_env.sh), A = the tree with
# ab/filter2d_best.{py,cl} in place; sweeps of filter2d best_R2/R5, alternated A B A B.
. scripts/device_env.sh
rm -rf /tmp/treeA && mkdir /tmp/treeA && cp -r $(ls -A | grep -vE "^(.git|.venv|.whl|ab|.hypothesis)$") /tmp/treeA/
cp ab/filter2d_best.py /tmp/treeA/backends/numba_cuda/; cp ab/filter2d_best.cl /tmp/treeA/backends/opencl/
pip install -q --no-deps --no-build-isolation --target /tmp/siteA /tmp/treeA >/dev/null 2>&1 || echo "A install failed"
for rep in 1 2; do
  for ab in A B; do
    if [ $ab = A ]; then PP=/tmp/siteA:/tmp/site; else PP=/tmp/site; fi
    PYTHONPATH=$PP SWEEP_BUILDS=shipped SWEEP_PRESETS=filter2d-u8-3x3-3072 SWEEP_MATCH="${AB_MATCH:-filter2d/*/best_R[25]}" \
      timeout 200 env -C /tmp python $PWD/scripts/gpu_roofline_sweep.py $OUT/ab_${ab}$rep.json 2>&1 | grep -v Warn \
      | grep -o '"variant": "[^"]*".*"kernel_us_median": [0-9.]*' | sed "s/\"params.*kernel_us_median\"/$ab$rep/"
  done
done
