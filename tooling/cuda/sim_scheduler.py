"""A faster block scheduler for numba-cuda's CUDA simulator, with the simulator's semantics.

The simulator runs every thread of a block as a Python thread.  Its ``BlockManager.run`` creates
a fresh thread per ``threadIdx`` for every block, and releases a barrier when every *live* thread
waits in ``syncthreads()`` -- finding that out by busy-polling each thread's flag while holding
the GIL, so each barrier costs whole GIL switch intervals (5 ms).  Barrier-heavy kernels spent
almost all their time there: ``filter2d/numba_cuda/tiled_halo`` with one output per block took
29 s for one 20x20 image with a 9x9 mask.

:func:`run_block` keeps one pool of threads per block shape (one per ``threadIdx``, reused block
after block and launch after launch) and schedules barriers with condition variables: a thread
arriving at a barrier, finishing or raising wakes the scheduler, which sleeps otherwise.  The
rules are the simulator's, unchanged:

* a barrier is released when every thread of the block that has not finished waits at one (so a
  divergent kernel does not hang, as in the simulator; the sanitizer reports it);
* an exception in any thread aborts the others and is re-raised, its message naming the thread
  and block (``tid=[..] ctaid=[..]: ...``), as the simulator words it; that pool is discarded.

Measured (ci profile, seed 0, ``--jobs 1``, 2-core machine, same run with
``REFCONV_SIM_SCHEDULER=numba`` as the peer): ``refconv check --cuda sim --op filter2d`` 193.5 s
-> 55.6 s, ``--op matvec`` 84.4 s -> 16.9 s; the one 9x9 ``tiled_halo`` case above 29 s -> 4.7 s.

Because it sees every thread of the block, it also runs the warp-level operations that the
simulator lacks (``shfl_*_sync``, votes, ``match_*_sync``, ``activemask``, ``syncwarp``; see
:mod:`.sim_warps`): a thread at one is blocked like a thread at a barrier, and when every live
thread is blocked with a warp group still incomplete, the group goes on without its missing lanes
(``on_warp`` hears of it; the sanitizer's ``warp-mask`` finding).

:func:`install` puts it in place of ``BlockManager.run`` (and the warp-level operations on the
simulator's ``FakeCUDAModule``), :func:`arm` does so as soon as the simulator
is imported, by anyone (idempotent; ``REFCONV_SIM_SCHEDULER=numba``
keeps the simulator's own).  The sanitizer's scheduler is built on :func:`run_block` as well.
Written against numba-cuda 0.30.4's ``simulator/kernel.py``; another version keeps the original.
"""
from __future__ import annotations

import os
import sys
import threading
from typing import Callable

import numpy as np

from .import_hook import after_import
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
    """The block's shared scheduling state, guarded by ``cond``."""

    def __init__(self, n: int, on_warp: Callable | None = None):
        lock = threading.Lock()
        self.cond = threading.Condition(lock)     # the scheduler waits here
        self.release = threading.Condition(lock)  # threads at a barrier wait here
        self.live = n          # threads not finished
        self.waiting = set()   # threads waiting at a barrier now
        self.generation = 0    # bumped at each release
        self.failed = None     # first thread that raised
        self.warps = WarpState(lock, n, on_warp)  # threads at a warp-level operation


class _Job:
    """One block to run: what every pool thread needs for it."""

    def __init__(self, manager, grid_point, args, barrier, on_thread):
        from numba.cuda.simulator.kernelapi import Dim3
        self.manager, self.args, self.barrier, self.on_thread = manager, args, barrier, on_thread
        self.block_idx = Dim3(*grid_point)


def _thread_class():
    from numba.cuda.simulator import kernel as kk

    class PoolBlockThread(kk.BlockThread):
        """A simulator ``BlockThread`` (fixed ``threadIdx``) that runs block after block of the
        jobs its pool hands out, and signals the scheduler instead of being polled."""

        def __init__(self, pool, manager, block_point):
            super().__init__(None, manager, (0, 0, 0), block_point, manager._debug)
            self._pool = pool
            self._barrier = None

        def syncthreads(self):
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads call")
            b = self._barrier
            with b.cond:
                self.syncthreads_blocked = True
                b.waiting.add(self)
                gen = b.generation
                b.cond.notify()
                while b.generation == gen and not self.abort:
                    b.release.wait()
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads clear")

        def run(self):
            pool, seen = self._pool, 0
            while True:
                with pool.cond:
                    while pool.serial == seen and not pool.closed:
                        pool.cond.wait()
                    if pool.serial == seen:
                        return
                    seen, job = pool.serial, pool.job
                self.blockIdx, self._manager, self._barrier = job.block_idx, job.manager, job.barrier
                self.exception, self.abort, self.syncthreads_blocked = None, False, False
                self._wsync, self._wsync_mask = 0, 0   # the last syncwarp taken part in (sim_warps)
                if job.on_thread is not None:
                    job.on_thread(self)
                try:
                    job.manager._f(*job.args)
                except Exception as e:  # the simulator's message: thread and block first
                    msg = f"tid={list(self.threadIdx)} ctaid={list(self.blockIdx)}"
                    msg = f"{msg}: {e}" if str(e) else msg
                    try:
                        err = type(e)(msg)
                    except Exception:
                        err = RuntimeError(f"{type(e).__name__}: {msg}")
                    self.exception = (err, e.__traceback__)
                b = job.barrier
                with b.cond:
                    b.live -= 1
                    if self.exception and b.failed is None:
                        b.failed = self
                    b.warps.exit(self)
                    b.cond.notify()

    return PoolBlockThread


