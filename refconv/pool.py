"""Worker processes for ``refconv check``: variants are checked in parallel, one Hypothesis run
per variant, and a variant whose example runs past the per-example time limit is reported as an
``error`` (hang) while the run carries on with the others.

Workers are started with the ``spawn`` method (GPU runtimes do not survive ``fork``);
each receives the backend options and configures its backends before checking (the one worker
process of refconv, :mod:`refconv.worker`, whose poll loop applies the rules below).  A worker sends
``start``/``done`` events for every example; the parent kills a worker whose current example has
run longer than ``timeout`` seconds, records the hang with the example's one-line case, and
starts a fresh worker for the remaining variants.

Rules the parent applies (see :func:`run_jobs`):

* **Time limit.**  Only an example counts against ``timeout``: the clock starts at the worker's
  ``start`` event and stops at ``done``.  An example is a hang when it has used more than
  ``timeout`` seconds of the worker's CPU time (and of wall time), or, blocked without using CPU
  (a sleep, a lock, a device that never answers), ``timeout`` of wall time past the limit
  (``WALL_BACKSTOP`` = 1) (:class:`refconv.procs.ExampleClock`): a loaded machine slows an example's wall time, not
  its CPU time, so it does not turn a slow example into a hang.  Worker start-up (spawning Python, importing the backends)
  and Hypothesis's own work between examples get ``max(timeout, IDLE_LIMIT)``, so a loaded machine
  does not turn a slow start into a hang.
* **Crash.**  A worker that dies (its pipe reaches EOF, or the process is gone) while a variant is
  being checked is reported at once as ``crash: worker died (signal 11 SIGSEGV)`` or
  ``crash: worker died (exit 3)``, with the case that was running.  A variant that raises
  ``KeyboardInterrupt`` or ``SystemExit`` ends its worker the same way
  (:func:`refconv.procs.exit_like`).
* **Process group.**  Every worker starts its own session (:func:`refconv.procs.start_own_group`);
  killing a worker kills its whole process group (:func:`refconv.procs.kill_worker`), so processes
  a variant started die with it.  On Linux a worker also dies with the parent (``PR_SET_PDEATHSIG``), so a parent
  killed by SIGKILL leaves no worker behind.
* **Interrupt.**  If the parent is interrupted (Ctrl-C, or SIGTERM turned into
  :class:`refconv.procs.Terminated` by the front end), every worker is killed, with its process
  group, before the exception propagates.
"""
from __future__ import annotations

import multiprocessing as mp
import time
from dataclasses import dataclass
from typing import Callable

from .case import Case
from .procs import IDLE_LIMIT, kill_worker, worker_env
from .runner import VariantResult
from .session import configure_backends  # noqa: F401  (re-exported: refconv.pool.configure_backends)
from .worker import Ended, Worker


@dataclass
class Job:
    """One variant to check in a worker: the profile and its overrides, the seed, the example
    database, where reproducers go, and the float verdict (``tolerance``: one of
    :data:`refconv.tolerance.MODES`, resolved once by the run; ``None``: the worker's default)."""

    variant_id: str
    profile: str
    examples: int | None
    seed: int | None
    database: str | None
    failures_dir: str | None
    tolerance: str | None = None


def _checker(send, backend_options: dict):
    """The worker's ``setup`` (:mod:`refconv.worker`): a :class:`Job` is answered with
    ``("result", variant_id, VariantResult)``, after ``plan``/``start``/``done`` events per example."""
    from .profiles import get_profile
    from .registry import get
    from .runner import check_variant
    from .tolerance import set_mode

    def check(job: Job):
        try:
            v = get(job.variant_id)
            prof = get_profile(job.profile, job.examples)
            set_mode(job.tolerance)

            def on_example(event, result, case, _vid=job.variant_id):
                send(("start", _vid, case) if event == "start" else ("plan", _vid, case) if event == "plan"
                     else ("done", _vid, result.status, max(result.max_abs, 0.0)))

            res = check_variant(v, prof, seed=job.seed, db=job.database, failures_dir=job.failures_dir,
                                on_example=on_example, backend_options=backend_options)
        except Exception as e:  # a broken variant declaration must not kill the run
            res = VariantResult(job.variant_id, "error", reason=f"{type(e).__name__}: {e}")
        return ("result", job.variant_id, res)
    return check


