"""Kernel intervals: device time a backend measures around its own launches while a variant runs.

The rule: a backend that launches work on a device records, for each launch (or device-side
copy it wants counted), one *interval* with :func:`record`, giving a function that returns the
interval's length in seconds once the work has finished (a GPU's events, profiling events:
their elapsed time is only readable after the device is done).  ``refconv bench`` opens a
:func:`collect` around one ``Variant.run``; when the run has returned (and so synchronised),
:meth:`Intervals.seconds` resolves every interval, and the *kernel time* of that run is their
sum.  Outside a collection :func:`active` is false and :func:`record` does nothing, so the
checker and ordinary runs pay nothing.  A backend whose device is simulated (timings that mean
nothing) passes ``simulated=True``; the bench then labels the row instead of reporting a time.

Before each timed launch a GPU backend reads :func:`flush_bytes` bytes of device memory on the
launch's stream (the bench's ``--flush-bytes``): the L2 cache is cold and clean (a read evicts the
lines earlier work left dirty, and their write-back happens during the flush; a write-based flush
would leave the L2 full of its own dirty lines, whose write-back the timed kernel would pay), and
the device is busy while the host issues the launch, so the start event fires when the flush ends,
not when the host began.

Backends may also hand the bench a :class:`BenchHooks` (``Backend.bench``): a device-to-device
copy for the copy-bandwidth roofline, and whether the device is simulated.  Nothing here names a
backend; like :mod:`refconv.findings`, this module only collects.
"""
from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

_local = threading.local()


class Intervals:
    """The intervals recorded inside one :func:`collect` block."""

    def __init__(self, flush_bytes: int = 0):
        self._pending: list = []      # (label, resolve, simulated, caveat)
        self._done: list | None = None
        self.flush_bytes = int(flush_bytes)

    def _add(self, label: str, resolve: Callable[[], float], simulated: bool,
             caveat: Callable[[], str | None] | None = None) -> None:
        self._pending.append((label, resolve, bool(simulated), caveat))
        self._done = None

    def __len__(self) -> int:
        return len(self._pending)

    def seconds(self) -> list[float]:
        """Each interval's length in seconds, in recording order (resolved once, after the work)."""
        if self._done is None:
            self._done = [float(resolve()) for _, resolve, _, _ in self._pending]
        return list(self._done)

    def labels(self) -> list[str]:
        return [label for label, _, _, _ in self._pending]

    def caveats(self) -> dict[str, int]:
        """Why some intervals may not be the device's time alone (the backend's ``caveat``), each
        with how many intervals it applies to; empty when there is nothing to say.  Asked after
        :meth:`seconds`, once the work is done."""
        self.seconds()
        out: dict[str, int] = {}
        for _, _, _, caveat in self._pending:
            why = caveat() if caveat else None
            if why:
                out[why] = out.get(why, 0) + 1
        return out

    @property
    def simulated(self) -> bool:
        """True when any interval came from a simulated device (its time means nothing)."""
        return any(sim for _, _, sim, _ in self._pending)

    def total(self) -> float | None:
        """Kernel time of the run: the sum of the intervals, or None when none was recorded."""
        s = self.seconds()
        return sum(s) if s else None


def active() -> bool:
    """Whether a :func:`collect` block is open in this thread (backends skip event set-up otherwise)."""
    return bool(getattr(_local, "stack", None))


def record(resolve: Callable[[], float], label: str = "kernel", simulated: bool = False,
           caveat: Callable[[], str | None] | None = None) -> None:
    """Record one device interval for the innermost :func:`collect` (ignored outside one).
    ``resolve()`` is called after the run has returned and must give the length in seconds;
    ``caveat()``, called after it, says why this interval may hold more than the device's work
    (e.g. a stream hold that timed out), or None; the bench reports it with the row."""
    stack = getattr(_local, "stack", None)
    if stack:
        stack[-1]._add(label, resolve, simulated, caveat)


def current() -> Intervals | None:
    """The innermost open :func:`collect`'s :class:`Intervals` (None outside one): its identity
    tells a backend that a new timed run has begun (e.g. to hand the run the device allocations
    the previous run used)."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def flush_bytes() -> int:
    """How many bytes a GPU backend overwrites on the device right before each timed launch, on
    the launch's stream (0 outside a collection or when switched off).  The rule: every timed
    launch starts with a cold L2 cache, and with the device busy while the host issues the launch,
    so that neither cached inputs nor the host's launch overhead are in the interval."""
    stack = getattr(_local, "stack", None)
    return stack[-1].flush_bytes if stack else 0


@contextlib.contextmanager
def collect(flush_bytes: int = 0):
    """Collect the intervals recorded inside the ``with`` block into the yielded :class:`Intervals`;
    ``flush_bytes`` is what :func:`flush_bytes` answers inside it."""
    if not hasattr(_local, "stack"):
        _local.stack = []
    got = Intervals(flush_bytes)
    _local.stack.append(got)
    try:
        yield got
    finally:
        _local.stack.pop()


@dataclass(frozen=True)
class BenchHooks:
    """What a backend offers ``refconv bench`` (all optional).

    * ``copy(nbytes)`` prepares a device-to-device copy of ``nbytes`` bytes and returns a function
      that performs it once and :func:`record` s its interval (allocation stays outside), timed
      as the backend's launches are (inside a collection with :func:`flush_bytes`, after the L2
      flush).  The bench takes ``2 * nbytes / time`` (read + write) of a ``--copy-bytes`` copy,
      without a flush, as the copy bandwidth of that backend's device, and times a copy of each
      problem's input plus output bytes, flushed as a variant is, as that problem's floor row.
    * ``launch()`` prepares an empty kernel (one work-item, no work) launched through the same
      timed path as the backend's variants and returns a function that launches it once (recording
      its interval); the bench reports its time as the fixed cost every interval of that backend
      carries, whatever the kernel's work.
    * ``simulated()`` returns a reason string when the device is a simulator (times mean
      nothing), else None.
    """

    copy: Callable[[int], Callable[[], None]] | None = None
    launch: Callable[[], Callable[[], None]] | None = None
    simulated: Callable[[], str | None] = lambda: None


def host_copy(nbytes: int) -> Callable[[], None]:
    """The host-memory counterpart of ``BenchHooks.copy``: one ``memcpy`` of ``nbytes`` between two
    preallocated NumPy buffers, its interval taken with the host clock."""
    src = np.ones(max(1, int(nbytes)), np.uint8)
    dst = np.empty_like(src)

    def run():
        t0 = time.perf_counter()
        np.copyto(dst, src)
        dt = time.perf_counter() - t0
        record(lambda: dt, "host memcpy")
    return run