class _Pool:
    """One thread per ``threadIdx`` of a block shape, reused for every block of every launch
    with that shape (creating ~0.1 ms threads per block was the simulator's other big cost)."""

    def __init__(self, cls, manager):
        self.cond = threading.Condition()
        self.serial, self.job, self.closed = 0, None, False
        self.threads = [cls(self, manager, bp) for bp in np.ndindex(*manager._block_dim)]
        for t in self.threads:
            t.start()

    def submit(self, job):
        with self.cond:
            self.job = job
            self.serial += 1
            self.cond.notify_all()

    def close(self):
        with self.cond:
            self.closed = True
            self.cond.notify_all()


_POOLS: dict = {}      # block shape -> _Pool, most recently used last
#: idle threads kept across blocks and launches, all shapes together (the pool in use is kept
#: whatever its size, as the simulator would start that many threads anyway): bounded so that a
#: run over many block shapes stays far below a container's process / thread limit
_MAX_POOLED_THREADS = 2048
_THREAD = {}


def _pool_for(manager) -> _Pool:
    key = tuple(manager._block_dim)
    pool = _POOLS.pop(key, None)
    if pool is None:
        if "cls" not in _THREAD:
            _THREAD["cls"] = _thread_class()
        pool = _Pool(_THREAD["cls"], manager)
    while _POOLS and sum(len(p.threads) for p in _POOLS.values()) + len(pool.threads) > _MAX_POOLED_THREADS:
        _POOLS.pop(next(iter(_POOLS))).close()  # least recently used first
    _POOLS[key] = pool
    return pool


def run_block(manager, grid_point, args, on_release: Callable | None = None,
              on_thread: Callable | None = None, on_warp: Callable | None = None) -> None:
    """Run one block of ``manager`` (a simulator ``BlockManager``) at ``grid_point``.
    ``on_release(threads, waiting)`` is called under the lock before each barrier release (the
    sanitizer checks divergence there); ``on_thread(t)`` in each thread before it starts the
    block; ``on_warp(issue)`` under the lock for each misuse of a warp-level operation (a dict,
    see :mod:`.sim_warps`; the sanitizer's ``warp-mask`` findings)."""
    pool = _pool_for(manager)
    threads = pool.threads
    bar = _Barrier(len(threads), on_warp)
    pool.submit(_Job(manager, grid_point, args, bar, on_thread))
    with bar.cond:
        while True:
            if bar.failed is not None:
                for t in threads:  # abort every other thread, as the simulator does
                    t.abort = True
                    t.syncthreads_blocked = False
                bar.generation += 1
                bar.release.notify_all()
                bar.warps.abort()
                break
            if bar.live == 0:
                break
            if bar.warps.npending and len(bar.waiting) + bar.warps.npending == bar.live:
                # nobody can move: resolve activemask(), or let stuck warp groups go on
                bar.warps.unblock()
                continue
            if bar.waiting and len(bar.waiting) == bar.live:
                if on_release is not None:
                    on_release(threads, set(bar.waiting))
                for t in bar.waiting:
                    t.syncthreads_blocked = False
                bar.waiting.clear()
                bar.generation += 1
                bar.release.notify_all()
            bar.cond.wait()
    if bar.failed is not None:
        # the other threads may still be inside this block: never hand this pool another one
        _POOLS.pop(tuple(manager._block_dim), None)
        pool.close()
        e = bar.failed.exception
        raise e[0].with_traceback(e[1])


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

    def run(self, grid_point, *args):
        run_block(self, grid_point, args)

    run.__doc__ = "refconv's event-driven replacement of the simulator's polling scheduler"
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
        for name, f in _state.pop("warp_originals", {}).items():
            if f is None:
                delattr(kernelapi.FakeCUDAModule, name)
            else:
                setattr(kernelapi.FakeCUDAModule, name, f)
        _state["installed"] = False
