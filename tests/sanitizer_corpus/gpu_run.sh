#!/bin/bash
# One device run: unpack the carried (or already unpacked) numba/numba-cuda/llvmlite/cuda-python site (.whl_san/site.tar.xz,
# cp312), then: plain GPU run of every corpus case, and compute-sanitizer memcheck / racecheck /
# synccheck / initcheck over each case (one process per case and tool).  Results under $OUT.
set -u
D=$(cd "$(dirname "$0")" && pwd)
# SITE: the carried tarball (default .whl_san/site.tar.xz); skipped when /tmp/site already holds numba_cuda.
SITE=${SITE:-.whl_san/site.tar.xz}
if [ ! -d /tmp/site/numba_cuda ]; then
  mkdir -p /tmp/site && (tar xJf "$SITE" -C /tmp/site 2>/dev/null || python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall('/tmp/site')" "$SITE") || exit 1
fi
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 NUMBA_ENABLE_CUDASIM=0
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
LOG=$OUT/logs; mkdir -p $LOG
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $LOG/gpu.txt 2>&1
compute-sanitizer --version >> $LOG/gpu.txt 2>&1
python3 -c "import numpy, numba, numba_cuda; print(numpy.__version__, numba.__version__, numba_cuda.__version__)" >> $LOG/gpu.txt 2>&1
cat $LOG/gpu.txt
python3 $D/gpu_driver.py --all --repeat ${REPEAT:-20} > $LOG/plain.jsonl 2> $LOG/plain.err
CASES=$(python3 $D/gpu_driver.py --list)
jobs=""
for tool in memcheck racecheck synccheck initcheck; do
  for c in $CASES; do jobs="$jobs $tool:$c"; done
done
echo $jobs | tr ' ' '\n' | xargs -P 8 -I{} bash -c 't=${1%%:*}; c=${1#*:}; extra=""; [ $t = racecheck ] && extra="--racecheck-report hazard"; timeout 240 compute-sanitizer --tool $t $extra --print-limit 20 python3 '$D'/gpu_driver.py --case $c > '$LOG'/$t.$c.txt 2>&1; echo "rc=$?" >> '$LOG'/$t.$c.txt' _ {}
python3 - <<'PY' > $OUT/summary.json
import glob, json, os, re
log = os.environ["OUT"] + "/logs"
res = {}
for f in sorted(glob.glob(log + "/*.*.txt")):
    tool, case = os.path.basename(f)[:-4].split(".", 1)
    text = open(f, errors="replace").read()
    m = re.search(r"ERROR SUMMARY: (\d+) error", text)
    hz = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
    first = [l.strip() for l in text.splitlines() if re.search(r"(Invalid|Race|hazard|Barrier|Uninitialized|error)", l, re.I) and "SUMMARY" not in l][:6]
    ok = [json.loads(l) for l in text.splitlines() if l.startswith("{")]
    lines = sorted({int(x) for x in re.findall(r"cuda_kernels\.py:(\d+)", text)} -
                   {int(x) for x in re.findall(r"Host Frame:.*cuda_kernels\.py:(\d+)", text)})
    res.setdefault(case, {})[tool] = {"errors": int(m.group(1)) if m else None,
        "hazards": [int(x) for x in hz.groups()] if hz else None, "first": first, "run": ok[0] if ok else None,
        "kernel_lines": lines, "rc": text.strip().splitlines()[-1]}
for l in open(log + "/plain.jsonl"):
    r = json.loads(l)
    p = res.setdefault(r["case"], {}).setdefault("plain", {"runs": 0, "wrong": 0, "max_abs_err": 0.0, "error": None})
    p["runs"] += 1
    if r["error"]:
        p["error"] = r["error"]
    else:
        p["wrong"] += not r["ok"]
        p["max_abs_err"] = max(p["max_abs_err"], r["max_abs_err"])
print(json.dumps(res, indent=1))
PY
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $LOG
python3 -c "
import json; d=json.load(open('$OUT/summary.json'))
for c,v in d.items():
    p = v.get('plain', {})
    print(c, 'plain wrong %s/%s max_err=%s err=%s' % (p.get('wrong'), p.get('runs'), p.get('max_abs_err'), (p.get('error') or '')[:60]), {t: (v[t]['errors'], v[t]['hazards'], v[t]['kernel_lines']) for t in ('memcheck','racecheck','synccheck','initcheck') if t in v})
"
