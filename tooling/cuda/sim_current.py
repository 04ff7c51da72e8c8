"""Which simulated CUDA thread is running: refconv's simulator scheduler (:mod:`.sim_scheduler`)
runs the threads of a block as greenlets of one OS thread, so ``threading.current_thread()`` no
longer says which CUDA thread runs; :func:`current_thread` does."""
from __future__ import annotations

import threading

from greenlet import getcurrent, greenlet

_os_current_thread = threading.current_thread


class Green(greenlet):
    """One CUDA thread's greenlet; ``cuda_thread`` is its thread state (``threadIdx``,
    ``blockIdx``, ``thread_id``, ...)."""

    __slots__ = ("cuda_thread",)


def current_thread():
    """The simulated CUDA thread running now (inside a block run by refconv's scheduler), else
    ``threading.current_thread()`` (under the simulator's own scheduler its OS threads are the
    CUDA threads)."""
    t = getattr(getcurrent(), "cuda_thread", None)
    return _os_current_thread() if t is None else t
