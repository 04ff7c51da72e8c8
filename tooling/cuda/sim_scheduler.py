"""A faster block scheduler for numba-cuda's CUDA simulator, with the simulator's semantics.

The simulator runs every thread of a block as a Python thread.  Its ``BlockManager.run`` creates
a fresh OS thread per ``threadIdx`` for every block and releases a barrier when every *live*
thread waits in ``syncthreads()`` -- finding that out by busy-polling each thread's flag while
holding the GIL, so each barrier costs whole GIL switch intervals (5 ms).

:func:`run_block` runs the threads of a block as greenlets (https://greenlet.readthedocs.io) in
the calling OS thread instead: a CUDA thread runs until it blocks -- at a barrier, at a
warp-level operation -- or finishes, then hands control back to the block's scheduler, which
switches to the next thread that can move.  A switch is a C-level stack swap, not a futex wake
and a GIL hand-over between OS threads, and the threads of a block run in ``threadIdx`` order
(linear, x fastest) from one blocking point to the next, so a run is deterministic.  The rules
are the simulator's, unchanged:

* a barrier is released when every thread of the block that has not finished waits at one (so a
  divergent kernel does not hang, as in the simulator; the sanitizer reports it);
* an exception in any thread aborts the others (each raises at the barrier or warp operation it
  waits at) and is re-raised, its message naming the thread and block (``tid=[..] ctaid=[..]:
  ...``), as the simulator words it.

One difference from OS threads: a thread that spins on memory another thread of its block
must write (a plain flag) without a barrier, warp-level operation or atomic in the loop never
yields, so the block hangs -- and the check reports a hang -- where the simulator's OS threads
would eventually interleave (the GPU promises such a loop no progress either).  Every atomic
operation yields first (:func:`yield_point`), so a spin lock taken with ``atomic.cas`` makes
progress.

Because it sees every thread of the block, it also runs the warp-level operations that the
simulator lacks (``shfl_*_sync``, votes, ``match_*_sync``, ``activemask``, ``syncwarp``; see
:mod:`.sim_warps`): a thread at one is blocked like a thread at a barrier, and when every live
thread is blocked with a warp group still incomplete, the group goes on without its missing lanes
(``on_warp`` hears of it; the sanitizer's ``warp-mask`` finding).

Inside a simulated kernel ``threading.current_thread()`` is the OS thread running the block, not
a simulator thread: :func:`current_thread` returns the running CUDA thread (its ``threadIdx``,
``blockIdx``, ``thread_id``), and :func:`install` gives the simulator's ``kernelapi`` module a
``threading`` whose ``current_thread`` is that function.

:func:`install` puts it in place of ``BlockManager.run`` (and the warp-level operations on the
simulator's ``FakeCUDAModule``), :func:`arm` does so as soon as the simulator is imported, by
anyone (idempotent; ``REFCONV_SIM_SCHEDULER=numba`` keeps the simulator's own).  The sanitizer's
scheduler is built on :func:`run_block` as well.  Written against numba-cuda 0.30.4's
``simulator/kernel.py``; another version keeps the original.
"""
from __future__ import annotations

import functools
import os
import sys
import threading
import types
from collections import deque
from typing import Callable

import numpy as np
from greenlet import getcurrent

from .import_hook import after_import
from .sim_current import Green, current_thread
from .sim_warps import WarpState

SUPPORTED_NUMBA_CUDA = ("0.30.4",)
_state = {"installed": False, "original": None}

#: the values of ``REFCONV_SIM_SCHEDULER``: ``event`` (refconv's scheduler, the default) or
#: ``numba`` (the simulator's own)
SCHEDULERS = ("event", "numba")


def scheduler() -> str:
    """The scheduler ``REFCONV_SIM_SCHEDULER`` asks for (unset or empty: ``event``);
    ``refconv.errors.UsageError`` naming the variable, its value and :data:`SCHEDULERS` for any
    other value (checked when the backends are configured, before any work)."""
    raw = os.environ.get("REFCONV_SIM_SCHEDULER") or "event"
    if raw not in SCHEDULERS:
        from refconv.errors import UsageError
        raise UsageError(f"environment REFCONV_SIM_SCHEDULER={raw!r} not accepted; accepted: {', '.join(SCHEDULERS)}")
    return raw


