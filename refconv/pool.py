"""Worker processes for ``refconv check``: variants are checked in parallel, one Hypothesis run
per variant, and a variant whose example runs past the per-example time limit is reported as an
``error`` (hang) while the run carries on with the others.

Workers are started with the ``spawn`` method (GPU runtimes do not survive ``fork``);
each receives the backend options and configures its backends before checking.  A worker sends
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
  ``KeyboardInterrupt`` or ``SystemExit`` ends its worker the same way (:func:`exit_like`).
* **Process group.**  Every worker starts its own session (:func:`start_own_group`); killing a
  worker kills its whole process group (:func:`kill_worker`), so processes a variant started die
  with it.  On Linux a worker also dies with the parent (``PR_SET_PDEATHSIG``), so a parent
  killed by SIGKILL leaves no worker behind.
* **Interrupt.**  If the parent is interrupted (Ctrl-C, or SIGTERM turned into
  :class:`refconv.procs.Terminated` by the front end), every worker is killed, with its process
  group, before the exception propagates.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from dataclasses import dataclass
from typing import Callable

from .case import Case
from .procs import (IDLE_LIMIT, ExampleClock, crash_reason, exit_like, kill_worker,  # noqa: F401
                    start_own_group, start_worker, worker_env)
from .runner import VariantResult
from .session import configure_backends  # noqa: F401  (re-exported: refconv.pool.configure_backends)


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


def _worker(conn, backend_options: dict, env: dict) -> None:
    start_own_group()
    os.environ.update(env)
    configure_backends(backend_options)
    from .profiles import get_profile
    from .registry import get
    from .runner import check_variant
    from .tolerance import set_mode
    conn.send(("ready",))
    while True:
        job = conn.recv()
        if job is None:
            return
        try:
            v = get(job.variant_id)
            prof = get_profile(job.profile, job.examples)
            set_mode(job.tolerance)

            def on_example(event, result, case, _vid=job.variant_id):
                conn.send(("start", _vid, case) if event == "start" else ("plan", _vid, case) if event == "plan"
                          else ("done", _vid, result.status, max(result.max_abs, 0.0)))

            res = check_variant(v, prof, seed=job.seed, db=job.database, failures_dir=job.failures_dir,
                                on_example=on_example, backend_options=backend_options)
        except Exception as e:  # a broken variant declaration must not kill the run
            res = VariantResult(job.variant_id, "error", reason=f"{type(e).__name__}: {e}")
        except (KeyboardInterrupt, SystemExit) as e:  # raised by the variant: a crash of its worker
            exit_like(e, conn)
        conn.send(("result", job.variant_id, res))


class _Slot:
    def __init__(self, ctx, backend_options, env):
        self.parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, backend_options, env), daemon=True)
        start_worker(self.proc)
        child.close()
        self.job: Job | None = None
        self.case: str | None = None
        self.since = time.monotonic()
        self.job_started = self.since
        self.running = False       # an example is running (the per-example limit applies)
        self.eof = False           # the worker's end of the pipe is closed: it died
        self.note: str | None = None  # what the worker said before dying
        self.examples = 0
        self.slowest = 0.0  # seconds of the slowest example that returned (scales a hang shrink's limit)
        self.clock = ExampleClock(self.proc.pid)  # the running example's time, as the limit judges it

    def kill(self):
        kill_worker(self.proc)


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
                    pool.drain(s)
                if s.job is not None:
                    pool.watch(i, s)
    except BaseException:  # Ctrl-C, SIGTERM (KeyboardInterrupt) or an error of refconv itself: no worker survives
        for s in pool.slots:
            s.kill()
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
        self.ctx = mp.get_context("spawn")
        self.env = worker_env()
        self.pending = list(jobs)
        self.timeout, self.backend_options, self.emit = timeout, backend_options, emit
        self.results: dict[str, VariantResult] = {}
        self.slots: list[_Slot] = []

    def _new_slot(self) -> _Slot:
        return _Slot(self.ctx, self.backend_options, self.env)

    def add_slot(self) -> None:
        s = self._new_slot()
        self.slots.append(s)
        self.feed(s)

    def feed(self, slot: _Slot) -> None:
        """Give ``slot`` the next pending job (``slot.job = None`` when there is none)."""
        if not self.pending:
            slot.job = None
            return
        slot.job = self.pending.pop(0)
        slot.case, slot.since, slot.examples, slot.slowest = None, time.monotonic(), 0, 0.0
        slot.job_started, slot.running = slot.since, False
        slot.parent.send(slot.job)

    def give_up(self, i: int, s: _Slot, why: str, **extra) -> None:
        """Record ``s``'s job as an ``error`` (``why``: the hang or crash, with the running case),
        kill its worker and put a fresh one with the next job in its place."""
        vid = s.job.variant_id
        r = VariantResult(vid, "error", examples=s.examples, reason=why,
                          seconds=time.monotonic() - s.job_started,
                          failure={"status": "error", "descriptor": Case.descriptor_of(s.case),
                                   "case": s.case, "message": why,
                                   "slowest_example_s": round(s.slowest, 3), **extra})
        self.results[vid] = r
        self.emit("result", vid, r)
        s.kill()
        self.slots[i] = self._new_slot()
        self.feed(self.slots[i])

    def drain(self, s: _Slot) -> None:
        """Handle the messages ``s``'s worker has sent (``ready``, ``crash`` notes, ``start``/``done``
        of an example, the ``result`` of its job); a closed pipe sets ``s.eof``."""
        while not s.eof and s.parent.poll(0.02):
            try:
                msg = s.parent.recv()
            except (EOFError, OSError):
                s.eof = True
                return
            kind = msg[0]
            if kind == "ready":
                s.since = time.monotonic()
                continue
            if kind == "crash":
                s.note = msg[1]
                continue
            vid = msg[1]
            if kind == "start":
                s.case, s.since, s.running = msg[2], time.monotonic(), True
                s.clock.start()
            elif kind == "done":
                s.examples += 1
                s.slowest = max(s.slowest, time.monotonic() - s.since)
                s.since, s.running = time.monotonic(), False
            elif kind == "result":
                self.results[vid] = msg[2]
                self.emit("result", vid, msg[2])
                self.feed(s)
                return
            self.emit(kind, vid, msg[2:])

    def watch(self, i: int, s: _Slot) -> None:
        """Give up on ``s``'s job when its worker died, its example is a hang, or it did nothing
        outside an example for ``max(timeout, IDLE_LIMIT)``."""
        if s.eof or (not s.proc.is_alive() and not s.parent.poll()):
            s.proc.join(5)  # the pipe closes as the process exits: collect its exit status
            self.give_up(i, s, crash_reason(s.proc.exitcode, s.note), exitcode=s.proc.exitcode)
            return
        idle = max(self.timeout, IDLE_LIMIT)
        if s.running:
            why = s.clock.hang(self.timeout)
            if why:
                self.give_up(i, s, why)
        elif time.monotonic() - s.since > idle:
            self.give_up(i, s, f"hang: the worker did nothing for {idle:g}s outside an example (killed)")

    def close(self) -> None:
        """Tell every live worker to stop, wait briefly, then kill each with its process group."""
        for s in self.slots:
            try:
                if s.proc.is_alive():
                    s.parent.send(None)
                    s.proc.join(2)
            except Exception:
                pass
            s.kill()
