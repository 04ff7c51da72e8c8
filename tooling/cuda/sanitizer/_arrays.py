"""Instrumented arrays for the simulator sanitizer.

A :class:`SanArray` stands in for the NumPy array that the CUDA simulator hands to kernel code
(global arguments, ``cuda.shared.array``, ``cuda.local.array``, ``cuda.const.array_like``).
Element accesses are bounds-checked (negative indices, which NumPy and Numba both wrap, count as
out of bounds); shared and local arrays keep a *written* mask (uninitialised reads), shared arrays
keep per-element last-writer / reader epoch sets (races between two barriers).  Everything else
(``shape``, ``size``, ``ndim``, ``dtype``, ``len``) behaves like the underlying array.
"""
from __future__ import annotations

import sys
import threading

import numpy as np

from ..sim_current import current_thread as _current_thread

_getframe = sys._getframe

#: ``r_tid`` value meaning "read by more than one thread this epoch"
MULTI = -2

#: the integer types of an index the fast path of :meth:`SanArray._resolve` takes
_INTS = frozenset({int} | {t for t in np.sctypeDict.values() if isinstance(t, type) and issubclass(t, np.integer)})


class _AtomicFlag(threading.local):
    on = False   # inside a simulated atomic operation (its accesses are not races)


_ATOMIC = _AtomicFlag()


def poison(a: np.ndarray) -> None:
    """Fill fresh simulator storage with a poison that makes results visibly wrong: NaN for
    floats, 0xAB bytes for integers."""
    if a.size == 0:
        return
    if a.dtype.kind in "fc":
        a.fill(np.nan)
    else:
        try:
            a.view(np.uint8).fill(0xAB)
        except (TypeError, ValueError):
            pass


class Shadow:
    """Bookkeeping shared by an array and its views."""

    __slots__ = ("kind", "name", "launch", "written", "race", "w_tid", "w_ep", "w_line", "w_ws",
                 "r_tid", "r_ep", "r_line", "r_ws", "alloc_line", "size")

    def __init__(self, kind, name, launch, size, *, track_init=False, track_race=False,
                 alloc_line=None):
        self.kind = kind
        self.name = name
        self.launch = launch
        self.size = size
        self.alloc_line = alloc_line
        self.written = bytearray(size) if track_init else None
        self.race = track_race
        if track_race:
            self.w_tid = [-1] * size
            self.w_ep = [-1] * size
            self.w_line = [0] * size
            self.w_ws = [0] * size     # the writer's syncwarp stamp at the write (sim_warps)
            self.r_tid = [-1] * size
            self.r_ep = [-1] * size
            self.r_line = [0] * size
            self.r_ws = [0] * size     # the reader's stamp, or {tid: stamp} for several readers


def _warp_ordered(t, tid, other, stamp) -> bool:
    """True when the access of thread ``other`` (linear id) made with syncwarp stamp ``stamp`` is
    ordered before the current access of thread ``t`` (linear id ``tid``) by a ``syncwarp``:
    both in one warp, and ``t``'s last syncwarp came after that access and named ``other``'s lane.
    (CUDA orders the shared accesses of the lanes of a warp only through ``__syncwarp`` since
    Volta; only the last syncwarp of ``t`` is looked at.)"""
    if other < 0 or other // 32 != tid // 32:
        return False
    return t._wsync > stamp and bool(t._wsync_mask >> (other % 32) & 1)


def _readers_ordered(t, tid, readers) -> bool:
    """:func:`_warp_ordered` for every reader (``{tid: stamp}``) other than ``t`` itself."""
    return all(_warp_ordered(t, tid, r, s) for r, s in readers.items() if r != tid)