def _own_scheduler() -> bool:
    """``REFCONV_SIM_SCHEDULER=numba``: keep the simulator's scheduler (a value not accepted counts
    as the default here; :func:`scheduler` reports it where the backends are configured)."""
    return os.environ.get("REFCONV_SIM_SCHEDULER") == "numba"


class _Barrier:
    """The block's scheduling state: who waits at the barrier, who can run next."""

    def __init__(self, n: int, on_warp: Callable | None = None):
        self.live = n          # threads not finished
        self.waiting = set()   # threads waiting at a barrier now
        self.generation = 0    # bumped at each release
        self.failed = None     # first thread that raised
        self.ready: deque = deque()   # threads to switch to, in order
        self.warps = WarpState(n, self.wake, on_warp)  # threads at a warp-level operation

    def wake(self, t) -> None:
        """``t`` can move again (it is switched to in its turn); the running thread needs no wake."""
        if t._green is not getcurrent():
            self.ready.append(t)


class SimThread:
    """The state of one simulated CUDA thread (what the simulator's ``BlockThread`` carries:
    ``threadIdx``, ``blockIdx``, ``thread_id``, ``abort``, ``exception``), reused block after
    block for one block shape; its code runs in a fresh greenlet per block."""

    def __init__(self, block_dim, thread_point):
        from numba.cuda.simulator.kernelapi import Dim3
        self.threadIdx = Dim3(*thread_point)
        bx, by, _ = block_dim
        self.thread_id = thread_point[0] + bx * (thread_point[1] + by * thread_point[2])
        self.blockIdx = None
        self._manager = self._barrier = self._green = None
        self.exception, self.abort, self.syncthreads_blocked = None, False, False
        self._wsync, self._wsync_mask = 0, 0

    def _yield(self) -> None:
        self._green.parent.switch()

    def syncthreads(self):
        if self.abort:
            raise RuntimeError("abort flag set on syncthreads call")
        b = self._barrier
        self.syncthreads_blocked = True
        b.waiting.add(self)
        gen = b.generation
        while b.generation == gen and not self.abort:
            self._yield()
        if self.abort:
            raise RuntimeError("abort flag set on syncthreads clear")

    def _syncthreads_reduce(self, value, how):
        idx = self.threadIdx.x, self.threadIdx.y, self.threadIdx.z
        state = self._manager.block_state
        state[idx] = value
        self.syncthreads()
        r = how(state)
        self.syncthreads()
        return r

    def syncthreads_count(self, value):
        return self._syncthreads_reduce(value, np.count_nonzero)

    def syncthreads_and(self, value):
        return self._syncthreads_reduce(value, lambda s: 1 if np.all(s) else 0)

    def syncthreads_or(self, value):
        return self._syncthreads_reduce(value, lambda s: 1 if np.any(s) else 0)

    def _body(self, f, args):
        b = self._barrier
        try:
            f(*args)
        except Exception as e:  # the simulator's message: thread and block first
            msg = f"tid={list(self.threadIdx)} ctaid={list(self.blockIdx)}"
            msg = f"{msg}: {e}" if str(e) else msg
            try:
                err = type(e)(msg)
            except Exception:
                err = RuntimeError(f"{type(e).__name__}: {msg}")
            self.exception = (err, e.__traceback__)
            if b.failed is None:
                b.failed = self
        b.live -= 1
        b.warps.exit(self)

    def __str__(self):
        return f"Thread <<<{self.blockIdx}, {self.threadIdx}>>>"


_THREADS: dict = {}    # block shape -> [SimThread], most recently used last
#: thread states kept across launches, all shapes together (plain objects, a few hundred bytes each)
_MAX_KEPT_THREADS = 1 << 16


def _threads_for(manager) -> list:
    key = tuple(manager._block_dim)
    threads = _THREADS.pop(key, None)
    if threads is None:
        threads = [SimThread(key, bp) for bp in np.ndindex(*key)]
    while _THREADS and sum(len(v) for v in _THREADS.values()) + len(threads) > _MAX_KEPT_THREADS:
        _THREADS.pop(next(iter(_THREADS)))  # least recently used first
    _THREADS[key] = threads
    return threads


