"""A compile-check worker process: imports the real ``numba.cuda``, installs the fake device, and
talks to the parent (:mod:`._pool`) in JSON lines on its stdin / stdout (its own prints go to
stderr, the parent's log):

1. it runs each variant's ``run`` unchanged on each specialisation of its job file (a share of
   the sweep), recording every launch instead of running it, and sends ``{"traced": ...}``: per
   launch, the kernel's cache key (:func:`launch_key`: its fingerprint, argument types, options,
   the compute capability and the toolchain's versions), name, place, signature, launch
   configuration, declared ``max_registers`` and host-computed static shared memory
   (:mod:`._resources`); per variant, the findings of tracing itself;
2. then, for each ``{"compile": key}`` the parent sends (a kernel no other worker compiles and
   the disk cache does not hold), it compiles that kernel with ``numba.cuda.compile_ptx``, plus
   nvJitLink / ``ptxas`` for registers, shared memory and spills, and answers ``{"result": key,
   ...}``; ``{"exit": true}`` ends it.

The worker uses the plugin model only (``Problem``, ``Variant``, ``RowSink``, ``run_variant``),
never the engine (registry, checker)."""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import traceback

from ._assemble import assemble, ptx_static_shared
from ._fake_device import install_fakes
from ._findings import finding
from ._fingerprint import Unfingerprintable, fingerprint
from ._resources import NotComputable, static_shared_bytes
from ._tools import find_ptxas

#: the compile options of ``numba.cuda.jit`` that ``compile_ptx`` takes
PTX_OPTIONS = ("fastmath", "lineinfo", "debug", "opt", "launch_bounds")


def _short(e: BaseException, limit=1500) -> str:
    s = f"{type(e).__name__}: {e}"
    return s if len(s) <= limit else s[:limit] + " ..."


def _kernel_lines(pyfunc):
    try:
        code = pyfunc.__code__
        return code.co_filename, code.co_firstlineno
    except Exception:
        return None, None


def toolchain(ptxas) -> dict:
    """The versions a compile result depends on besides the kernel: numba-cuda, NVVM, the assembler."""
    from importlib.metadata import version
    out = {"numba-cuda": version("numba-cuda")}
    try:
        from numba.cuda.cudadrv.nvvm import NVVM
        out["nvvm"] = list(NVVM().get_version())
    except Exception as e:
        out["nvvm"] = f"unknown ({type(e).__name__})"
    try:
        from cuda.bindings import nvjitlink
        out["nvjitlink"] = list(nvjitlink.version())
    except Exception:
        out["nvjitlink"] = None
    if ptxas:
        import subprocess
        try:
            out["ptxas"] = subprocess.run([ptxas, "--version"], capture_output=True, text=True,
                                          timeout=60).stdout.strip().splitlines()[-1:]
        except Exception:
            out["ptxas"] = ptxas
    return out


def _options(disp) -> dict:
    opts = {k: v for k, v in disp.targetoptions.items() if k in PTX_OPTIONS}
    return opts


def launch_key(disp, argtypes, cc, tools: dict, assemble_too: bool) -> str | None:
    """The sha256 naming what compiling ``disp`` for ``argtypes`` yields, or None when the kernel
    cannot be fingerprinted (:mod:`._fingerprint`)."""
    try:
        fp = fingerprint(disp)
    except Unfingerprintable:
        return None
    desc = [fp, [str(a) for a in argtypes], sorted((k, repr(v)) for k, v in _options(disp).items()),
            disp.targetoptions.get("max_registers"), list(cc), tools, assemble_too]
    return hashlib.sha256(json.dumps(desc, default=repr).encode()).hexdigest()


class _Channel:
    """The protocol: JSON lines on the stdout the worker was started with (fd 1 itself then points
    to stderr, so that prints of the code it runs never reach the parent as messages)."""

    def __init__(self):
        self.out = os.fdopen(os.dup(1), "w")
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    def send(self, msg) -> None:
        self.out.write(json.dumps(msg, default=str) + "\n")
        self.out.flush()

    @staticmethod
    def receive():
        line = sys.stdin.readline()
        return json.loads(line) if line else {"exit": True}


def worker(inp: str) -> None:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
    chan = _Channel()
    import numpy as np
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    from numba import cuda  # real numba.cuda, before any backend module can ask for the simulator
    from numba.cuda.core import config
    assert not config.ENABLE_CUDASIM

    with open(inp) as f:
        job = json.load(f)
    cc = tuple(job["cc"])
    assemble_too = job.get("ptxas", True)
    ptxas = find_ptxas() if assemble_too else None
    tools = toolchain(ptxas)
    launches: list = []

    def recorder(disp, argtypes, lc):
        launches.append((disp, argtypes, lc))

    install_fakes(cc, recorder)
    kernels: dict = {}          # key -> (dispatcher, argtypes): what "compile" compiles
    records, findings = [], {}
    for task in job["tasks"]:
        vid = task["id"]
        fs = findings.setdefault(vid, [])
        try:
            _trace_task(task, fs, launches, records, kernels, cc, tools, assemble_too)
        except Exception as e:  # a bug in the check itself: reported, never a pass
            fs.append(finding("compile-check-failed", f"the compile check failed on this variant: {_short(e)}", vid,
                              traceback="".join(traceback.format_exception(e))[-3000:]))
    chan.send({"traced": {"records": records, "findings": findings}})
    while True:
        cmd = chan.receive()
        if cmd.get("exit"):
            chan.send({"exited": True})
            break
        key = cmd["compile"]
        disp, argtypes = kernels[key]
        chan.send({"result": key, **compile_kernel(cuda, cc, ptxas, assemble_too, disp, argtypes)})


