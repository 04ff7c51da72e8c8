"""Parent side of the compile check: specialisations per variant, then a pool of worker processes
(``python -m refconv.tooling.cuda.compile_check --worker IN OUT``, with
``NUMBA_ENABLE_CUDASIM=0``), and their findings gathered per variant."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from refconv.compile_specs import specialisations

from ._tools import DEFAULT_CC, parse_cc


def _run_ref(variant):
    fn = variant.run
    mod, qn = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if mod and qn and "<locals>" not in qn and "<lambda>" not in qn:
        return [mod, qn]
    return None


def _backend_ref(backend: str) -> str | None:
    """The entry point (``module:attr``) of backend ``backend`` in the group ``refconv.backends``."""
    from importlib.metadata import entry_points

    from refconv.registry import GROUP
    return next((ep.value for ep in entry_points(group=GROUP) if ep.name == backend), None)


def _layout(variant, desc: str) -> dict:
    """The output a worker runs ``variant`` into on problem ``desc``: shape, dtype, rows or not."""
    from refconv import Problem
    from refconv.checking import scratch_output
    out = scratch_output(Problem.parse(desc), variant.writes, variant.output)
    return {"shape": list(out.shape), "dtype": str(out.dtype), "rows": variant.output == "rows"}


def _task(variant, specs, findings: list) -> dict:
    """What a worker needs to trace ``variant`` (:func:`._worker.load_variant`): how to load it,
    and each specialisation as ``[params, descriptor, output layout]``; a specialisation whose
    output cannot be sized is a ``compile-check-failed`` finding in ``findings``."""
    rows = []
    for params, desc in specs:
        try:
            rows.append([params, desc, _layout(variant, desc)])
        except Exception as e:
            findings.append(_finding("compile-check-failed", f"cannot size the output of {desc}: "
                                     f"{type(e).__name__}: {e}", variant.id))
    return {"id": variant.id, "op": variant.op, "backend": variant.backend, "name": variant.name,
            "ref": _run_ref(variant), "backend_ref": _backend_ref(variant.backend), "specs": rows,
            "writes": variant.writes, "output": variant.output}


def preflight(variants, options=None) -> dict:
    """``{variant_id: [finding dicts]}``; an empty list means every kernel compiled."""
    options = dict(options or {})
    cc = parse_cc(options.get("cc") or os.environ.get("REFCONV_CC") or DEFAULT_CC)
    result = {v.id: [] for v in variants}
    mode = options.get("compile_params") or os.environ.get("REFCONV_COMPILE_PARAMS") or "cover"
    tasks = []
    for v in variants:
        try:
            specs = specialisations(v, mode)
        except Exception as e:
            result[v.id].append(_finding("compile-check-failed",
                                         f"could not list specialisations: {type(e).__name__}: {e}", v.id))
            continue
        if not specs:
            result[v.id].append(_finding("compile-check-failed",
                                         "no specialisation of this variant builds a valid tiny problem", v.id))
            continue
        tasks.append(_task(v, specs, result[v.id]))
    if not tasks:
        return result
    njobs = int(options.get("compile_jobs") or os.environ.get("REFCONV_COMPILE_JOBS") or min(4, os.cpu_count() or 1))
    njobs = max(1, min(njobs, len(tasks)))
    chunks = [tasks[i::njobs] for i in range(njobs)]
    timeout = float(options.get("compile_timeout") or 900)
    env = dict(os.environ)
    env["NUMBA_ENABLE_CUDASIM"] = "0"
    env.pop("REFCONV_CUDA", None)
    tmp = tempfile.mkdtemp(prefix="refconv-compile-")
    procs = []
    for i, chunk in enumerate(chunks):
        inp, outp = os.path.join(tmp, f"in{i}.json"), os.path.join(tmp, f"out{i}.json")
        with open(inp, "w") as f:
            json.dump({"cc": list(cc), "tasks": chunk, "ptxas": options.get("ptxas", True)}, f)
        log = open(os.path.join(tmp, f"log{i}.txt"), "w")
        p = subprocess.Popen([sys.executable, "-m", "refconv.tooling.cuda.compile_check",
                              "--worker", inp, outp], env=env, stdout=log, stderr=subprocess.STDOUT)
        procs.append((p, chunk, outp, log))
    whys = _wait_all([p for p, *_ in procs], timeout)
    for (p, chunk, outp, log), why in zip(procs, whys):
        log.close()
        got = None
        if os.path.exists(outp):
            try:
                with open(outp) as f:
                    got = json.load(f)
            except Exception:
                got = None
        if got is None:
            with open(log.name) as f:
                tail = f.read()[-2000:]
            why = why or f"exit status {p.returncode}"
            for t in chunk:
                result[t["id"]].append(_finding(
                    "compile-check-failed", f"the compile-check worker crashed ({why}); its output "
                    f"ends: {tail}", t["id"]))
            continue
        for vid, fs in got.items():
            result.setdefault(vid, []).extend(fs)
    shutil.rmtree(tmp, ignore_errors=True)
    for v in variants:  # never silent: a variant the check compiled nothing for says so
        if not result.get(v.id):
            result[v.id] = [_finding("compile-check-failed", "the compile check compiled no kernel of "
                                     "this variant and reported nothing", v.id)]
    return result


def _wait_all(procs, limit: float) -> list:
    """Wait for every worker process; a worker that has used more than ``limit`` seconds of CPU
    time (its own and its compilers'), or that could not run for ``limit`` seconds past the limit
    (:class:`refconv.procs.ExampleClock`: the rule of the check's own examples), is killed.
    Returns, per process, the reason it was killed or None.  Waiting for a CPU on a loaded
    machine is neither, so load cannot fail a compile check that would pass on a quiet one."""
    from refconv.procs import ExampleClock
    clocks = [ExampleClock(p.pid) for p in procs]
    whys = [None] * len(procs)
    while any(p.poll() is None for p in procs):
        for i, p in enumerate(procs):
            if p.poll() is None and (why := clocks[i].hang(limit)):
                p.kill()
                p.wait()
                whys[i] = why.replace("example", "compile-check worker")
        time.sleep(0.25)
    return whys


def _finding(cls, message, vid, **kw):
    return {"class": cls, "message": message, "variant": vid, **kw}
