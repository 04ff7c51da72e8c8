"""Run the CUDA corpus on a real GPU (plain, or as the target of compute-sanitizer).

    python3 gpu_driver.py --all            # every case in one process: does the output come out right?
    python3 gpu_driver.py --case NAME      # one case (one process per case under compute-sanitizer:
                                           # a memcheck error poisons the CUDA context for the rest)
    python3 gpu_driver.py --all --repeat 20  # each case 20 times: how often is a racy output wrong?
Prints one JSON line per case and run: {"case", "run", "ok", "max_abs_err", "error"}.
Every kernel is compiled with ``lineinfo=True``, so compute-sanitizer names source lines.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

import numpy as np

if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still overloads np.row_stack (gone in numpy 2.5)
    np.row_stack = np.vstack
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "0")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sanitizer_corpus import cuda_kernels as ck  # noqa: E402


def _with_lineinfo():
    """Ask for line information in every corpus kernel (read by the dispatcher at compile time)."""
    from numba.cuda.dispatcher import CUDADispatcher
    for obj in vars(ck).values():
        if isinstance(obj, CUDADispatcher):
            obj.targetoptions["lineinfo"] = True


def run_case(name, k=0):
    run = ck.CASES[name][0]
    rec = {"case": name, "run": k, "ok": None, "max_abs_err": None, "error": None}
    try:
        got, exp = run()
        from numba import cuda
        cuda.synchronize()
        rec["ok"] = bool(np.array_equal(got, exp))
        with np.errstate(all="ignore"):
            rec["max_abs_err"] = float(np.nanmax(np.abs(got.astype(np.float64) - exp))) if got.size else 0.0
        rec["nan"] = int(np.isnan(got).sum()) if got.dtype.kind == "f" else 0
    except Exception as e:
        rec["error"] = f"{type(e).__name__}: {str(e)[:400]}"
        rec["traceback"] = traceback.format_exc()[-1500:]
    print(json.dumps(rec), flush=True)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each case (default 1)")
    a = ap.parse_args()
    if a.list:
        print(" ".join(ck.CASES))
        return
    _with_lineinfo()
    names = list(ck.CASES) if a.all else [a.case]
    for n in names:
        for k in range(a.repeat):
            if run_case(n, k)["error"]:
                break  # a compile error repeats identically


if __name__ == "__main__":
    main()
