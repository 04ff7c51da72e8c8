"""Worker processes of refconv: starting one out of the terminal's reach (and dying with its
parent), killing it with every process it started, describing how it ended, timing its example
on CPU time (:class:`ExampleClock`), and SIGTERM turned into an interrupt
(:func:`sigterm_as_interrupt`).  Used by the one worker process of refconv
(:mod:`refconv.worker`: the check, the hang shrink, the replay of a reproducer and the bench's
rows); the rules are in :mod:`refconv.pool`'s docstring.
"""
from __future__ import annotations

import contextlib
import os
import signal


def worker_env() -> dict:
    """The environment variables a worker inherits from the parent: those whose names start with
    one of :func:`refconv.registry.env_prefixes` (``REFCONV_`` and what each backend declares)."""
    from .registry import env_prefixes
    prefixes = env_prefixes()
    return {k: v for k, v in os.environ.items() if k.startswith(prefixes)}


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process gets SIGTERM (``kill``, ``docker stop``, a CI
    cancel) inside :func:`sigterm_as_interrupt`.  A ``KeyboardInterrupt``, so that every clean-up
    a Ctrl-C runs (the pool kills its workers, the reports of what finished are written) runs for
    it too; the front end tells the two apart (exit 143, not 130)."""


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Within this block SIGTERM raises :class:`Terminated` in the main thread (once: a second
    SIGTERM while the first is handled is ignored).  Outside the main thread it does nothing."""
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


IDLE_LIMIT = 300.0  # seconds a worker may take outside an example (start-up, Hypothesis's own work)

#: the least time limit (``--timeout`` of check, bench and repro) accepted: ``/proc`` counts CPU time
#: in clock ticks of 1/100 s, so a shorter limit would be judged on a few ticks, and a correct
#: kernel's first example would be a "hang"
MIN_TIMEOUT = 0.1

