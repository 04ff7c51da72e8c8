#!/usr/bin/env bash
# On a lent NVIDIA machine (set-up: lab/runners/device_env.sh): the peers at their best, timed like the
# variants (issue 24): the same-method GPU test, then the filter2d preset (CM_CF8 twins and every
# filter2d peer) and the cuconv presets (every conv2d variant and peer).
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
python -c "import torch, cupy; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version(), 'cupy', cupy.__version__)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
env -C /tmp python -m pytest -q -p no:cacheprovider "$PWD/tests/test_bench_gpu_method.py" 2>&1 | tail -15
timeout ${LIMIT:-200} $R bench --backend '*[al]' --cuda gpu --opencl nvidia --variant '*CM_CF8' \
    --preset filter2d-u8-3x3-3072 --repeat 30 --json "$OUT/peers_filter2d.json" --markdown "$OUT/peers_filter2d.md" \
    > "$OUT/peers_filter2d.txt" 2>&1; echo "filter2d exit $?"
timeout ${LIMIT:-240} $R bench --backend '*[al]' --cuda gpu --opencl nvidia --op conv2d \
    --preset 'cuconv-*' --repeat 30 --json "$OUT/peers_cuconv.json" --markdown "$OUT/peers_cuconv.md" \
    > "$OUT/peers_cuconv.txt" 2>&1; echo "cuconv exit $?"
python - "$OUT" <<'PY'
import json, sys
for f in ("peers_filter2d", "peers_cuconv"):
    try:
        rep = json.load(open(f"{sys.argv[1]}/{f}.json"))
    except Exception as e:
        print(f, e); continue
    for r in rep["rows"]:
        k = r.get("kernel_s") or r.get("e2e_s") or {}
        print(f"{r['problem']:18s} {r['variant']:38s} {k.get('median', 0)*1e6:9.1f} us IQR {(k.get('q3',0)-k.get('q1',0))*1e6:7.1f} {r['status'][:60]} {','.join(r.get('kernels', []))[:120]}")
PY
