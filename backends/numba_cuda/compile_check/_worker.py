"""A compile-check worker process: imports the real ``numba.cuda``, installs the fake device,
runs each variant's ``run`` unchanged on each specialisation's problem, and compiles every
recorded launch with ``numba.cuda.compile_ptx`` (+ nvJitLink / ``ptxas``)."""
from __future__ import annotations

import json
import os
import time
import traceback

from ._assemble import assemble
from ._fake_device import install_fakes
from ._pool import _finding
from ._tools import find_ptxas


def _short(e: BaseException, limit=1500) -> str:
    s = f"{type(e).__name__}: {e}"
    return s if len(s) <= limit else s[:limit] + " ..."


def _kernel_lines(pyfunc):
    try:
        code = pyfunc.__code__
        return code.co_filename, code.co_firstlineno
    except Exception:
        return None, None


def worker(inp: str, outp: str) -> None:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
    import numpy as np
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    from numba import cuda  # real numba.cuda, before any backend module can ask for the simulator
    from numba.cuda.core import config
    assert not config.ENABLE_CUDASIM

    with open(inp) as f:
        job = json.load(f)
    cc = tuple(job["cc"])
    ptxas = find_ptxas() if job.get("ptxas", True) else None
    launches: list = []
    keep: list = []

    def recorder(disp, argtypes, lc):
        launches.append((disp, argtypes, lc))
        keep.append(disp)

    install_fakes(cc, recorder)
    from refconv import registry
    from refconv.problem import Problem

    compiled: dict = {}

    def compile_one(disp, argtypes):
        key = (id(disp), argtypes)
        if key in compiled:
            return compiled[key]
        opts = {k: v for k, v in disp.targetoptions.items()
                if k in ("fastmath", "lineinfo", "debug", "opt", "launch_bounds")}
        t0 = time.perf_counter()
        try:
            ptx, _ = cuda.compile_ptx(disp.py_func, argtypes, cc=cc, **opts)
        except Exception as e:
            res = {"error": _short(e), "stage": "numba/NVVM"}
        else:
            res = {"ptx_bytes": len(ptx)}
            if job.get("ptxas", True):
                info, err, tool = assemble(ptxas, ptx, cc)
                if err:
                    res.update(error=err[-1500:], stage=tool)
                elif info is not None:
                    res.update(info, assembler=tool)
        res["seconds"] = round(time.perf_counter() - t0, 3)
        compiled[key] = res
        return res

    out: dict = {}
    for task in job["tasks"]:
        vid = task["id"]
        fs = out.setdefault(vid, [])
        try:
            _check_task(task, vid, fs, cuda, cc, ptxas, job, launches, compile_one, registry, Problem)
        except Exception as e:  # a bug in the check itself: reported, never a pass
            fs.append(_finding("compile-check-failed", f"the compile check failed on this variant: "
                                                       f"{_short(e)}", vid,
                               traceback="".join(traceback.format_exception(e))[-3000:]))
    with open(outp, "w") as f:
        json.dump(out, f, default=str)


def _check_task(task, vid, fs, cuda, cc, ptxas, job, launches, compile_one, registry, Problem):
    import numpy as np
    try:
        if task.get("ref"):
            import importlib
            mod = importlib.import_module(task["ref"][0])
            run = mod
            for part in task["ref"][1].split("."):
                run = getattr(run, part)
        else:
            run = registry.get(vid).run
    except Exception as e:
        fs.append(_finding("compile-check-failed", f"cannot load the variant in a non-simulator "
                                                   f"process: {_short(e)}", vid))
        return
    infos: dict = {}
    errors: dict = {}
    for params, desc in task["specs"]:
        spec = {"params": params, "problem": desc}
        launches.clear()
        trace_err = None
        try:
            from refconv.checking import call_run, scratch_output
            problem = Problem.parse(desc)
            out = scratch_output(problem, task.get("writes", "all"), task.get("output", "array"))
            call_run(run, problem, out, params)
        except Exception as e:  # the fake device returns garbage: later host code may fail
            trace_err = e
        if not launches:
            fs.append(_finding(
                "compile-check-failed",
                f"no kernel launch recorded for params {params} on {desc}"
                + (f": the variant raised {_short(trace_err)}" if trace_err else ""), vid,
                specialisation=spec,
                traceback="".join(traceback.format_exception(trace_err))[-3000:] if trace_err else None))
            continue
        for disp, argtypes, lc in launches:
            name = disp.py_func.__qualname__
            file, line = _kernel_lines(disp.py_func)
            res = compile_one(disp, argtypes)
            sig = f"({', '.join(str(a) for a in argtypes)})"
            where = dict(kernel=name, file=file, line=line, signature=sig, cc=f"sm_{cc[0]}{cc[1]}",
                         specialisation=spec)
            if "error" in res:
                k = (name, res["error"][:200])
                if k not in errors:
                    errors[k] = _finding(
                        "compile-error", f"kernel {name}{sig} does not compile for sm_{cc[0]}{cc[1]} "
                        f"({res['stage']}) with params {params}: {res['error']}", vid, stage=res["stage"],
                        **where)
                continue
            if lc is not None:
                threads = int(np.prod(lc.blockdim))
                why = None
                if threads > 1024:
                    why = f"block {lc.blockdim} has {threads} threads > 1024"
                elif "regs" in res and res["regs"] * threads > 65536:
                    why = (f"{res['regs']} registers x {threads} threads = {res['regs'] * threads} "
                           f"> 65536 registers per block (too many resources requested for launch)")
                elif res.get("smem", 0) + int(lc.sharedmem or 0) > 49152:
                    why = (f"{res.get('smem', 0)} B static + {lc.sharedmem} B dynamic shared memory "
                           f"> 48 KiB (numba does not opt in to more)")
                if why:
                    k = ("launch", name, why)
                    if k not in errors:
                        errors[k] = _finding("launch-error", f"kernel {name}: {why} (params {params})",
                                             vid, griddim=list(lc.griddim), blockdim=list(lc.blockdim),
                                             sharedmem=int(lc.sharedmem or 0), **where)
            ik = (name, json.dumps(params, sort_keys=True, default=str), sig)
            if ik not in infos:
                extra = ""
                if "regs" in res:
                    extra = (f": {res['regs']} registers, {res.get('smem', 0)} B static smem, "
                             f"{res.get('spill_stores', 0)} B spill stores, {res.get('spill_loads', 0)} B "
                             f"spill loads, {res.get('stack', 0)} B stack")
                infos[ik] = _finding("compile-info", f"kernel {name}{sig} params {params} compiled for "
                                     f"sm_{cc[0]}{cc[1]}{extra}", vid,
                                     **{k: res[k] for k in ("regs", "smem", "spill_stores", "spill_loads",
                                                            "stack", "ptx_bytes", "seconds", "assembler") if k in res},
                                     **where)
    fs.extend(errors.values())
    fs.extend(infos.values())