def yield_point() -> None:
    """Inside a simulated CUDA thread: let the other threads of the block run first (this one
    goes to the end of the queue).  Every atomic operation calls it before it acts, so a thread
    that spins on an atomic (a lock taken with ``atomic.cas``, a counter another thread bumps)
    lets the thread it waits for move.  Anywhere else, a no-op."""
    t = getattr(getcurrent(), "cuda_thread", None)
    if t is None:
        return
    b = t._barrier
    if b is None or b.failed is not None or t.abort:
        return
    b.ready.append(t)
    t._yield()


#: the simulated atomic operations that yield first (:func:`yield_point`)
ATOMICS = ("add", "sub", "and_", "or_", "xor", "inc", "dec", "exch", "max", "min", "nanmax", "nanmin",
           "compare_and_swap", "cas")


def _yielding(op):
    @functools.wraps(op)
    def atomic(self, *a, **k):
        yield_point()
        return op(self, *a, **k)
    return atomic


def run_block(manager, grid_point, args, on_release: Callable | None = None,
              on_thread: Callable | None = None, on_warp: Callable | None = None) -> None:
    """Run one block of ``manager`` (a simulator ``BlockManager``) at ``grid_point``.
    ``on_release(threads, waiting)`` is called before each barrier release (the sanitizer checks
    divergence there); ``on_thread(t)`` for each thread before it starts the block;
    ``on_warp(issue)`` for each misuse of a warp-level operation (a dict, see :mod:`.sim_warps`;
    the sanitizer's ``warp-mask`` findings)."""
    from numba.cuda.simulator.kernelapi import Dim3
    _shim_kernelapi()
    threads = _threads_for(manager)
    bar = _Barrier(len(threads), on_warp)
    block_idx = Dim3(*grid_point)
    here = getcurrent()
    f = manager._f
    for t in threads:
        t.blockIdx, t._manager, t._barrier = block_idx, manager, bar
        t.exception, t.abort, t.syncthreads_blocked = None, False, False
        t._wsync, t._wsync_mask = 0, 0   # the last syncwarp taken part in (sim_warps)
        if on_thread is not None:
            on_thread(t)
        g = t._green = Green(t._body, here)
        g.cuda_thread = t
    ready = bar.ready
    for t in threads:
        t._green.switch(f, args)
        if bar.failed is not None:
            break
    while bar.failed is None:
        while ready and bar.failed is None:
            ready.popleft()._green.switch()
        if bar.failed is not None or bar.live == 0:
            break
        if bar.warps.npending and len(bar.waiting) + bar.warps.npending == bar.live:
            # nobody can move: resolve activemask(), or let stuck warp groups go on
            bar.warps.unblock()
            continue
        if bar.waiting and len(bar.waiting) == bar.live:
            if on_release is not None:
                on_release(threads, set(bar.waiting))
            waiting = sorted(bar.waiting, key=lambda t: t.thread_id)
            for t in waiting:
                t.syncthreads_blocked = False
            bar.waiting.clear()
            bar.generation += 1
            ready.extend(waiting)
            continue
        raise RuntimeError(f"simulated block {tuple(grid_point)}: {bar.live} threads live, none can move "
                           f"({len(bar.waiting)} at a barrier, {bar.warps.npending} at warp operations)")
    if bar.failed is not None:
        for t in threads:                 # abort every other thread, as the simulator does
            t.abort = True
            t.syncthreads_blocked = False
        for t in threads:   # each started one raises where it waits, and finishes (a greenlet is
            if t._green:    # true while started and not finished)
                t._green.switch()
        for t in threads:
            t._green = None
        e = bar.failed.exception
        raise e[0].with_traceback(e[1])
    for t in threads:
        t._green = None


