"""The simulator sanitizer: replaces the CUDA simulator's kernel launch, its per-launch ``cuda``
module (shared / local / const arrays, atomics, barriers) and its block scheduler with
instrumented versions.  Written against numba-cuda 0.30.4's simulator (``simulator/kernel.py``,
``simulator/kernelapi.py``); :func:`enable` refuses any other version.
"""
from __future__ import annotations

import collections
import functools
import os
import sys
import threading
import warnings

import numpy as np

from . import _arrays
from ..sim_current import current_thread
from ..sim_scheduler import yield_point
from ._arrays import SanArray, Shadow, poison

SUPPORTED_NUMBA_CUDA = ("0.30.4",)

_HERE = os.path.dirname(os.path.abspath(__file__))
_state = {"enabled": False, "saved": None}
#: the findings of the last launches (newest last), for ad-hoc use outside a findings collection
history: collections.deque = collections.deque(maxlen=1000)


class SanitizerWarning(UserWarning):
    pass


# ----------------------------------------------------------------------------- per launch

class Launch:
    """State of one simulated kernel launch."""

    def __init__(self, fn, grid_dim, block_dim):
        self.fn = fn
        self.code = fn.__code__
        self.kernel = getattr(fn, "__qualname__", getattr(fn, "__name__", "?"))
        self.file = self.code.co_filename
        self.grid_dim = tuple(grid_dim)
        self.block_dim = tuple(block_dim)
        self.epoch = 0
        self.block = None
        self.issues: dict = {}
        self.lock = threading.Lock()
        self.shared_allocs: dict = {}
        self.dyn_shared: dict = {}
        self._skip = (_HERE, os.path.dirname(threading.__file__))

    def thread_of(self, tid):
        bx, by, _ = self.block_dim
        return (tid % bx, (tid // bx) % by, tid // (bx * by))

    def frames(self, depth=2):
        """(innermost user frame, kernel frame) for the calling simulator thread."""
        f = sys._getframe(depth)
        sim = _sim_dir()
        inner = None
        while f is not None:
            fn = f.f_code.co_filename
            if inner is None and not fn.startswith(_HERE) and not fn.startswith(sim):
                inner = f
            if f.f_code is self.code:
                return inner or f, f
            f = f.f_back
        return inner, None

    def where(self, arr=None):
        t = current_thread()
        inner, kf = self.frames(3)
        frame = kf or inner
        w = {"kernel": self.kernel,
             "block": tuple(getattr(t, "blockIdx", (0, 0, 0))),
             "thread": tuple(getattr(t, "threadIdx", (0, 0, 0))),
             "file": frame.f_code.co_filename if frame else self.file,
             "line": frame.f_lineno if frame else None}
        if inner is not None and kf is not None and inner is not kf:
            w["device_function"] = inner.f_code.co_name
            w["device_line"] = inner.f_lineno
        if arr is not None:
            w["array"] = arr._st.name or _name_in_frames(arr, (inner, kf)) or (
                f"{arr._st.kind}@line{arr._st.alloc_line}")
        return w

    def add(self, cls, key, message, where, **extra):
        with self.lock:
            f = self.issues.get(key)
            if f is None:
                f = {"class": cls, "message": message, **where, **extra, "count": 0}
                self.issues[key] = f
            f["count"] += 1

    def report(self):
        from refconv import findings
        out = []
        for f in self.issues.values():
            f = dict(f)
            loc = f"{os.path.basename(f['file'] or '?')}:{f['line']}"
            f["message"] = (f"{f['class']}: kernel {f['kernel']} block {f['block']} thread "
                            f"{f['thread']} ({loc}): {f['message']}"
                            + (f" [x{f['count']}]" if f["count"] > 1 else ""))
            out.append(f)
            history.append(f)
            cls, msg = f.pop("class"), f.pop("message")
            findings.report(cls, msg, **f)
            f["class"], f["message"] = cls, msg
        if out and not findings.collecting():
            for f in out:
                warnings.warn(f["message"], SanitizerWarning, stacklevel=3)
        return out


def _name_in_frames(arr, frames):
    for fr in frames:
        if fr is None:
            continue
        for k, v in fr.f_locals.items():
            if v is arr or (isinstance(v, SanArray) and v._st is arr._st and v._fmap is None):
                return k
    return None


_current = {"launch": None}


def current_launch():
    return _current["launch"]


def _sim_dir():
    from numba.cuda.simulator import kernel as k
    return os.path.dirname(k.__file__)


def _caller_line(depth=2):
    L = _current["launch"]
    if L is None:
        return None
    inner, kf = L.frames(depth + 1)
    f = inner or kf
    return (f.f_code.co_filename, f.f_lineno) if f is not None else None


# ----------------------------------------------------------------------------- fake cuda module

def _as_dtype(dtype):
    """A NumPy dtype from a NumPy dtype or a numba type."""
    from numba.cuda import types
    from numba.cuda.np import numpy_support
    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    return np.dtype(dtype)


def _memory_classes(ka):
    """The simulated ``cuda.local`` / ``cuda.const`` / ``cuda.shared`` whose arrays are
    :class:`SanArray` s with their shadows (poisoned, initialisation and race tracking)."""
    as_dtype = _as_dtype

    class SanLocal(ka.FakeCUDALocal):
        def array(self, shape, dtype, alignment=None):
            if alignment is not None:
                raise RuntimeError("Array alignment is not supported in cudasim")
            a = np.empty(shape, as_dtype(dtype))
            poison(a)
            L = _current["launch"]
            line = sys._getframe(1).f_lineno
            st = Shadow("local", None, L, a.size, track_init=True, alloc_line=line)
            return SanArray(a, st)

    class SanConst(ka.FakeCUDAConst):
        def array_like(self, ary):
            a = np.asarray(getattr(ary, "_ary", ary))
            st = Shadow("const", None, _current["launch"], a.size,
                        alloc_line=sys._getframe(1).f_lineno)
            return SanArray(a, st)

    class SanShared(ka.FakeCUDAShared):
        def __init__(self, dynshared_size):
            self._dynshared_size = dynshared_size
            self._lock = threading.Lock()

        def array(self, shape, dtype, alignment=None):
            if alignment is not None:
                raise RuntimeError("Array alignment is not supported in cudasim")
            dtype = as_dtype(dtype)
            L = _current["launch"]
            f = sys._getframe(1)
            key = (f.f_code.co_filename, f.f_lineno, shape == 0 and dtype.str)
            with self._lock:
                res = L.shared_allocs.get(key)
                if res is None:
                    if shape == 0:
                        # dynamic shared memory: one poisoned buffer per block; each dtype view
                        # keeps its own shadow (aliasing between views is not tracked)
                        buf = L.dyn_shared.get("buf")
                        if buf is None:
                            buf = np.empty(self._dynshared_size, np.uint8)
                            poison(buf)
                            L.dyn_shared["buf"] = buf
                        a = np.frombuffer(buf.data, dtype=dtype,
                                          count=self._dynshared_size // dtype.itemsize)
                    else:
                        a = np.empty(shape, dtype)
                        poison(a)
                    st = Shadow("shared", None, L, a.size, track_init=True, track_race=True,
                                alloc_line=f.f_lineno)
                    res = SanArray(a, st)
                    L.shared_allocs[key] = res
            return res

    return SanLocal, SanConst, SanShared


def _atomic_class(ka):
    """The simulated ``cuda.atomic`` whose operations are not reported as races."""
    class SanAtomic(ka.FakeCUDAAtomic):
        pass

    def _atomic_wrap(name):
        orig = getattr(ka.FakeCUDAAtomic, name)
        raw = getattr(orig, "__wrapped__", orig)   # the operation, without the scheduler's yield

        @functools.wraps(raw)
        def w(self, *a, **k):
            yield_point()                          # before the flag: other threads' accesses are checked
            _arrays._ATOMIC.on = True
            try:
                return raw(self, *a, **k)
            finally:
                _arrays._ATOMIC.on = False
        return w

    for name in ("add", "sub", "and_", "or_", "xor", "inc", "dec", "exch", "max", "min",
                 "nanmax", "nanmin", "compare_and_swap", "cas"):
        if hasattr(ka.FakeCUDAAtomic, name):
            setattr(SanAtomic, name, _atomic_wrap(name))

    return SanAtomic


def _build_classes():
    """The sanitizer's simulated ``cuda`` module and block manager classes (built once the
    simulator is imported)."""
    from numba.cuda.simulator import kernelapi as ka
    from numba.cuda.simulator import kernel as kk
    SanLocal, SanConst, SanShared = _memory_classes(ka)
    SanAtomic = _atomic_class(ka)

    class SanModule(ka.FakeCUDAModule):
        def __init__(self, grid_dim, block_dim, dynshared_size):
            super().__init__(grid_dim, block_dim, dynshared_size)
            self._local = SanLocal()
            self._shared = SanShared(dynshared_size)
            self._const = SanConst()
            self._atomic = SanAtomic()

        def syncthreads(self):
            t = current_thread()
            t._san_bline = _caller_line()
            t.syncthreads()

        def syncthreads_count(self, val):
            t = current_thread()
            t._san_bline = _caller_line()
            return t.syncthreads_count(val)

        def syncthreads_and(self, val):
            t = current_thread()
            t._san_bline = _caller_line()
            return t.syncthreads_and(val)

        def syncthreads_or(self, val):
            t = current_thread()
            t._san_bline = _caller_line()
            return t.syncthreads_or(val)

    return SanModule, _block_manager_class(kk)


def _block_manager_class(kk):
    """The simulator's block manager with barrier-divergence and warp-mask findings."""
    class SanBlockManager(kk.BlockManager):
        """The simulator's block scheduler plus barrier-divergence detection: a barrier is
        released when every *live* thread waits at one, exactly as the simulator does (so a
        divergent kernel cannot hang); if some threads of the block have already finished, or
        the waiting threads wait at different ``syncthreads()`` calls, that is reported."""

        def __init__(self, f, grid_dim, block_dim, debug, launch):
            super().__init__(f, grid_dim, block_dim, debug)
            self._launch = launch

        def run(self, grid_point, *args):
            from ..sim_scheduler import run_block
            L = self._launch
            L.block = tuple(grid_point)
            L.shared_allocs = {}
            L.dyn_shared = {}
            L.epoch += 1

            def on_thread(t):
                t._san_bline = None

            def on_release(threads, waiting):
                self._check_barrier(threads, waiting)
                L.epoch += 1

            run_block(self, grid_point, args, on_release=on_release, on_thread=on_thread,
                      on_warp=self._warp_issue)

        def _warp_issue(self, issue):
            """A misuse of a warp-level operation (``sim_warps``): a ``warp-mask`` finding."""
            L = self._launch
            site = issue.get("site") or (None, None)
            where = {"kernel": L.kernel, "block": L.block, "thread": tuple(issue["thread"].threadIdx),
                     "file": site[0], "line": site[1]}
            L.add("warp-mask", ("warp-mask", issue["kind"], issue["op"], site[1]), issue["message"],
                  where, op=issue["op"], mask=issue["mask"], warp=issue["warp"], lanes=issue["lanes"],
                  threads=[L.thread_of(t) for t in issue["threads"]], problem=issue["kind"])

        def _check_barrier(self, threads, blocked):
            L = self._launch
            exited = [t for t in threads if t not in blocked]
            lines = collections.Counter(t._san_bline for t in blocked)
            if not exited and len(lines) <= 1:
                return
            w0 = next(iter(blocked))
            bl = w0._san_bline or (None, None)
            where = {"kernel": L.kernel, "block": L.block, "thread": tuple(w0.threadIdx),
                     "file": bl[0], "line": bl[1]}
            if exited:
                ex = sorted(tuple(t.threadIdx) for t in exited)
                msg = (f"{len(blocked)} thread(s) of the block wait at syncthreads() while "
                       f"{len(exited)} thread(s) have already finished (e.g. thread {ex[0]}): "
                       f"the barrier is not reached by every thread of the block")
                L.add("barrier-divergence", ("barrier-divergence", "exited", bl[1]), msg, where,
                      waiting=len(blocked), exited=len(exited), exited_threads=ex[:8])
            else:
                parts = ", ".join(f"line {ln[1] if ln else '?'}: {n} thread(s)"
                                  for ln, n in sorted(lines.items(), key=lambda x: str(x)))
                msg = f"threads of the block wait at different syncthreads() calls ({parts})"
                where["lines"] = sorted((ln[1] for ln in lines if ln), key=int)
                L.add("barrier-divergence", ("barrier-divergence", "lines", tuple(where["lines"])),
                      msg, where)

    return SanBlockManager


# ----------------------------------------------------------------------------- kernel launch

def _make_call(SanModule, SanBlockManager, orig_call):
    from numba.cuda.simulator import kernel as kk
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray, FakeWithinKernelCUDAArray
    from numba.cuda.simulator.args import ArgHint, InOut
    from numba.cuda.errors import normalize_kernel_dimensions

    def __call__(self, *args):
        if self._device or kk._kernel_context or not _state["enabled"]:
            return orig_call(self, *args)

        grid_dim, block_dim = normalize_kernel_dimensions(self.grid_dim, self.block_dim)
        mod = SanModule(grid_dim, block_dim, self.dynshared_size)
        L = Launch(self.fn, grid_dim, block_dim)
        code = self.fn.__code__
        pnames = list(code.co_varnames[: code.co_argcount])
        with kk._push_kernel_context(mod):
            retr = []

            def fake_arg(i, arg):
                _, arg = functools.reduce(
                    lambda ty_val, extension: extension.prepare_args(*ty_val, stream=0, retr=retr),
                    self.extensions, (None, arg))
                if isinstance(arg, np.ndarray) and arg.ndim > 0:
                    ret = InOut(arg).to_device(retr)
                elif isinstance(arg, ArgHint):
                    ret = arg.to_device(retr)
                elif isinstance(arg, np.void):
                    ret = FakeCUDAArray(arg)
                else:
                    ret = arg
                if isinstance(ret, FakeCUDAArray):
                    ary = ret._ary
                    if isinstance(ary, np.ndarray) and ary.ndim > 0 and ary.dtype.names is None:
                        name = pnames[i] if i < len(pnames) else f"arg{i}"
                        return SanArray(ary, Shadow("global", name, L, ary.size))
                    return FakeWithinKernelCUDAArray(ret)
                return ret

            fake_args = [fake_arg(i, a) for i, a in enumerate(args)]
            _current["launch"] = L
            try:
                with kk.swapped_cuda_module(self.fn, mod):
                    for grid_point in np.ndindex(*grid_dim):
                        bm = SanBlockManager(self.fn, grid_dim, block_dim, self._debug, L)
                        bm.run(grid_point, *fake_args)
            finally:
                _current["launch"] = None
                L.report()
            for wb in retr:
                wb()

    return __call__


# ----------------------------------------------------------------------------- enable / disable

def _check_environment():
    from numba.cuda.core import config
    if not config.ENABLE_CUDASIM:
        raise RuntimeError("refconv sanitizer: the CUDA simulator is not active; set "
                           "NUMBA_ENABLE_CUDASIM=1 before numba.cuda is first imported")
    try:
        import numba_cuda
        ver = numba_cuda.__version__
    except Exception:  # pragma: no cover
        ver = "unknown"
    if ver not in SUPPORTED_NUMBA_CUDA and not os.environ.get("REFCONV_SANITIZER_ANY_VERSION"):
        raise RuntimeError(
            f"refconv sanitizer: written against the simulator of numba-cuda "
            f"{'/'.join(SUPPORTED_NUMBA_CUDA)}, found numba-cuda {ver}; pin numba-cuda==0.30.4 "
            f"(or set REFCONV_SANITIZER_ANY_VERSION=1 at your own risk)")


def enable() -> None:
    """Install the instrumentation into the CUDA simulator (idempotent).  Kernels defined before
    or after this call are instrumented alike: the launch of every ``FakeCUDAKernel`` goes
    through the sanitizer from now on."""
    if _state["enabled"]:
        return
    _check_environment()
    from numba.cuda.simulator import kernel as kk
    if _state["saved"] is None:
        SanModule, SanBlockManager = _build_classes()
        orig = kk.FakeCUDAKernel.__call__
        _state["saved"] = orig
        kk.FakeCUDAKernel.__call__ = _make_call(SanModule, SanBlockManager, orig)
    _state["enabled"] = True


def disable() -> None:
    """Stop instrumenting launches (the simulator behaves as without :func:`enable`)."""
    _state["enabled"] = False


def is_enabled() -> bool:
    return _state["enabled"]