class _Slot:
    """One worker and the job it checks: the running case, the examples done, the slowest one."""

    def __init__(self, pool: "_Pool"):
        self.worker = Worker(_checker, pool.backend_options, backend_options=pool.backend_options, env=pool.env,
                             start_limit=pool.idle, start_says=pool.idle_says)
        self.job: Job | None = None
        self.case: str | None = None
        self.job_started = time.monotonic()
        self.examples = 0
        self.slowest = 0.0  # seconds of the slowest example that returned (scales a hang shrink's limit)


def run_jobs(jobs: list[Job], *, workers: int, timeout: float, backend_options: dict,
             on_event: Callable[[str, str, object], None] | None = None) -> dict[str, VariantResult]:
    """Run ``jobs`` on ``workers`` processes; returns ``{variant_id: VariantResult}``.
    ``on_event(kind, variant_id, payload)`` gets ``start``/``done``/``result`` events."""
    if not jobs:
        return {}
    pool = _Pool(jobs, timeout, backend_options, on_event or (lambda *a: None))
    try:
        for _ in range(max(1, min(workers, len(jobs)))):
            pool.add_slot()
        while any(s.job for s in pool.slots):
            for i, s in enumerate(pool.slots):
                if s.job is not None:
                    pool.step(i, s)
    except BaseException:  # Ctrl-C, SIGTERM (KeyboardInterrupt) or an error of refconv itself: no worker survives
        for s in pool.slots:
            s.worker.kill()
        for p in mp.active_children():  # one interrupted while it was being started, not yet in a slot
            kill_worker(p)
        raise
    finally:
        pool.close()
    return pool.results


class _Pool:
    """The parent's side of :func:`run_jobs`: the slots (one worker each), the jobs not yet
    given out, the results so far, and the rules of the module docstring."""

    def __init__(self, jobs: list[Job], timeout: float, backend_options: dict, emit):
        self.env = worker_env()
        self.pending = list(jobs)
        self.timeout, self.backend_options, self.emit = timeout, backend_options, emit
        self.idle = max(timeout, IDLE_LIMIT)
        self.idle_says = f"hang: the worker did nothing for {self.idle:g}s outside an example (killed)"
        self.results: dict[str, VariantResult] = {}
        self.slots: list[_Slot] = []

    def add_slot(self) -> None:
        s = _Slot(self)
        self.slots.append(s)
        self.feed(s)

    def feed(self, slot: _Slot) -> None:
        """Give ``slot`` the next pending job (``slot.job = None`` when there is none)."""
        if not self.pending:
            slot.job = None
            return
        slot.job = self.pending.pop(0)
        slot.case, slot.examples, slot.slowest = None, 0, 0.0
        slot.job_started = time.monotonic()
        slot.worker.idle(self.idle, self.idle_says)
        slot.worker.send(slot.job)

    def give_up(self, i: int, s: _Slot, ended: Ended) -> None:
        """Record ``s``'s job as an ``error`` (the hang or crash, with the running case) and put a
        fresh worker with the next job in its place (the worker is already killed)."""
        vid = s.job.variant_id
        extra = {"exitcode": ended.exitcode} if ended.kind == "crash" else {}
        r = VariantResult(vid, "error", examples=s.examples, reason=ended.reason,
                          seconds=time.monotonic() - s.job_started,
                          failure={"status": "error", "descriptor": Case.descriptor_of(s.case),
                                   "case": s.case, "message": ended.reason,
                                   "slowest_example_s": round(s.slowest, 3), **extra})
        self.results[vid] = r
        self.emit("result", vid, r)
        self.slots[i] = _Slot(self)
        self.feed(self.slots[i])

    def step(self, i: int, s: _Slot) -> None:
        """Handle what ``s``'s worker has sent (``ready``, ``start``/``done`` of an example, the
        ``result`` of its job), and give up on its job when the worker died or hangs."""
        while s.job is not None:
            msg = s.worker.next(0.02)
            if msg is None:
                return
            if isinstance(msg, Ended):
                self.give_up(i, s, msg)
                return
            kind = msg[0]
            if kind == "ready":
                s.worker.idle(self.idle, self.idle_says)
                continue
            vid = msg[1]
            if kind == "start":   # the per-example limit applies until its "done"
                s.case = msg[2]
                s.worker.example(self.timeout)
            elif kind == "done":
                s.examples += 1
                s.slowest = max(s.slowest, s.worker.clock.wall())
                s.worker.idle(self.idle, self.idle_says)
            elif kind == "result":
                self.results[vid] = msg[2]
                self.emit("result", vid, msg[2])
                self.feed(s)
                return
            self.emit(kind, vid, msg[2:])

    def close(self) -> None:
        """Tell every live worker to stop, wait briefly, then kill each with its process group."""
        for s in self.slots:
            s.worker.close()