class SanArray:
    """An instrumented array (see module docstring)."""

    __slots__ = ("_a", "_st", "_fmap", "shape", "ndim", "size", "dtype", "_dims", "__weakref__")

    def __init__(self, a: np.ndarray, st: Shadow, fmap=None):
        self._a = a
        self._st = st
        self._fmap = fmap  # None (root, C order) or list: view C-order flat -> root flat
        self.shape = a.shape
        self.ndim = a.ndim
        self.size = a.size
        self.dtype = a.dtype
        self._dims = tuple(a.shape)

    # -- plain attributes -------------------------------------------------------------------
    def __len__(self):
        return len(self._a)

    def __getattr__(self, name):
        return getattr(self._a, name)

    def __repr__(self):
        return f"SanArray({self._st.kind} {self._st.name!r}, shape={self.shape}, dtype={self.dtype})"

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._a, dtype=dtype)

    # -- index resolution ---------------------------------------------------------------------
    def _resolve(self, idx):
        """``(flat, key, bad)``: flat C-order index into the root storage (``-1`` when really
        outside the array), the NumPy key to use, and a description of what was wrong (or None).
        Returns None when ``idx`` is not a full integer index (slice / partial index: a view)."""
        dims = self._dims
        ti = type(idx)
        if ti in _INTS:                    # the common cases first: an in-bounds integer of 1-D,
            if len(dims) == 1:             # two of 2-D
                k = int(idx)
                if 0 <= k < dims[0]:
                    return (k if self._fmap is None else self._fmap[k]), k, None
            idx = (idx,)
        elif ti is tuple:
            if len(idx) == 2 and len(dims) == 2 and type(idx[0]) in _INTS and type(idx[1]) in _INTS:
                i, j = int(idx[0]), int(idx[1])
                if 0 <= i < dims[0] and 0 <= j < dims[1]:
                    flat = i * dims[1] + j
                    return (flat if self._fmap is None else self._fmap[flat]), (i, j), None
        else:
            idx = (idx,)
        if len(idx) != len(dims):
            return None
        flat = 0
        bad = None
        out = False
        for k, n in zip(idx, dims):
            try:
                k = k.__index__()
            except AttributeError:
                return None
            if k < 0:
                if k >= -n:
                    bad = "negative index (wraps around on the GPU too)"
                    k += n
                else:
                    bad = "negative index, beyond the array"
                    out = True
            elif k >= n:
                bad = "index past the end"
                out = True
            flat = flat * n + k
        if out:
            return -1, idx, bad
        if self._fmap is not None:
            flat = self._fmap[flat]
        return flat, idx, bad

    def _view(self, idx):
        # check the integer components of a partial / sliced index, then hand out a view that
        # maps back onto the root's shadow
        if type(idx) is not tuple:
            idx = (idx,)
        for axis, k in enumerate(idx[: len(self._dims)]):
            if hasattr(k, "__index__") and not isinstance(k, (bool, np.bool_)):
                k = k.__index__()
                n = self._dims[axis]
                if k < 0 or k >= n:
                    self._finding_oob("read", idx, "negative index" if k < 0 else "index past the end", -1)
                    if not (-n <= k < 0):
                        raise IndexError(f"sanitizer: index {idx} outside {self._st.kind} array "
                                         f"{self._st.name!r} of shape {self.shape}")
        sub = self._a[idx]
        if not isinstance(sub, np.ndarray):
            return sub
        base = np.arange(self._a.size, dtype=np.int64).reshape(self._a.shape)
        if self._fmap is not None:
            base = np.asarray(self._fmap, dtype=np.int64).reshape(self._a.shape)
        fmap = base[idx].reshape(-1).tolist() if self._st.written is not None or self._st.race else None
        v = SanArray(sub, self._st, fmap)
        return v

    # -- element access -----------------------------------------------------------------------
    def __getitem__(self, idx):
        r = self._resolve(idx)
        if r is None:
            return self._view(idx)
        flat, key, bad = r
        st = self._st
        if bad is not None:
            self._finding_oob("read", key, bad, flat)
            if flat < 0:
                return _poison_value(self.dtype)
        if st.written is not None and not st.written[flat]:
            self._finding_uninit(key, flat)
        if st.race:
            t = _current_thread()
            if not _ATOMIC.on:
                tid = t.thread_id
                ep = st.launch.epoch
                if (st.w_ep[flat] == ep and st.w_tid[flat] != tid
                        and not _warp_ordered(t, tid, st.w_tid[flat], st.w_ws[flat])):
                    self._finding_race("read", key, flat, st.w_tid[flat], st.w_line[flat], "write")
                if st.r_ep[flat] != ep:
                    st.r_ep[flat] = ep
                    st.r_tid[flat] = tid
                    st.r_line[flat] = _getframe(1).f_lineno
                    st.r_ws[flat] = t._wsync
                elif st.r_tid[flat] != tid:
                    # several readers: their stamps in a dict.  Decided on the stamp's type, not on
                    # r_tid alone: simulated threads can interleave between these steps, and a
                    # reader of a new epoch may have put back an int after another made it MULTI
                    ws = st.r_ws[flat]
                    if type(ws) is not dict:
                        ws = {st.r_tid[flat]: ws} if st.r_tid[flat] != MULTI else {}
                        st.r_ws[flat] = ws
                        st.r_tid[flat] = MULTI
                    ws[tid] = t._wsync
                elif type(st.r_ws[flat]) is int:
                    st.r_ws[flat] = t._wsync
        return self._a[key]

    def __setitem__(self, idx, val):
        r = self._resolve(idx)
        if r is None:
            # slice assignment: treat as writes of every element it covers
            v = self._view(idx)
            if isinstance(v, SanArray):
                for i in np.ndindex(*v.shape):
                    v[i] = val if np.ndim(val) == 0 else np.asarray(val)[i]
                return
            self._a[idx] = val
            return
        flat, key, bad = r
        st = self._st
        if bad is not None:
            self._finding_oob("write", key, bad, flat)
            if flat < 0:
                return
        if st.race and not _ATOMIC.on:
            t = _current_thread()
            tid = t.thread_id
            ep = st.launch.epoch
            if (st.w_ep[flat] == ep and st.w_tid[flat] != tid
                    and not _warp_ordered(t, tid, st.w_tid[flat], st.w_ws[flat])):
                self._finding_race("write", key, flat, st.w_tid[flat], st.w_line[flat], "write")
            elif st.r_ep[flat] == ep and st.r_tid[flat] != tid and not (
                    _readers_ordered(t, tid, st.r_ws[flat]) if type(st.r_ws[flat]) is dict
                    else _warp_ordered(t, tid, st.r_tid[flat], st.r_ws[flat])):
                self._finding_race("write", key, flat, st.r_tid[flat], st.r_line[flat], "read")
            st.w_ep[flat] = ep
            st.w_tid[flat] = tid
            st.w_line[flat] = _getframe(1).f_lineno
            st.w_ws[flat] = t._wsync
        if st.written is not None:
            st.written[flat] = 1
        self._a[key] = val

    # -- findings -----------------------------------------------------------------------------
    def _finding_oob(self, access, key, bad, flat):
        key = key if type(key) is tuple else (key,)
        st = self._st
        L = st.launch
        where = L.where(self)
        idx = tuple(int(k) for k in key) if all(hasattr(k, "__index__") for k in key) else repr(key)
        msg = (f"{access} of {st.kind} array {where['array']!r} (shape {tuple(self.shape)}) at index "
               f"{idx}: {bad}")
        L.add("out-of-bounds", ("out-of-bounds", st.kind, where["array"], where["line"], access),
              msg, where, access=access, index=idx, memory=st.kind)

    def _finding_uninit(self, key, flat):
        key = key if type(key) is tuple else (key,)
        st = self._st
        L = st.launch
        where = L.where(self)
        idx = tuple(int(k) for k in key)
        msg = (f"read of {st.kind} array {where['array']!r} at index {idx}, never written since the "
               f"kernel started" + (" (this block)" if st.kind == "shared" else " (this thread)"))
        L.add("uninitialized-read", ("uninitialized-read", st.kind, where["array"], where["line"]),
              msg, where, index=idx, memory=st.kind)

    def _finding_race(self, access, key, flat, other_tid, other_line, other_access):
        key = key if type(key) is tuple else (key,)
        st = self._st
        L = st.launch
        where = L.where(self)
        idx = tuple(int(k) for k in key)
        other = "several threads" if other_tid == MULTI else f"thread {L.thread_of(other_tid)}"
        msg = (f"{access} of shared array {where['array']!r} at index {idx} by thread "
               f"{where['thread']} races with a {other_access} of the same element by {other} "
               f"(line {other_line}) with no syncthreads() between them")
        L.add("shared-race", ("shared-race", where["array"], where["line"]),
              msg, where, access=access, index=idx, other_access=other_access,
              other_thread=None if other_tid == MULTI else L.thread_of(other_tid),
              other_line=other_line, memory="shared")


def _poison_value(dtype):
    if dtype.kind in "fc":
        return dtype.type(np.nan)
    a = np.zeros(1, dtype)
    poison(a)
    return a[0]
