"""Acceptance run for seed 003's largest case: the n = 360 float64 Kronecker product (a 125 GiB
result) produced by a ``streamed`` variant and checked block by block against
``refconv.specs.kron_rows``, with peak host and device memory recorded.

    python lab/probes/kron_360.py --backend numba_cuda --n 360 --rows 1024 [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import resource
import threading
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="numba_cuda")
    ap.add_argument("--variant", default="streamed")
    ap.add_argument("--n", type=int, default=360)
    ap.add_argument("--rows", type=int, default=1024, help="rows_per_block (numba_cuda)")
    ap.add_argument("--json")
    ns = ap.parse_args()
    from refconv import Problem, registry
    from refconv.checking import check_example
    from refconv.pool import configure_backends
    configure_backends({"cuda": "gpu", "opencl": "nvidia"})
    (v,) = registry.variants(op="kron", backend=ns.backend, name=ns.variant)
    n = ns.n
    problem = Problem("kron", {"dtype": "float64", "m": n, "n": n, "p": n, "q": n}, {},
                      {"a": "random.3", "b": "random.4"})
    params = v.default_params()
    if "rows_per_block" in params:
        params["rows_per_block"] = ns.rows
    peak_dev = [0]
    stop = threading.Event()

    def poll():  # device memory in use, from the driver, every 50 ms
        try:
            import ctypes
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            lib.nvmlInit_v2()
            h = ctypes.c_void_p()
            lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h))

            class Mem(ctypes.Structure):
                _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]
            m = Mem()
            while not stop.is_set():
                lib.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m))
                peak_dev[0] = max(peak_dev[0], m.used)
                time.sleep(0.05)
        except Exception as e:  # pragma: no cover - no NVML
            print(f"no device-memory poll: {e}")

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    t0 = time.perf_counter()
    r = check_example(v, problem, params)
    secs = time.perf_counter() - t0
    stop.set()
    out_bytes = (n ** 4) * 8
    doc = {"variant": v.id, "case": problem.descriptor(), "params": params, "status": r.status,
           "message": r.message, "seconds": secs, "result_bytes": out_bytes,
           "peak_host_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
           "peak_device_used_bytes": peak_dev[0]}
    print(json.dumps(doc, indent=1))
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0 if r.status == "pass" else 1


if __name__ == "__main__":
    raise SystemExit(main())
