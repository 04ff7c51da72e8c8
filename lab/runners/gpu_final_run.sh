#!/usr/bin/env bash
# Issue #24's closing GPU runs on a lent NVIDIA machine (set-up: lab/runners/device_env.sh; carry .whl/).
# usage: bash lab/runners/gpu_final_run.sh STEP...   (each with its own time limit, env NAME_LIMIT)
#   check   refconv check --profile gpu of the project's best variants (filter2d, sobel, conv2d; both twins)
#   images  refconv bench: filter2d and sobel presets (best variants, the best seed variants (CM_CF8,
#           gmem, smem_rows2), every peer)
#   matvec  refconv bench: matvec-16384 (MATVEC_PRESETS, a --preset value), every variant
#   kron    refconv bench: kron-200 (KRON_PRESETS), single_launch (KRON_VARIANTS, a --variant
#           value), 3 runs (each call moves 12.8 GB)
#   cuconv  refconv bench: every cuconv preset (best, cuconv_split, cuconv_fused, cuDNN peers);
#           CUCONV_PRESETS=cuconv-E4 (a --preset value) for fewer; CUCONV_SEEDS=best leaves the seeds out
#   ptx     the PTX of both twins of the best kernels on their presets (NVIDIA's OpenCL binaries are
#           PTX; Nsight Compute does not profile OpenCL), as $OUT/ptx.tgz
# Give the device call a limit above the sum of the steps' limits (plus ~30 s of set-up): a step
# past its limit keeps what it finished, a call past its limit returns nothing of the plots.
# Plots go to $OUT/plots_<step>.tgz (the device returns a limited number of files).
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1; cat "$OUT/gpu.txt"
bench() {  # TAG LIMIT ARGS...
  local tag=$1 lim=$2; shift 2
  timeout $lim $R bench --backend '*[al]' --cuda gpu --opencl nvidia --timeout 90 --json "$OUT/bench_$tag.json" --markdown "$OUT/bench_$tag.md" --plots "$OUT/plots/$tag" "$@" \
    > "$OUT/bench_$tag.txt" 2>&1
  echo "bench $tag exit $?"; grep -E "^\| [a-z0-9]+/" "$OUT/bench_$tag.md" | cut -d'|' -f2,3,7,8 | head -n 60
}
steps="$*"
for s in $steps; do
  case $s in
    check) timeout ${CHECK_LIMIT:-170} $R check --cuda gpu --opencl nvidia --profile gpu --examples 2 \
             --variant 'filter2d/*/best_*' --variant 'conv2d/*/best' --variant 'sobel/*/best_*' \
             > "$OUT/check.txt" 2>&1
           echo "check exit $?"; grep -E "^ (pass|fail|error|hang|skip)|variants:" "$OUT/check.txt" ;;
    images) bench images ${IMAGES_LIMIT:-200} --preset filter2d-u8-3x3-3072,sobel-4096x3072 --repeat 20 \
              --variant 'best_*' --variant '*/CM_CF8' --variant '*/gmem' --variant '*/smem_rows2' ;;
    matvec) bench matvec ${MATVEC_LIMIT:-90} --preset "${MATVEC_PRESETS:-matvec-16384}" --repeat 10 ;;
    kron) bench kron ${KRON_LIMIT:-100} --preset "${KRON_PRESETS:-kron-200}" --repeat 3 --variant "${KRON_VARIANTS:-single_launch}" ;;
    ptx) for spec in "filter2d-u8-3x3-3072 numba_cuda/best_R2 opencl/best_R2" \
                     "sobel-4096x3072 numba_cuda/best_R8 opencl/best_R8" "cuconv-T3-1x1-C numba_cuda/best opencl/best"; do
           set -- $spec; p=$1; shift
           OUT=$OUT/ptx/$p PRESET=$p SASS=1 timeout 120 env -C /tmp python "$PWD/lab/probes/twin_profile.py" "$@" 2>&1 | grep -v Warn | tail -n 3
         done
         for f in $(find "$OUT/ptx" -name 'opencl_*.ptx'); do    # OpenCL's PTX to SASS, as numba's
           ptxas -arch=sm_90 "$f" -o /tmp/cl.cubin 2>/dev/null && cuobjdump -sass /tmp/cl.cubin > "${f%.ptx}.sass"
         done
         tar -C "$OUT" -czf "$OUT/ptx.tgz" ptx && rm -r "$OUT/ptx" ;;
    cuconv) bench cuconv ${CUCONV_LIMIT:-420} --preset "${CUCONV_PRESETS:-cuconv-*}" --repeat 20 --variant best \
              --variant "${CUCONV_SEEDS:-cuconv_*}" ;;
    *) echo "unknown step $s (accepted: check images matvec kron cuconv ptx)"; exit 2 ;;
  esac
done
[ -d "$OUT/plots" ] && tar -C "$OUT" -czf "$OUT/plots_$(echo "$steps" | tr ' ' _).tgz" plots && rm -r "$OUT/plots"