def compile_kernel(cuda, cc, ptxas, assemble_too: bool, disp, argtypes) -> dict:
    """PTX (and, when ``assemble_too``, SASS resources through nvJitLink / ``ptxas``) of one
    kernel specialisation: ``{"ptx_bytes", "regs", "smem", ...}`` or ``{"error", "stage"}``."""
    t0 = time.perf_counter()
    try:
        ptx, _ = cuda.compile_ptx(disp.py_func, argtypes, cc=cc, **_options(disp))
    except Exception as e:
        res = {"error": _short(e), "stage": "numba/NVVM"}
    else:
        res = {"ptx_bytes": len(ptx), "smem_ptx": ptx_static_shared(ptx)}
        if assemble_too:
            info, err, tool = assemble(ptxas, ptx, cc, disp.targetoptions.get("max_registers"))
            if err:
                res.update(error=err[-1500:], stage=tool)
            elif info is not None:
                res.update(info, assembler=tool)
    res["seconds"] = round(time.perf_counter() - t0, 3)
    return res


def load_variant(task: dict):
    """The variant a task names: its ``run`` imported by module and qualified name (``ref``) in a
    ``Variant`` of the task's op, backend and name, else the variant of that id among the
    ``variants()`` of the backend's entry point (``backend_ref``, ``module:attr``)."""
    import importlib

    from refconv.variant import Backend, Variant
    if task.get("ref"):
        run = importlib.import_module(task["ref"][0])
        for part in task["ref"][1].split("."):
            run = getattr(run, part)
        return Variant(task["op"], task["backend"], task["name"], run=run, writes=task.get("writes", "all"),
                       output=task.get("output", "array"))
    if task.get("backend_ref"):
        mod, _, attr = task["backend_ref"].partition(":")
        b = getattr(importlib.import_module(mod), attr)
        if callable(b) and not isinstance(b, Backend):
            b = b()
        found = [v for v in b.variants() if v.id == task["id"]]
        if found:
            return found[0]
        raise LookupError(f"backend entry point {task['backend_ref']} has no variant {task['id']}")
    raise LookupError(f"variant {task['id']}: its run is not importable by name and its backend has no "
                      f"entry point in the group refconv.backends")


def _scratch(layout: dict):
    """A zero-filled output of the parent's ``layout`` (``shape``, ``dtype``, ``rows``): an array,
    or a sink that drops its row blocks."""
    import numpy as np

    from refconv.sink import RowSink
    shape, dtype = tuple(layout["shape"]), np.dtype(layout["dtype"])
    if layout.get("rows"):
        return RowSink(shape, dtype, lambda r0, block: None)
    return np.zeros(shape, dtype)


def _host_smem(disp):
    try:
        return static_shared_bytes(disp.py_func)
    except NotComputable as e:
        return str(e)


def _trace_task(task, fs, launches, records, kernels, cc, tools, assemble_too):
    """Trace every specialisation of one variant on the fake device: a record per launch into
    ``records`` (its kernel into ``kernels`` by key), tracing's own findings into ``fs``."""
    from refconv import Problem
    from refconv.variant import run_variant
    vid = task["id"]
    try:
        variant = load_variant(task)
    except Exception as e:
        fs.append(finding("compile-check-failed", f"cannot load the variant in a non-simulator "
                                                  f"process: {_short(e)}", vid))
        return
    keys: dict = {}             # (id(dispatcher), argtypes) -> key, within this worker
    for params, desc, layout in task["specs"]:
        spec = {"params": params, "problem": desc}
        launches.clear()
        trace_err = None
        try:
            run_variant(variant, Problem.parse(desc), _scratch(layout), params)
        except Exception as e:  # the fake device returns garbage: later host code may fail
            trace_err = e
        if not launches:
            fs.append(finding(
                "compile-check-failed",
                f"no kernel launch recorded for params {params} on {desc}"
                + (f": the variant raised {_short(trace_err)}" if trace_err else ""), vid,
                specialisation=spec,
                traceback="".join(traceback.format_exception(trace_err))[-3000:] if trace_err else None))
            continue
        for disp, argtypes, lc in launches:
            local = (id(disp), argtypes)
            if local not in keys:
                key = launch_key(disp, argtypes, cc, tools, assemble_too) or f"unique-{os.getpid()}-{len(kernels)}"
                kernels.setdefault(key, (disp, argtypes))
                keys[local] = (key, _host_smem(disp))
            key, host_smem = keys[local]
            file, line = _kernel_lines(disp.py_func)
            records.append({
                "variant": vid, "specialisation": spec, "key": key,
                "kernel": disp.py_func.__qualname__, "file": file, "line": line,
                "signature": f"({', '.join(str(a) for a in argtypes)})",
                "griddim": list(lc.griddim) if lc is not None else None,
                "blockdim": list(lc.blockdim) if lc is not None else None,
                "sharedmem": int(lc.sharedmem or 0) if lc is not None else None,
                "max_registers": disp.targetoptions.get("max_registers"),
                "host_smem": host_smem})
