"""Parent side of the compile check: the specialisations per variant, a pool of worker processes
(``python -m refconv.tooling.cuda.compile_check --worker JOB``, ``NUMBA_ENABLE_CUDASIM=0``) that
trace a share of them each, then every distinct kernel compiled once -- by whichever idle worker
traced it, unless the disk cache (:mod:`._cache`) holds its result -- and the findings judged
per variant (:mod:`._judge`).  Progress goes to stderr: the kernels it will compile, up front,
then a line every :data:`PROGRESS_KERNELS` kernels or :data:`PROGRESS_SECONDS` seconds."""
from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from refconv.compile_specs import MODES, specialisations

from ._cache import Cache, location
from ._findings import finding
from ._judge import judge
from ._tools import DEFAULT_CC, parse_cc

PROGRESS_KERNELS = 25
PROGRESS_SECONDS = 10.0
ENV_MODE = "REFCONV_COMPILE_PARAMS"


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
    from refconv.compile_specs import output_layout
    shape, dtype = output_layout(Problem.parse(desc), variant.writes)
    return {"shape": list(shape), "dtype": str(np.dtype(dtype)), "rows": variant.output == "rows"}


def _task(variant, specs, findings: list) -> dict:
    """What a worker needs to trace ``variant`` (:func:`._worker.load_variant`): how to load it,
    and each specialisation as ``[params, descriptor, output layout]``; a specialisation whose
    output cannot be sized is a ``compile-check-failed`` finding in ``findings``."""
    rows = []
    for params, desc in specs:
        try:
            rows.append([params, desc, _layout(variant, desc)])
        except Exception as e:
            findings.append(finding("compile-check-failed", f"cannot size the output of {desc}: "
                                    f"{type(e).__name__}: {e}", variant.id))
    return {"id": variant.id, "op": variant.op, "backend": variant.backend, "name": variant.name,
            "ref": _run_ref(variant), "backend_ref": _backend_ref(variant.backend), "specs": rows,
            "writes": variant.writes, "output": variant.output}


def parameter_mode(options) -> str:
    """The sweep (``options["compile_params"]``, else ``REFCONV_COMPILE_PARAMS``, else ``cover``);
    a value not in :data:`refconv.compile_specs.MODES` is a ``UsageError`` naming it."""
    from refconv.errors import UsageError
    given = (options or {}).get("compile_params")
    where = "compile_params" if given else ENV_MODE
    mode = given or os.environ.get(ENV_MODE) or "cover"
    if mode not in MODES:
        raise UsageError(f"{where}={mode!r} not accepted; accepted: {', '.join(MODES)}")
    return mode


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _shares(tasks: list, n: int) -> list:
    """``tasks`` dealt to ``n`` workers one specialisation at a time (a variant's many
    specialisations spread over every worker)."""
    units = [(t, row) for t in tasks for row in t["specs"]]
    shares = []
    for i in range(n):
        mine: dict = {}
        for t, row in units[i::n]:
            mine.setdefault(t["id"], {**t, "specs": []})["specs"].append(row)
        shares.append(list(mine.values()))
    return shares


class _Progress:
    """Lines on stderr: the plan once, then progress (:meth:`tick`)."""

    def __init__(self, quiet: bool):
        self.quiet, self.t0, self.last_t, self.last_n = quiet, time.monotonic(), time.monotonic(), 0

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"refconv compile check: {text}", file=sys.stderr, flush=True)

    def tick(self, done: int, total: int) -> None:
        """After a kernel (or a wait): a line when :data:`PROGRESS_KERNELS` more are done, or
        :data:`PROGRESS_SECONDS` have passed and more are done, or three times that has passed."""
        now = time.monotonic()
        quiet_for = now - self.last_t
        if (done == total and done > self.last_n) or done - self.last_n >= PROGRESS_KERNELS or (
                quiet_for >= PROGRESS_SECONDS and done > self.last_n) or quiet_for >= 3 * PROGRESS_SECONDS:
            self.say(f"{done}/{total} kernels compiled, {now - self.t0:.0f} s")
            self.last_t, self.last_n = now, done


class _Worker:
    def __init__(self, i, share, cc, assemble_too, env, tmp):
        self.i, self.share = i, share
        self.job = os.path.join(tmp, f"job{i}.json")
        with open(self.job, "w") as f:
            json.dump({"cc": list(cc), "tasks": share, "ptxas": assemble_too}, f)
        self.log = open(os.path.join(tmp, f"log{i}.txt"), "w")
        self.p = subprocess.Popen([sys.executable, "-m", "refconv.tooling.cuda.compile_check", "--worker", self.job],
                                  env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                  text=True, bufsize=1)
        from refconv.procs import ExampleClock
        self.clock = ExampleClock(self.p.pid)
        self.traced, self.holds, self.busy, self.dead = None, [], None, None

    def send(self, msg) -> None:
        try:
            self.p.stdin.write(json.dumps(msg) + "\n")
            self.p.stdin.flush()
        except OSError:
            pass

    def tail(self) -> str:
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()[-2000:]


