"""Worker processes for ``refconv check``: variants are checked in parallel, one Hypothesis run
per variant, and a variant whose example runs past the per-example time limit is reported as an
``error`` (hang) while the run carries on with the others.

Workers are started with the ``spawn`` method (OpenCL and CUDA runtimes do not survive ``fork``);
each receives the backend options and configures its backends before checking.  A worker sends
``start``/``done`` events for every example; the parent kills a worker whose current example has
run longer than ``timeout`` seconds, records the hang with the example's one-line case, and
starts a fresh worker for the remaining variants.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from dataclasses import dataclass
from typing import Callable

from .runner import VariantResult


@dataclass
class Job:
    variant_id: str
    profile: str
    examples: int | None
    seed: int | None
    database: str | None
    failures_dir: str | None


def configure_backends(backend_options: dict) -> None:
    from .registry import backends
    from .variant import Backend
    for name, b in backends().items():
        if isinstance(b, Backend):
            b.configure({o.dest: backend_options.get(o.dest, o.default) for o in b.options})


def worker_env() -> dict:
    """The environment variables a worker inherits from the parent (backend and refconv settings)."""
    return {k: v for k, v in os.environ.items() if k.startswith(("REFCONV_", "NUMBA_", "OCL", "OCLGRIND", "POCL"))}


def _worker(conn, backend_options: dict, env: dict) -> None:
    os.environ.update(env)
    configure_backends(backend_options)
    from .profiles import get_profile
    from .registry import get
    from .runner import check_variant
    while True:
        job = conn.recv()
        if job is None:
            return
        try:
            v = get(job.variant_id)
            prof = get_profile(job.profile, job.examples)

            def on_example(event, result, case, _vid=job.variant_id):
                conn.send(("start", _vid, case) if event == "start" else
                          ("done", _vid, result.status, max(result.max_abs, 0.0)))

            res = check_variant(v, prof, seed=job.seed, db=job.database, failures_dir=job.failures_dir,
                                on_example=on_example)
        except Exception as e:  # a broken variant declaration must not kill the run
            res = VariantResult(job.variant_id, "error", reason=f"{type(e).__name__}: {e}")
        conn.send(("result", job.variant_id, res))


class _Slot:
    def __init__(self, ctx, backend_options, env):
        self.parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, backend_options, env), daemon=True)
        self.proc.start()
        child.close()
        self.job: Job | None = None
        self.case: str | None = None
        self.since = time.monotonic()
        self.examples = 0
        self.slowest = 0.0  # seconds of the slowest example that returned (scales a hang shrink's limit)

    def kill(self):
        try:
            self.proc.kill()
            self.proc.join(5)
        except Exception:
            pass


def run_jobs(jobs: list[Job], *, workers: int, timeout: float, backend_options: dict,
             on_event: Callable[[str, str, object], None] | None = None) -> dict[str, VariantResult]:
    """Run ``jobs`` on ``workers`` processes; returns ``{variant_id: VariantResult}``.
    ``on_event(kind, variant_id, payload)`` gets ``start``/``done``/``result`` events."""
    ctx = mp.get_context("spawn")
    env = worker_env()
    pending = list(jobs)
    results: dict[str, VariantResult] = {}
    slots: list[_Slot] = []
    emit = on_event or (lambda *a: None)

    def feed(slot):
        if pending:
            slot.job = pending.pop(0)
            slot.case, slot.since, slot.examples, slot.slowest = None, time.monotonic(), 0, 0.0
            slot.parent.send(slot.job)
        else:
            slot.job = None

    try:
        for _ in range(max(1, min(workers, len(jobs)))):
            s = _Slot(ctx, backend_options, env)
            slots.append(s)
            feed(s)
        while any(s.job for s in slots):
            for i, s in enumerate(slots):
                if s.job is None:
                    continue
                while s.parent.poll(0.02):
                    try:
                        msg = s.parent.recv()
                    except EOFError:
                        break
                    kind, vid = msg[0], msg[1]
                    if kind == "start":
                        s.case, s.since = msg[2], time.monotonic()
                    elif kind == "done":
                        s.examples += 1
                        s.slowest = max(s.slowest, time.monotonic() - s.since)
                        s.since = time.monotonic()
                    elif kind == "result":
                        results[vid] = msg[2]
                        emit("result", vid, msg[2])
                        feed(s)
                        break
                    emit(kind, vid, msg[2:])
                if s.job is None:
                    continue
                dead = not s.proc.is_alive() and not s.parent.poll()
                hung = time.monotonic() - s.since > timeout
                if dead or hung:
                    vid = s.job.variant_id
                    why = (f"hang: example ran longer than {timeout:g}s (killed)" if hung else
                           f"worker process died (exit code {s.proc.exitcode})")
                    r = VariantResult(vid, "error", examples=s.examples, reason=why,
                                      failure={"status": "error", "descriptor": (s.case or "").split(" @ ")[0],
                                               "case": s.case, "message": why,
                                               "slowest_example_s": round(s.slowest, 3)})
                    results[vid] = r
                    emit("result", vid, r)
                    s.kill()
                    slots[i] = _Slot(ctx, backend_options, env)
                    feed(slots[i])
    finally:
        for s in slots:
            try:
                if s.proc.is_alive():
                    s.parent.send(None)
                    s.proc.join(2)
            except Exception:
                pass
            s.kill()
    return results
