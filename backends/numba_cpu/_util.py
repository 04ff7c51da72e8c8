"""Small helpers shared by the numba_cpu modules."""
from __future__ import annotations

import contextlib

import numba
import numpy as np


def njit(fn):
    """``numba.njit(cache=True)``: the machine code is kept on disk (numba's cache: the module's
    ``__pycache__``, else the user's cache folder; keyed by the source file's time stamp, the
    argument types and the CPU), so a later run, and every worker process of a run, loads it
    instead of compiling again.  Where numba finds no writable cache folder it compiles in
    memory, as ``cache=False`` does."""
    try:
        return numba.njit(cache=True)(fn)
    except RuntimeError:            # "cannot cache function ...: no locator available"
        return numba.njit(cache=False)(fn)


def c_array(a: np.ndarray) -> np.ndarray:
    """``a`` as a writable C-contiguous array (copied when it is read-only or strided), so numba
    sees one array type per dtype and compiles one specialisation, whether the inputs come from
    ``problem.inputs`` (read-only) or a replayed reproducer (writable)."""
    a = np.asarray(a)
    if a.flags.c_contiguous and a.flags.writeable:
        return a
    return np.array(a, order="C", copy=True)


def check_out(out: np.ndarray, shape: tuple, op: str) -> None:
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{op}: output buffer has shape {tuple(out.shape)}, expected {tuple(shape)}")


@contextlib.contextmanager
def c_target(out: np.ndarray):
    """A C-contiguous array for a kernel to write: ``out`` itself when it is one, else a scratch
    array copied into ``out`` when the block ends."""
    target = out if out.flags.c_contiguous else np.empty_like(out)
    yield target
    if target is not out:
        out[...] = target