#: an example that uses less than its time limit of CPU is still a hang once it has been *blocked*
#: (no thread of the worker running or waiting for a CPU: a sleep, a lock, a device that never
#: answers) for this many times the limit, past the limit, i.e. at about (1 + this) x the limit
#: of wall time.  Time spent waiting for a CPU on a loaded machine is not blocked time, so load
#: cannot bring a slow example nearer to this bound, and one limit of blocked time is enough.
WALL_BACKSTOP = 1.0


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system, every thread, and the children it has waited for) that process
    ``pid`` has used, from ``/proc/PID/stat``; None where that cannot be read (not Linux, gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def runnable(pid: int, _depth: int = 0) -> bool | None:
    """Whether a thread of process ``pid``, or of a child process it started (a compiler it waits
    for), is running or waiting for a CPU (state ``R`` in ``/proc/PID/task/*/stat``); None where
    that cannot be read."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    children = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "R":
                    return True
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                children += [int(c) for c in f.read().split()]
        except (OSError, IndexError, ValueError):
            continue
    return _depth < 4 and any(runnable(c, _depth + 1) for c in children)


class ExampleClock:
    """How long the example running in worker ``pid`` has run, as the per-example time limit
    judges it: on the worker's own CPU time, which a loaded machine cannot inflate, with a
    backstop for an example that blocks without using CPU (:data:`WALL_BACKSTOP`): past the
    limit, the clock samples every 0.2 s whether a thread of the worker can run, and counts the
    time when none can.  Where ``/proc`` cannot be read, wall time alone (the rule before)."""

    def __init__(self, pid: int | None):
        self.pid = pid
        self.start()

    def start(self) -> None:
        """An example starts now."""
        import time
        self.wall0 = time.monotonic()
        self.cpu0 = cpu_seconds(self.pid) if self.pid else None
        self._cpu, self._read_at = 0.0, None
        self.blocked = 0.0   # seconds past the limit during which no thread of the worker could run

    def wall(self) -> float:
        import time
        return time.monotonic() - self.wall0

    def cpu(self) -> float | None:
        """CPU seconds the worker has used since :meth:`start`."""
        if self.cpu0 is None:
            return None
        c = cpu_seconds(self.pid)
        if c is not None:   # None: the worker is gone; its pipe says so, not the clock
            self._cpu = c - self.cpu0
        return self._cpu

    def hang(self, limit: float) -> str | None:
        """The reason the example is a hang under ``limit`` seconds, or None while it is not: more
        than ``limit`` seconds of both wall and CPU time, or blocked for ``WALL_BACKSTOP`` x
        ``limit`` past the limit."""
        over = self.over(limit)
        return None if over is None else f"hang: example ran longer than {over} (killed)"

    def over(self, limit: float) -> str | None:
        """How the example has run past ``limit`` seconds, by the rule of :meth:`hang`
        (``"2s of CPU time"``), or None while it has not."""
        import time
        wall = self.wall()
        if wall <= limit:
            return None
        if self.cpu0 is None:
            return f"{limit:g}s"
        now = time.monotonic()
        if self._read_at is not None and now - self._read_at < 0.2:
            return None
        cpu = self.cpu()
        if cpu > limit:
            return f"{limit:g}s of CPU time"
        if self._read_at is not None and runnable(self.pid) is False:
            self.blocked += now - self._read_at
        self._read_at = now
        if self.blocked > WALL_BACKSTOP * limit:
            return (f"{limit:g}s: blocked for {self.blocked:.0f}s more ({WALL_BACKSTOP:g} x the limit; "
                    f"{wall:.0f}s of wall time, {cpu:.1f}s of CPU)")
        return None


def start_worker(proc) -> None:
    """``proc.start()`` with SIGINT ignored meanwhile: the ignored disposition is inherited through
    ``exec``, so a Ctrl-C in the terminal while the worker is still starting (before
    :func:`start_own_group` takes it out of the terminal's process group) cannot make it print a
    traceback.  A Ctrl-C in the parent during the few milliseconds of the start is lost."""
    import threading
    if threading.current_thread() is not threading.main_thread():  # signal handlers: main thread only
        proc.start()
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        proc.start()
    finally:
        signal.signal(signal.SIGINT, old)


def start_own_group() -> None:
    """Make the calling worker the leader of a new session and process group (pgid == pid), so that
    :func:`kill_worker` can kill it together with every process it started, and so that a Ctrl-C
    in the terminal (sent to the foreground process group) reaches only the parent.  Then restore
    Python's SIGINT handler, ignored while the worker started (:func:`start_worker`)."""
    try:
        os.setsid()
    except OSError:  # already a group leader
        pass
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this worker when the thread that started it ends (``prctl``
    ``PR_SET_PDEATHSIG``), so that a parent killed by a signal it cannot catch (SIGKILL, the OOM
    killer) leaves no worker behind; then exit at once if the parent is already gone.  Elsewhere
    (no ``prctl``) nothing happens."""
    import multiprocessing as mp
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, signal.SIGKILL, 0, 0, 0) != 0:   # 1: PR_SET_PDEATHSIG
            return
    except (OSError, AttributeError):
        return
    parent = mp.parent_process()
    if parent is not None and os.getppid() != parent.pid:  # the parent died before prctl took effect
        os._exit(1)


def kill_worker(proc) -> None:
    """SIGKILL ``proc``'s process group (the worker and whatever it started), then ``proc``."""
    if proc is None:
        return
    pid = proc.pid
    if pid is not None:
        try:  # no such group until the worker has called start_own_group(); it outlives a reaped worker
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        proc.kill()
        proc.join(5)
    except Exception:  # noqa: BLE001 - already gone
        pass


def describe_exit(code: int | None) -> str:
    """``signal 11 SIGSEGV`` for a negative multiprocessing exit code, ``exit 3`` otherwise."""
    if code is None:
        return "exit status unknown"
    if code < 0:
        try:
            return f"signal {-code} {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"


def crash_reason(code: int | None, note: str | None = None) -> str:
    """The one-line reason of a crashed worker: ``crash: worker died (signal 11 SIGSEGV)``."""
    return f"crash: worker died ({describe_exit(code)})" + (f"; {note}" if note else "")


def exit_like(e: BaseException, conn=None) -> None:
    """End the worker after a variant raised ``KeyboardInterrupt`` or ``SystemExit``: tell the parent
    what was raised (over ``conn``), then exit at once with ``SystemExit``'s code (130 for
    ``KeyboardInterrupt``), as a crash, without Python's traceback and clean-up."""
    what = f"{type(e).__name__}({e.code!r})" if isinstance(e, SystemExit) else type(e).__name__
    if conn is not None:
        try:
            conn.send(("crash", f"the variant raised {what}"))
        except Exception:  # noqa: BLE001
            pass
    if isinstance(e, KeyboardInterrupt):
        code = 130
    else:  # Python's own rule for SystemExit: None is 0, an int is itself, anything else is 1
        code = 0 if e.code is None else e.code if isinstance(e.code, int) else 1
    os._exit(code)