def preflight(variants, options=None) -> dict:
    """``{variant_id: [finding dicts]}``; an empty list means every kernel compiled.  Options:
    ``compile_params`` (:func:`parameter_mode`), ``cc``, ``compile_jobs`` (workers, default: one
    per CPU up to 4; ``REFCONV_COMPILE_JOBS``), ``compile_timeout`` (CPU seconds a worker may spend
    tracing its share, and then compiling one kernel; default 900), ``ptxas`` (assemble too, default True), ``compile_quiet`` (no progress lines)."""
    options = dict(options or {})
    mode = parameter_mode(options)
    cc = parse_cc(options.get("cc") or os.environ.get("REFCONV_CC") or DEFAULT_CC)
    result = {v.id: [] for v in variants}
    tasks = []
    for v in variants:
        try:
            specs = specialisations(v, mode)
        except Exception as e:
            result[v.id].append(finding("compile-check-failed",
                                        f"could not list specialisations: {type(e).__name__}: {e}", v.id))
            continue
        if not specs:
            result[v.id].append(finding("compile-check-failed",
                                        "no specialisation of this variant builds a valid tiny problem", v.id))
            continue
        tasks.append(_task(v, specs, result[v.id]))
    if tasks:
        records, results = _sweep(tasks, cc, mode, options, result, compile_kernels=True)
        judge(records, results, cc, result)
    for v in variants:  # never silent: a variant the check compiled nothing for says so
        if not result.get(v.id):
            result[v.id] = [finding("compile-check-failed", "the compile check compiled no kernel of "
                                    "this variant and reported nothing", v.id)]
    return result


def trace(variants, options=None) -> tuple:
    """``(records, findings)``: every launch of every specialisation of ``variants`` as the
    workers record it (kernel, launch configuration, ``host_smem``: the static shared memory
    computed on the host, ``max_registers``), with nothing compiled; ``findings``: tracing's own
    (``compile-check-failed``), by variant id.  ``options`` as :func:`preflight`'s (``compile_params``
    defaults to ``all`` here: every combination)."""
    options = {"compile_params": "all", "compile_quiet": True, **(options or {})}
    mode = parameter_mode(options)
    cc = parse_cc(options.get("cc") or os.environ.get("REFCONV_CC") or DEFAULT_CC)
    findings: dict = {}
    tasks = [_task(v, specialisations(v, mode), findings.setdefault(v.id, [])) for v in variants]
    records, _ = _sweep([t for t in tasks if t["specs"]], cc, mode, options, findings, compile_kernels=False)
    return records, findings


def _sweep(tasks, cc, mode, options, result, compile_kernels: bool) -> tuple:
    """Trace ``tasks`` on the workers and (``compile_kernels``) compile their distinct kernels:
    ``(records, {key: compile result})``; tracing's findings go into ``result``."""
    nspecs = sum(len(t["specs"]) for t in tasks)
    njobs = int(options.get("compile_jobs") or os.environ.get("REFCONV_COMPILE_JOBS") or min(4, _cpus()))
    njobs = max(1, min(njobs, nspecs))
    timeout = float(options.get("compile_timeout") or 900)
    assemble_too = options.get("ptxas", True)
    progress = _Progress(bool(options.get("compile_quiet")))
    cache = Cache(location())
    env = dict(os.environ)
    env["NUMBA_ENABLE_CUDASIM"] = "0"
    env.pop("REFCONV_CUDA", None)
    tmp = tempfile.mkdtemp(prefix="refconv-compile-")
    progress.say(f"tracing {nspecs} specialisations of {len(tasks)} variants ({mode}) on {njobs} workers")
    workers = [_Worker(i, share, cc, assemble_too, env, tmp) for i, share in enumerate(_shares(tasks, njobs))]
    try:
        results = _run(workers, cache if compile_kernels else None, timeout, progress, result)
    finally:
        for w in workers:
            if w.p.poll() is None:
                w.p.kill()
                w.p.wait()
            w.log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return [r for w in workers if w.traced for r in w.traced["records"]], results


