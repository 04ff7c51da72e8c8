#!/usr/bin/env bash
# The GPU-scale acceptance run (issue 14) on a lent NVIDIA machine whose image has numba-cuda but
# numpy 2.5: carry .whl/ (numpy 2.4.x, pyopencl, pytools, platformdirs, siphash24 for cp312).
# Writes JSON reports and logs under $OUT.   usage: bash scripts/gpu_scale_run.sh [what...]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SITE=/tmp/site
if [ ! -d $SITE/refconv ]; then
  pip install -q --no-deps --target $SITE .whl/*.whl 2>/dev/null
  pip install -q --no-deps --no-build-isolation --target $SITE . >/dev/null 2>&1
fi
export PYTHONPATH=$SITE
mkdir -p /tmp/icd; echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
export REFCONV_DATABASE=none
R="env -C /tmp python -m refconv.cli"   # not from the checkout: its refconv/ would shadow the install
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
python -c "import numpy, numba, numba_cuda; print('numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__)" | tee -a "$OUT/gpu.txt"
for what in "${@:-list cuda opencl kron}"; do
  case $what in
    list) $R list --cuda gpu --opencl nvidia 2>&1 | head -8 | tee "$OUT/list.txt" ;;
    cuda) /usr/bin/time -v $R check --backend numba_cuda --cuda gpu --profile gpu ${EX:-} -j ${JOBS:-8} \
            --json "$OUT/check_cuda_gpu.json" --failures-dir "$OUT/fail" > "$OUT/check_cuda_gpu.txt" 2>&1; tail -60 "$OUT/check_cuda_gpu.txt" ;;
    opencl) /usr/bin/time -v $R check --backend opencl --opencl nvidia --profile gpu ${EX:-} -j ${JOBS:-8} \
            --json "$OUT/check_opencl_nvidia.json" --failures-dir "$OUT/fail" > "$OUT/check_opencl_nvidia.txt" 2>&1; tail -60 "$OUT/check_opencl_nvidia.txt" ;;
    kron) python scripts/kron_360.py --backend numba_cuda --n ${KRON_N:-360} --json "$OUT/kron_360.json" 2>&1 | tail -20 ;;
  esac
done
