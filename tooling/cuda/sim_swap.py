"""The simulator's module swap as a plain context manager.

Every call of a simulated device function, and every launch, runs inside
``kernelapi.swapped_cuda_module(fn, fake)``: the function's module globals that name ``numba.cuda``
name the fake module (the kernel's ``cuda.threadIdx`` ...) while at least one call is inside.  The
simulator's version is a generator context manager that imports ``numba.cuda`` on every entry,
and kernels call device functions in their innermost loops.  :class:`Swapped` keeps the same
state (``kernelapi._swap_refcount``, ``_swap_orig``, the per-module locks, so the two can be
mixed) and the same rule: the globals are swapped at the first entry and restored at the last
exit.  :func:`install` puts it where ``simulator.kernel`` looks it up.
"""
from __future__ import annotations

_state: dict = {}


def _make(kernelapi, cuda):
    register, locks = kernelapi._locks_register_lock, kernelapi._globals_locks
    refcount, originals = kernelapi._swap_refcount, kernelapi._swap_orig

    class Swapped:
        __slots__ = ("globs", "fake", "gid", "lock")

        def __init__(self, fn, fake_cuda_module):
            self.globs = fn.__globals__
            self.fake = fake_cuda_module
            self.gid = id(self.globs)

        def __enter__(self):
            gid = self.gid
            with register:
                self.lock = lock = locks[gid]
            with lock:
                if refcount[gid] == 0:          # the first entry swaps numba.cuda for the fake
                    globs = self.globs
                    orig = originals[gid] = {k: v for k, v in globs.items() if v is cuda}
                    for k in orig:
                        globs[k] = self.fake
                refcount[gid] += 1
            return None

        def __exit__(self, *exc):
            gid = self.gid
            with self.lock:
                refcount[gid] -= 1
                if refcount[gid] == 0:          # the last exit restores it
                    self.globs.update(originals.pop(gid))
                    del refcount[gid]
            return False

    return Swapped


def install() -> None:
    """Make ``numba.cuda.simulator.kernel`` use :class:`Swapped`.  Idempotent."""
    if _state:
        return
    from numba import cuda
    from numba.cuda.simulator import kernel, kernelapi
    _state["original"] = kernel.swapped_cuda_module
    kernel.swapped_cuda_module = _make(kernelapi, cuda)


def uninstall() -> None:
    if _state:
        from numba.cuda.simulator import kernel
        kernel.swapped_cuda_module = _state.pop("original")