def _assign(w, results: dict, assigned: set) -> None:
    """Give idle worker ``w`` the next kernel it holds that nobody compiled or took yet (the time
    limit restarts: it is per kernel); with none left, tell it to exit."""
    while w.holds:
        key = w.holds.pop()
        if key not in results and key not in assigned:
            assigned.add(key)
            w.busy = key
            w.clock.start()
            w.send({"compile": key})
            return
    w.busy = None
    w.send({"exit": True})


def _plan(live, cache, results: dict, assigned: set, progress) -> list:
    """Every worker has traced: the distinct kernels (cache hits go straight into ``results``),
    each dealt to the holder with the fewest so far, and every worker started on its first;
    returns the keys to compile."""
    keys: dict = {}
    for w in live:
        for r in w.traced["records"]:
            keys.setdefault(r["key"], set()).add(w.i)
    todo = []
    for key in keys:
        hit = None if key.startswith("unique-") else cache.get(key)
        if hit is not None:
            results[key] = {**hit, "cached": True}
        else:
            todo.append(key)
    nrec = sum(len(w.traced["records"]) for w in live)
    where = f"cache {cache.root}" if cache.root else f"no cache: {cache.why_off}"
    progress.say(f"{nrec} launches of {len(keys)} distinct kernels: {len(keys) - len(todo)} from the {where}, "
                 f"{len(todo)} to compile on {len(live)} workers")
    mine = {w.i: [] for w in live}
    for key in todo:                      # each key to the holder with the fewest so far
        mine[min(keys[key], key=lambda i: len(mine[i]))].append(key)
    for w in live:   # a stack: its own share first, then the others' it traced (taken when idle)
        w.holds = [k for k in todo if w.i in keys[k] and k not in mine[w.i]] + list(reversed(mine[w.i]))
        _assign(w, results, assigned)
    return todo


def _run(workers, cache, timeout, progress, result) -> dict:
    """Drive the workers (module docstring): returns ``{key: compile result}``; ``cache`` None:
    trace only (every worker ends once it has traced)."""
    sel = selectors.DefaultSelector()
    for w in workers:
        sel.register(w.p.stdout, selectors.EVENT_READ, w)
    results: dict = {}
    assigned: set = set()
    todo: list = []
    started = False
    while True:
        live = [w for w in workers if w.dead is None]
        if not live:
            break
        if not started and all(w.traced is not None for w in live):
            started = True
            if cache is None:
                for w in live:
                    w.send({"exit": True})
                continue
            todo = _plan(live, cache, results, assigned, progress)
        if started and todo:
            progress.tick(sum(1 for k in todo if k in results), len(todo))
        for sk, _ in sel.select(timeout=0.25):
            w = sk.data
            line = w.p.stdout.readline()
            if not line:
                _lost(w, f"exit status {w.p.wait()}", results, result, sel, progress)
                continue
            msg = json.loads(line)
            if "traced" in msg:
                w.traced = msg["traced"]
                for vid, fs in w.traced["findings"].items():
                    result.setdefault(vid, []).extend(fs)
            elif "result" in msg:
                key = msg.pop("result")
                results[key] = msg
                if not key.startswith("unique-"):
                    cache.put(key, msg)
                w.busy = None
                progress.tick(sum(1 for k in todo if k in results), len(todo))
                _assign(w, results, assigned)
            elif "exited" in msg:
                w.dead = "done"
                sel.unregister(w.p.stdout)
        for w in workers:
            if w.dead is None and w.p.poll() is None and (why := w.clock.hang(timeout)):
                w.p.kill()
                w.p.wait()
                _lost(w, why.replace("example", "compile-check worker"), results, result, sel, progress)
    lost = "; ".join(f"worker {w.i}: {w.dead}" for w in workers if w.dead not in (None, "done"))
    for key in todo:            # traced only by a worker that was lost before compiling it
        results.setdefault(key, {"failed": f"not compiled: the worker that traced it was lost ({lost})"})
    return results


def _lost(w, why, results, result, sel, progress) -> None:
    """Worker ``w`` died or was killed: the kernel it was compiling failed (``why``); a variant
    it had not finished tracing gets a ``compile-check-failed``."""
    w.dead = why
    try:
        sel.unregister(w.p.stdout)
    except (KeyError, ValueError):
        pass
    tail = w.tail()
    if w.traced is None:
        for t in w.share:
            result.setdefault(t["id"], []).append(finding(
                "compile-check-failed", f"the compile-check worker crashed ({why}); its output ends: {tail}", t["id"]))
    elif w.busy is not None:
        results[w.busy] = {"failed": f"the compile-check worker compiling it was lost ({why}); its output ends: "
                                     f"{tail[-600:]}"}
    progress.say(f"worker {w.i} lost: {why}")


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
