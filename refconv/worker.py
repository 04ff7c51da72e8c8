"""The one worker process of refconv: what a worker does (:func:`serve`) and how its parent
watches it (:class:`Worker`).  The check (:mod:`refconv.pool`), the hang shrink
(:mod:`refconv.hang_shrink`), the replay of a reproducer (:mod:`refconv.repro`) and the bench's
rows (:mod:`refconv.bench.worker`) each give it only their own ``setup`` (what the worker
imports and keeps) and read its messages.

* **Prologue** (:func:`serve`).  A spawned worker leaves the terminal's process group and dies
  with its parent (:func:`refconv.procs.start_own_group`), takes the parent's ``REFCONV_*`` and
  declared environment variables (:func:`refconv.procs.worker_env`), configures the backends with
  the parent's option values, sets the float verdict, runs ``setup`` (imports, a warm-up: outside
  every time limit) and says ``("ready",)``.  Then it answers one task at a time until it is sent
  ``None``.  A task that raises ``KeyboardInterrupt`` or ``SystemExit`` (a variant or a kernel
  did) ends the worker as a crash, after telling the parent so (:func:`refconv.procs.exit_like`).
* **Poll loop** (:meth:`Worker.next`).  Between messages the current phase's limit applies: in an
  example (:meth:`Worker.example`) the hang rule of the README, on the worker's CPU time with the
  blocked-time backstop (:class:`refconv.procs.ExampleClock`); outside one (start-up, between
  tasks: :meth:`Worker.idle`) wall time.  A worker whose pipe closes, or whose process is gone,
  died: ``crash: worker died (signal 11 SIGSEGV)``, with what it said before dying.
* **Kill** (:meth:`Worker.kill`).  A worker that hangs or dies is killed with its whole process
  group (:func:`refconv.procs.kill_worker`), so what it started dies with it; :meth:`Worker.close`
  asks a healthy one to stop first.
"""
from __future__ import annotations

import multiprocessing as mp
import os
from dataclasses import dataclass
from typing import Callable

from .procs import ExampleClock, crash_reason, exit_like, kill_worker, start_own_group, start_worker, worker_env


def serve(conn, env: dict, backend_options: dict, tolerance: str | None, setup: Callable, args: tuple) -> None:
    """The body of every worker process (the module docstring's prologue, then its task loop):
    ``setup(send, *args)`` returns the function that answers one task with one message."""
    start_own_group()
    os.environ.update(env)
    from .session import configure_backends
    from .tolerance import set_mode
    configure_backends(backend_options)
    set_mode(tolerance)
    answer = setup(conn.send, *args)
    conn.send(("ready",))
    while True:
        task = conn.recv()
        if task is None:
            return
        try:
            reply = answer(task)
        except (KeyboardInterrupt, SystemExit) as e:  # raised by the variant or kernel: a crash of its worker
            exit_like(e, conn)
        conn.send(reply)


def warm_variant(variant_id: str, descriptor: str):
    """In a worker's ``setup``: the variant ``variant_id``, after computing the spec's result for
    ``descriptor`` once (its imports and code paths warm, outside any limit; an error there is
    left for the task itself to meet and report)."""
    from .checking import acceptance_for
    from .problem import Problem
    from .registry import get
    v = get(variant_id)
    try:
        acceptance_for(Problem.parse(descriptor))
    except Exception:  # noqa: BLE001 - only a warm-up
        pass
    return v


@dataclass(frozen=True)
class Ended:
    """A worker that :meth:`Worker.next` gave up on (it is killed, with its process group):
    ``kind`` ``"hang"`` (past its limit) or ``"crash"`` (it died); ``reason``: the one-line
    reason; ``exitcode``: a dead worker's exit status (negative: the signal)."""

    kind: str
    reason: str
    exitcode: int | None = None


def _example_hang(over: str) -> str:
    return f"hang: example ran longer than {over} (killed)"


class Worker:
    """The parent's side of one worker process (the module docstring): started at once, with
    ``setup(send, *args)`` run in it; ``start_limit`` seconds of wall time to say ``ready``, or
    the hang ``start_says``."""

    def __init__(self, setup: Callable, *args, backend_options: dict, tolerance: str | None = None,
                 env: dict | None = None, start_limit: float, start_says: str):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=serve, daemon=True, args=(
            child, worker_env() if env is None else env, backend_options, tolerance, setup, args))
        start_worker(self.proc)
        child.close()
        self.note: str | None = None   # what the worker said before dying (exit_like)
        self.clock = ExampleClock(self.proc.pid)
        self._killed = False
        self.idle(start_limit, start_says)

    def example(self, limit: float, says: Callable[[str], str] = _example_hang) -> None:
        """An example starts now: it is a hang by the CPU-time rule under ``limit`` seconds;
        ``says(over)`` words the hang from the clock's account (``"2s of CPU time"``)."""
        self.clock.start()
        self.limit, self.says, self.timed = limit, says, True

    def idle(self, limit: float, says: str) -> None:
        """Outside an example from now on: ``limit`` seconds of wall time until the next message,
        else the hang ``says``."""
        self.clock.start()
        self.limit, self.says, self.timed = limit, (lambda over: says), False

    def send(self, task) -> None:
        """Send ``task`` (``None``: stop); a worker already dead is found by :meth:`next`."""
        try:
            self.conn.send(task)
        except OSError:
            pass

    def next(self, wait: float = 0.05):
        """The worker's next message, waiting up to ``wait`` seconds; ``None`` when none came and the
        worker is within its limit; an :class:`Ended` when it died or ran past the limit."""
        try:
            while self.conn.poll(wait):
                msg = self.conn.recv()
                if msg[0] != "crash":
                    return msg
                self.note = msg[1]      # exit_like: the worker is exiting, its pipe closes next
            alive = self.proc.is_alive() or self.conn.poll()
        except (EOFError, OSError):
            alive = False
        if not alive:
            self.proc.join(5)  # the pipe closes as the process exits: collect its exit status
            self.kill()
            return Ended("crash", crash_reason(self.proc.exitcode, self.note), self.proc.exitcode)
        over = self.clock.over(self.limit) if self.timed else (
            "" if self.clock.wall() > self.limit else None)
        if over is None:
            return None
        self.kill()
        return Ended("hang", self.says(over))

    def wait(self):
        """The next message, or an :class:`Ended`: :meth:`next` until one of them comes."""
        while True:
            got = self.next()
            if got is not None:
                return got

    def kill(self) -> None:
        """SIGKILL the worker's process group (the worker and whatever it started)."""
        if not self._killed:
            self._killed = True
            kill_worker(self.proc)

    def close(self) -> None:
        """Ask a live worker to stop, give it 2 s, then :meth:`kill`."""
        try:
            if not self._killed and self.proc.is_alive():
                self.conn.send(None)
                self.proc.join(2)
        except Exception:  # noqa: BLE001 - already gone
            pass
        self.kill()
