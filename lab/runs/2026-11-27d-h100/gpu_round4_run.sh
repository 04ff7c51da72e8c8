#!/usr/bin/env bash
# Issue #24's fourth round on a lent NVIDIA machine (set-up: lab/runners/device_env.sh; carry .whl/).
# usage: bash lab/runs/2026-11-27d-h100/gpu_round4_run.sh STEP...
#   modes   lab/probes/gpu_proto_probe.py: filter2d's arithmetic modes (truncation on the conversion
#           unit, alternating, int32, half int32 / half float) over 8 and 16 columns a thread,
#           2/4/8 rows, prefetch on and off -> $OUT/proto_modes.jsonl
#   floor   the same probe's floor kernels: the loads and stores alone (TRUNC 8) and the FMA chain
#           without truncations (TRUNC 9), beside the mixed mode -> $OUT/proto_floor.jsonl
#   int     lab/sweeps/gpu_roofline_sweep.py: filter2d/numba_cuda/best_R{2,4}, arith auto and int
#   parity  lab/probes/gpu_timer_parity.py: twin kernels through each backend's timed path
#   conv    lab/sweeps/gpu_conv_best_sweep.py --alts deep on the 1x1 presets T3-B and T3-C, both twins
#   shapes  lab/sweeps/gpu_conv_best_sweep.py --alts shapes (more threads a block) on T3-B and T3-C
#   cflush  lab/probes/gpu_flush_probe.py on T3-C's best, both twins (the OpenCL twin's gap: cold or not)
#   fixed   refconv bench of cuconv-T3-1x1-C (best, peers): the report's fixed-cost lines on a GPU
#   ccheck  refconv check --profile gpu of conv2d/numba_cuda/best
# The bench rows of the round come from lab/runners/gpu_final_run.sh (check, cuconv with
# CUCONV_PRESETS=cuconv-E4 CUCONV_SEEDS=best, images, matvec, kron).  The device returns at most 8
# files: tar $OUT when running several steps.
set -uo pipefail
. "$(dirname "$0")/../../runners/device_env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1; cat "$OUT/gpu.txt"
S=$PWD/scripts
for s in "$@"; do
  case $s in
    modes) (cd /tmp && PROTO_TRUNC=2,3,4,5 PROTO_CW=8,16 PROTO_R=2,4,8 PROTO_PF=0,1 timeout 200 python "$S/gpu_proto_probe.py" filter2d) \
             > "$OUT/proto_modes.jsonl"; echo "modes exit $?" ;;
    floor) (cd /tmp && PROTO_TRUNC=4,8,9 PROTO_CW=8,16 PROTO_R=2,4 PROTO_PF=1 timeout 90 python "$S/gpu_proto_probe.py" filter2d) \
             > "$OUT/proto_floor.jsonl"; echo "floor exit $?"; cut -c1-200 "$OUT/proto_floor.jsonl" ;;
    int) (cd /tmp && SWEEP_PRESETS=filter2d-u8-3x3-3072 SWEEP_MATCH='filter2d/numba_cuda/best_R[24]' \
            timeout 170 python "$S/gpu_roofline_sweep.py" "$OUT/sweep_int.json") > "$OUT/sweep_int.txt" 2>&1
         echo "int exit $?"; cat "$OUT/sweep_int.md" ;;
    parity) (cd /tmp && timeout 90 python "$S/gpu_timer_parity.py") > "$OUT/timer_parity.txt" 2>&1
            echo "parity exit $?"; grep '^{' "$OUT/timer_parity.txt" | cut -c1-160 ;;
    conv) (cd /tmp && timeout 170 python "$S/gpu_conv_best_sweep.py" "$OUT/conv_t3_cl.json" --alts deep \
             --preset cuconv-T3-1x1-C --preset cuconv-T3-1x1-B) > "$OUT/conv_t3_cl.txt" 2>&1
          echo "conv exit $?"; cut -d'|' -f2-9 "$OUT/conv_t3_cl.md" ;;
    shapes) (cd /tmp && timeout 240 python "$S/gpu_conv_best_sweep.py" "$OUT/conv_shapes.json" --alts shapes \
               --preset cuconv-T3-1x1-C --preset cuconv-T3-1x1-B) > "$OUT/conv_shapes.txt" 2>&1
            echo "shapes exit $?"; cut -d'|' -f2-9 "$OUT/conv_shapes.md" ;;
    cflush) (cd /tmp && FLUSH_CASES=cuconv-T3-1x1-C=conv2d/opencl/best,cuconv-T3-1x1-C=conv2d/numba_cuda/best \
               timeout 90 python "$S/gpu_flush_probe.py") > "$OUT/conv_flush.txt" 2>&1
            echo "cflush exit $?"; grep '^{' "$OUT/conv_flush.txt" ;;
    fixed) timeout 100 $R bench --backend '*[al]' --cuda gpu --opencl nvidia --preset cuconv-T3-1x1-C --repeat 20 \
             --variant best --json "$OUT/bench_fixed.json" --markdown "$OUT/bench_fixed.md" > "$OUT/bench_fixed.txt" 2>&1
           echo "fixed exit $?"; head -n 12 "$OUT/bench_fixed.md"; grep -E "^\| conv2d/" "$OUT/bench_fixed.md" | cut -d'|' -f2,3,7,8 ;;
    ccheck) timeout 150 $R check --cuda gpu --profile gpu --examples 2 --variant 'conv2d/numba_cuda/best' \
              > "$OUT/ccheck.txt" 2>&1; echo "ccheck exit $?"; tail -n 8 "$OUT/ccheck.txt" ;;
    *) echo "unknown step $s (accepted: modes floor int parity conv shapes cflush fixed ccheck)"; exit 2 ;;
  esac
done
