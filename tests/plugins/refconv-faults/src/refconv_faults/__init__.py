"""refconv-faults: a refconv backend whose variants crash the process running them, hang with a
child process, or are correct (a test fixture; see README.md)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from refconv import Backend, Variant

NAME = "faults"

# a slow start-up (like a heavy GPU runtime import), for tests of the per-example time limit
time.sleep(float(os.environ.get("REFCONV_FAULTS_IMPORT_DELAY", "0")))


def _spec(problem, out):
    from refconv import specs
    args, kwargs = problem.spec_args()
    out[...] = specs.matvec(*args, **kwargs)
    return out


def _crashing(name, crash):
    def run(problem, out):
        if problem.dims["rows"] > 2:
            crash()
        return _spec(problem, out)
    run.__doc__ = f"{name} when rows > 2, else correct"
    return run


def _segfault():
    import ctypes
    ctypes.string_at(0)


def _keyboard_interrupt():
    raise KeyboardInterrupt


CRASHES = {
    "crash_segfault": _segfault,
    "crash_exit": lambda: os._exit(3),
    "crash_abort": os.abort,
    "crash_sys_exit": lambda: sys.exit(3),
    "crash_keyboard_interrupt": _keyboard_interrupt,
}


def spawns_and_hangs(problem, out):
    """When rows > 1, starts ``sleep $REFCONV_FAULTS_SLEEP`` and never returns (a hang that leaves a
    child behind); else correct."""
    if problem.dims["rows"] <= 1:
        return _spec(problem, out)
    subprocess.Popen(["sleep", os.environ.get("REFCONV_FAULTS_SLEEP", "300")], stdin=subprocess.DEVNULL)
    while True:
        time.sleep(0.05)


def correct(problem, out):
    """The spec's result."""
    return _spec(problem, out)


def _variants():
    sup = {"dtype": ("float32", "float64")}
    vs = [Variant(op="matvec", backend=NAME, name=n, run=_crashing(n, f), supports=sup, origin="refconv-faults")
          for n, f in CRASHES.items()]
    vs.append(Variant(op="matvec", backend=NAME, name="spawns_and_hangs", run=spawns_and_hangs, supports=sup,
                      origin="refconv-faults"))
    vs += [Variant(op="matvec", backend=NAME, name=f"correct_{c}", run=correct, supports=sup, origin="refconv-faults")
           for c in "abcdef"]
    return vs


backend = Backend(name=NAME, variants=_variants, describe=lambda: "fault-injecting variants (refconv test plugin)")