def _shim_kernelapi() -> None:
    """Give the simulator's ``kernelapi`` module (``cuda.threadIdx``, ``cuda.syncthreads()``, ...
    look up ``threading.current_thread()``) a ``threading`` whose ``current_thread`` is
    :func:`current_thread`, everything else the real module's.  Idempotent."""
    if "kernelapi_threading" in _state:
        return
    from numba.cuda.simulator import kernelapi
    shim = types.ModuleType("threading", "threading, with current_thread() the simulated CUDA thread")
    shim.__dict__.update({k: v for k, v in vars(threading).items() if not k.startswith("__")})
    shim.current_thread = current_thread
    _state["kernelapi_threading"] = kernelapi.threading
    kernelapi.threading = shim


def _version_ok() -> bool:
    try:
        import numba_cuda
        return numba_cuda.__version__ in SUPPORTED_NUMBA_CUDA
    except Exception:  # pragma: no cover
        return False


def install() -> bool:
    """Use :func:`run_block` for every simulated block from now on; ``True`` if installed.  Imports
    the simulator (call it only with the simulator on); :func:`arm` does not."""
    if _state["installed"]:
        return True
    if _own_scheduler() or not _version_ok():
        return False
    from numba.cuda.simulator import kernel as kk
    return _patch(kk)


def _patch(kk) -> bool:
    if _state["installed"]:
        return True
    if _own_scheduler() or not _version_ok():
        return False
    _state["original"] = kk.BlockManager.run
    from numba.cuda.simulator import kernelapi
    from .sim_warps import NAMES, install as install_warps
    _state["warp_originals"] = {n: kernelapi.FakeCUDAModule.__dict__.get(n) for n in NAMES + ("popc",)}
    install_warps(kernelapi.FakeCUDAModule)
    _shim_kernelapi()
    from . import sim_casts, sim_swap
    sim_casts.install()
    sim_swap.install()
    _state["atomic_originals"] = {}
    for name in ATOMICS:
        op = kernelapi.FakeCUDAAtomic.__dict__.get(name)
        if op is not None:
            _state["atomic_originals"][name] = op
            setattr(kernelapi.FakeCUDAAtomic, name, _yielding(op))

    def run(self, grid_point, *args):
        run_block(self, grid_point, args)

    run.__doc__ = "refconv's greenlet replacement of the simulator's polling scheduler"
    kk.BlockManager.run = run
    _state["installed"] = True
    return True


_KERNEL_MODULE = "numba.cuda.simulator.kernel"
#: :func:`arm`'s place among the callbacks run at the simulator's import: before the sanitizer's
ARM_ORDER = 0


def arm() -> None:
    """Make every simulated launch in this process use :func:`run_block`: now if the simulator is
    already imported, else as soon as it is (without importing it here).  Idempotent."""
    if _state["installed"]:
        return
    if not after_import(_KERNEL_MODULE, _patch, order=ARM_ORDER):
        _patch(sys.modules[_KERNEL_MODULE])


def warps_supported() -> bool:
    """True when simulated launches in this process will have warp-level operations (refconv's
    scheduler is, or will be, installed): without the simulator imported yet, judged from
    ``REFCONV_SIM_SCHEDULER`` and the numba-cuda version."""
    if _state["installed"]:
        return True
    if sys.modules.get(_KERNEL_MODULE) is not None:
        return False
    return not _own_scheduler() and _version_ok()


def installed() -> bool:
    """True when simulated blocks run on :func:`run_block` in this process."""
    return _state["installed"]


def uninstall() -> None:
    if _state["installed"]:
        from numba.cuda.simulator import kernel as kk
        kk.BlockManager.run = _state["original"]
        from numba.cuda.simulator import kernelapi
        if "kernelapi_threading" in _state:
            kernelapi.threading = _state.pop("kernelapi_threading")
        from . import sim_casts, sim_swap
        sim_casts.uninstall()
        sim_swap.uninstall()
        for name, op in _state.pop("atomic_originals", {}).items():
            setattr(kernelapi.FakeCUDAAtomic, name, op)
        for name, f in _state.pop("warp_originals", {}).items():
            if f is None:
                delattr(kernelapi.FakeCUDAModule, name)
            else:
                setattr(kernelapi.FakeCUDAModule, name, f)
        _state["installed"] = False
