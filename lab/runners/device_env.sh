# Sourced by the scripts that run refconv on a lent NVIDIA machine (gpu_scale_run.sh,
# gpu_bench_run.sh).  The machine's image has numba-cuda but numpy 2.5 (numba-cuda 0.30 cannot
# compile with it), no pyopencl and no greenlet: carry .whl/ (numpy 2.4.x, pyopencl, pytools,
# platformdirs, siphash24, greenlet, cp312 wheels; without greenlet the numba_cuda backend does not
# load and `--cuda` is an unknown option); refconv is installed beside them with --no-deps --target.
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SITE=/tmp/site
if [ ! -d $SITE/refconv ]; then
  pip install -q --no-deps --target $SITE .whl/*.whl 2>/dev/null
  pip install -q --no-deps --no-build-isolation --target $SITE . >/dev/null 2>&1
fi
export PYTHONPATH=$SITE REFCONV_DATABASE=none
# a fresh machine has at times come up without the carried wheels installed (numba_cuda then does
# not load and `--cuda` is an unknown option): check, and install again loudly if so
if ! env -C /tmp python -c "import greenlet, numpy, pyopencl, refconv" 2>/dev/null; then
  echo "device_env: carried wheels missing from $SITE; installing again" >&2
  ls -la .whl >&2
  pip install --no-deps --target $SITE --upgrade .whl/*.whl >&2
  pip install -q --no-deps --no-build-isolation --target $SITE --upgrade . >&2
fi
mkdir -p /tmp/icd; echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd                # NVIDIA's OpenCL driver through the ICD loader
R="env -C /tmp python -m refconv.cli"          # not from the checkout: its refconv/ would shadow the install
