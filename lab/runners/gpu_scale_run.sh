#!/usr/bin/env bash
# The GPU-scale acceptance run (issue 14) on a lent NVIDIA machine (set-up: lab/runners/device_env.sh).
# Writes JSON reports and logs under $OUT.   usage: bash lab/runners/gpu_scale_run.sh [list|cuda|opencl|kron ...]
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
python -c "import numpy, numba, numba_cuda; print('numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__)" | tee -a "$OUT/gpu.txt"
[ $# -gt 0 ] || set -- list cuda opencl kron
for what in "$@"; do
  case $what in
    list) $R list --cuda gpu --opencl nvidia 2>&1 | head -8 | tee "$OUT/list.txt" ;;
    cuda) /usr/bin/time -v $R check --backend numba_cuda --cuda gpu --profile gpu ${EX:-} -j ${JOBS:-8} \
            --json "$OUT/check_cuda_gpu.json" --failures-dir "$OUT/fail" > "$OUT/check_cuda_gpu.txt" 2>&1; tail -60 "$OUT/check_cuda_gpu.txt" ;;
    opencl) /usr/bin/time -v $R check --backend opencl --opencl nvidia --profile gpu ${EX:-} -j ${JOBS:-8} \
            --json "$OUT/check_opencl_nvidia.json" --failures-dir "$OUT/fail" > "$OUT/check_opencl_nvidia.txt" 2>&1; tail -60 "$OUT/check_opencl_nvidia.txt" ;;
    kron) python lab/probes/kron_360.py --backend numba_cuda --n ${KRON_N:-360} --json "$OUT/kron_360.json" 2>&1 | tail -20 ;;
  esac
done
