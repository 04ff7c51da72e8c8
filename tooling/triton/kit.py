"""refconv's Triton kit: the one module a Triton backend (built-in or third-party) runs its
kernels through.

* **the mode** -- ``--triton auto|gpu|interpret`` (env ``REFCONV_TRITON``, :data:`OPTION`):
  ``gpu`` compiles for the CUDA device, ``interpret`` runs kernels in Triton's interpreter on the
  CPU with NumPy (``TRITON_INTERPRET=1``, set before any kernel is made), ``auto`` picks the GPU
  when the CUDA driver reports one, else the interpreter.  :func:`mode` resolves it.
* **kernels** -- :func:`jit` is ``triton.jit`` made lazy: the kernel is created at its first
  launch, after the mode is known, so a module may define its kernels at import time whatever
  ``--triton`` later selects.  A plain ``@triton.jit`` kernel is accepted by :func:`launch` too
  (re-made as an interpreted function under the interpreter, its jitted helpers as well).
* **launches** -- :func:`launch` runs ``kernel[grid](*args)`` where NumPy arrays are the buffers:
  under the interpreter each is copied into a guarded host allocation (no torch needed) and
  checked by :mod:`.memcheck` (out-of-bounds and uninitialised reads become findings that fail
  the example); on the GPU they are copied to device memory through torch.  ``out`` (the
  checker's poisoned buffer) is copied in as it is and back after the launch, so elements the
  kernel never writes keep the poison; several launches on ``out`` in one run chain (under the
  interpreter, what any of them stored counts as written).  NumPy scalars become Python ones.
* **work memory and strided views** -- :func:`scratch` (a read-write buffer shared by the
  launches of a run, starting as poison), :func:`strided` (an input passed as it lies in
  memory, its gaps poisoned) with :func:`strides` (its element strides, for the kernel).
* **undefined lanes** -- before a launched kernel is compiled (GPU) or interpreted, each
  masked ``tl.load`` without ``other=`` in it and in the ``@triton.jit`` functions it calls by
  name is given ``other=`` poison of the pointer's element type (NaN, or the bytes 0xA5 for
  integers) by :mod:`._rewrite`, instead of the 0 both targets happen to give: Triton leaves
  those lanes undefined, so a kernel that uses them fails every run, on either target.  A
  kernel without such loads runs as written.
* **availability** -- :func:`available` is ``None`` or why the kernels cannot run here (triton
  not installed, no wheel for this platform, ``gpu`` asked without a GPU); it never raises.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.util
import os
import platform
import time
import weakref

import numpy as np

from refconv import timing
from refconv.variant import BackendOption, MissingTarget, Target

from . import _rewrite

__all__ = ["CHOICES", "OPTION", "BENCH", "backend_fields", "configure", "choice", "mode", "interpreted",
           "available", "version", "describe", "target", "LazyKernel", "jit", "kernel_name", "HostArray",
           "OUT", "GUARD_MIN", "launch", "Scratch", "scratch", "Strided", "strided", "strides",
           "BUDGET", "GRID_LIMITS", "grid_fits", "budget", "cdiv", "bench_copy", "bench_simulated"]

CHOICES = ("auto", "gpu", "interpret")

#: the ``--triton`` option (``REFCONV_TRITON``); a Triton plugin declares the same option object
#: (the command line lists an option once per ``dest``) and passes :func:`configure`.
OPTION = BackendOption(
    flag="--triton", dest="triton", env="REFCONV_TRITON", choices=CHOICES, default="auto",
    help="where Triton kernels run: auto (the CUDA GPU if the driver reports one, else Triton's "
         "interpreter on the CPU), gpu, or interpret (TRITON_INTERPRET=1, with refconv's memory checker)")

_state = {"choice": None, "mode": None}


# ----------------------------------------------------------------------------- mode

def _cuda_devices() -> int:
    """How many CUDA devices the driver reports (0 without a driver); imports nothing of triton."""
    for lib in ("libcuda.so.1", "libcuda.so"):
        try:
            cu = ctypes.CDLL(lib)
        except OSError:
            continue
        n = ctypes.c_int(0)
        if cu.cuInit(0) != 0 or cu.cuDeviceGetCount(ctypes.byref(n)) != 0:
            return 0
        return n.value
    return 0


def configure(options) -> None:
    """``Backend.configure``: take ``--triton`` (``options["triton"]``, else ``REFCONV_TRITON``,
    else ``auto``).  The choice is validated here and resolved by :func:`mode`."""
    choice = (options or {}).get("triton") or os.environ.get("REFCONV_TRITON") or "auto"
    if choice not in CHOICES:
        raise ValueError(f"--triton {choice!r}; accepted: {', '.join(CHOICES)}")
    if choice != _state["choice"]:
        _state.update(choice=choice, mode=None)


def choice() -> str:
    """The ``--triton`` value in force (``auto`` when nothing chose one)."""
    if _state["choice"] is None:
        configure({})
    return _state["choice"]


def mode() -> str:
    """``"gpu"`` or ``"interpret"``: where kernels launched through this kit run.  Sets
    ``TRITON_INTERPRET`` accordingly (before any kernel is made by :func:`jit`)."""
    if _state["mode"] is None:
        c = choice()
        m = c if c != "auto" else ("gpu" if _cuda_devices() > 0 else "interpret")
        os.environ["TRITON_INTERPRET"] = "1" if m == "interpret" else "0"
        _state["mode"] = m
    return _state["mode"]


def interpreted() -> bool:
    """True when kernels run in Triton's interpreter."""
    return mode() == "interpret"


def _triton_missing() -> str | None:
    if importlib.util.find_spec("triton") is None:
        machine = platform.machine().lower()
        if platform.system() != "Linux" or machine not in ("x86_64", "amd64", "aarch64", "arm64"):
            return (f"triton is not installed (no triton wheels for {platform.system()} {platform.machine()}; "
                    "they exist for Linux x86_64 / aarch64)")
        return "triton is not installed (pip install 'refconv[triton]' or pip install triton)"
    return None


def available() -> str | None:
    """``None`` when Triton kernels can run in the selected mode, else why not (never raises)."""
    why = _triton_missing()
    if why:
        return why
    try:
        m = mode()
    except Exception as e:          # noqa: BLE001 - a reason, never a crash
        return f"triton mode: {e}"
    if m == "gpu":
        if _cuda_devices() == 0:
            return MissingTarget("--triton gpu: the CUDA driver reports no GPU (use --triton interpret)")
        if importlib.util.find_spec("torch") is None:
            return "--triton gpu needs torch for device buffers (pip install torch)"
    try:
        import triton  # noqa: F401
    except Exception as e:          # noqa: BLE001
        return f"import triton failed: {type(e).__name__}: {e}"
    return None


def version() -> str:
    try:
        import triton
        return triton.__version__
    except Exception:               # noqa: BLE001
        return "?"


def describe() -> str:
    """One line for ``refconv list``: the Triton version and where kernels run."""
    if _triton_missing():
        return "triton not installed"
    if interpreted():
        return f"Triton {version()} interpreter on the CPU (NumPy), memory checker on"
    return f"Triton {version()} compiled for the CUDA GPU"


def target() -> Target:
    """``Backend.target``: the interpreter counts as simulated (the gpu profile refuses it)."""
    if interpreted():
        return Target(name="triton-interpreter", simulated=True, limits={})
    return Target(name="triton-cuda", simulated=False, limits={})


# ----------------------------------------------------------------------------- kernels

class LazyKernel:
    """``triton.jit(fn, **kw)`` created at first use, once the mode is known (see :func:`jit`)."""

    def __init__(self, fn, kw):
        self.fn = fn
        self.kw = kw
        self._made = {}
        functools.update_wrapper(self, fn)

    def made(self):
        """The ``triton.jit`` object of the current mode (an ``InterpretedFunction`` under the
        interpreter)."""
        m = mode()
        if m not in self._made:
            import triton
            self._made[m] = triton.jit(_rewrite.poisoned(self.fn), **self.kw)
        return self._made[m]

    def __getitem__(self, grid):
        return self.made()[grid]

    def __call__(self, *args, **kwargs):      # a call from inside an interpreted kernel
        return self.made()(*args, **kwargs)


def jit(fn=None, **kw):
    """``@jit`` / ``@jit(**triton_jit_options)``: ``triton.jit`` deferred to the first launch, for
    the kernels you launch.  Helpers they call stay plain ``@triton.jit`` functions (compiled
    with the kernel on the GPU; run interpreted inside an interpreted launch)."""
    if fn is None:
        return lambda f: LazyKernel(f, kw)
    return LazyKernel(fn, kw)


def _runnable(kernel):
    """The object to index with a grid: a :class:`LazyKernel`'s kernel of the current mode, or a
    plain ``triton.jit`` kernel (re-made as an interpreted function under the interpreter); its
    masked loads without ``other=`` given poison (:mod:`._rewrite`) either way."""
    if isinstance(kernel, LazyKernel):
        return kernel.made()
    if interpreted():
        return _interpreted(kernel)
    return _rewrite.twin(kernel)


@contextlib.contextmanager
def _jit_calls_interpreted():
    """Inside an interpreted launch, a call of a compiled-mode ``triton.jit`` function -- a jitted
    helper of a plugin, or ``tl.sum`` / ``tl.max`` ... when triton was imported before
    ``TRITON_INTERPRET`` was set -- runs interpreted instead of raising "Cannot call @triton.jit'd
    outside of the scope of a kernel"."""
    from triton.runtime.jit import JITFunction
    saved = JITFunction.__call__
    JITFunction.__call__ = lambda self, *a, **k: _interpreted(self, launched=False)(*a, **k)
    try:
        with _lang_patched_once_per_launch():
            yield
    finally:
        JITFunction.__call__ = saved


@contextlib.contextmanager
def _lang_patched_once_per_launch():
    """Triton's interpreter re-patches ``triton.language`` (a scan of every member of ``tl`` and
    ``tl.core``) at every call of a jitted function inside a kernel -- ``tl.sum`` and ``tl.zeros``
    are such functions -- and leaves that patch in place.  The patch is the same every time, so
    inside one launch the first patch per function stands for the later ones: the launch's own
    patch (restored at its end) is made as before, the repeats are skipped."""
    from triton.runtime import interpreter as ti
    patch, scope = getattr(ti, "_patch_lang", None), getattr(ti, "_LangPatchScope", None)
    if patch is None or scope is None:          # another Triton: its own patching, unchanged
        yield
        return
    done: set = set()

    def once(fn):
        if fn in done:
            return scope()                      # nothing to restore
        done.add(fn)
        return patch(fn)
    ti._patch_lang = once
    try:
        yield
    finally:
        ti._patch_lang = patch


_INTERPRETED: dict = {}


def _interpreted(kernel, launched: bool = True):
    """An ``InterpretedFunction`` of a kernel's Python function, made once (keyed by identity:
    hashing a ``JITFunction`` computes its cache key).  A ``launched`` kernel's masked loads
    without ``other=`` are given poison (:mod:`._rewrite`), as on the GPU; a jitted function it
    calls runs as the kernel's globals name it (its rewritten twin where it had such loads)."""
    fn = getattr(kernel, "fn", kernel)
    made = _INTERPRETED.get((id(fn), launched))
    if made is None or made[0] is not fn:
        from triton.runtime.interpreter import InterpretedFunction
        made = _INTERPRETED[(id(fn), launched)] = (fn, InterpretedFunction(_rewrite.poisoned(fn) if launched else fn))
    return made[1]


def kernel_name(kernel) -> str:
    fn = getattr(kernel, "fn", kernel)
    return getattr(fn, "__name__", repr(kernel))


# ----------------------------------------------------------------------------- host buffers

class HostArray:
    """A NumPy array dressed as the tensor Triton's interpreter expects (``data_ptr``, ``dtype``,
    storage calls that are identities): the interpreter then reads and writes the array itself,
    and no torch is needed on the CPU path."""

    def __init__(self, array: np.ndarray, name: str = ""):
        if not array.flags.c_contiguous:
            raise ValueError(f"HostArray {name or ''}: a C-contiguous array is needed, got strides {array.strides}")
        self.array = array
        self.name = name
        self.dtype = array.dtype          # Triton's type mangling accepts NumPy dtypes

    def data_ptr(self) -> int:
        return self.array.ctypes.data

    # the storage protocol of triton.runtime.interpreter.GridExecutor, as identities
    def untyped_storage(self):
        return self

    def cpu(self):
        return self

    def copy_(self, other):
        return self

    def new_empty(self, *_, **__):
        return self

    def set_(self, *_, **__):
        return self

    def storage_offset(self) -> int:
        return 0

    def size(self):
        return self.array.shape

    def stride(self):
        return tuple(s // self.array.itemsize for s in self.array.strides)

    @property
    def shape(self):
        return self.array.shape

    def numel(self) -> int:
        return self.array.size

    def element_size(self) -> int:
        return self.array.itemsize




class _Out:
    def __repr__(self):
        return "refconv.tooling.triton.kit.OUT"


#: placeholder for the output buffer among :func:`launch`'s arguments (``out=`` gives the array)
OUT = _Out()

#: bytes of guard before and after each buffer under the interpreter (at least the buffer's size)
GUARD_MIN = 4096


def _guarded(a: np.ndarray, guard: int) -> tuple[np.ndarray, np.ndarray]:
    """A copy of ``a`` inside a larger allocation with ``guard`` bytes on either side (filled
    with 0xA5), and that allocation; accesses landing in the guard are reported, never done."""
    raw = np.full(guard + a.nbytes + guard + 64, 0xA5, np.uint8)
    start = guard + (-(raw.ctypes.data + guard) % 64)
    view = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    view[...] = a
    return view, raw


# ----------------------------------------------------------------------------- scratch, strided views

class Scratch:
    """A read-write work buffer of ``nbytes`` bytes seen by kernels as ``dtype`` elements (made by
    :func:`scratch`): pass it among :func:`launch`'s arguments, to one launch or to several (it
    keeps its contents from one launch to the next).  It starts uninitialised: filled with the
    checker's poison (NaN for floats, the bytes 0xA5 for integers), and under the interpreter a
    load of an element no launch of the run has stored is an ``uninitialized-read``; stores into
    it are allowed (an input's are ``write-to-input``).  :meth:`numpy` reads it back."""

    def __init__(self, nbytes: int, dtype=np.uint8):
        dtype = np.dtype(dtype)
        nbytes = int(nbytes)
        if nbytes < 0 or nbytes % dtype.itemsize:
            raise ValueError(f"scratch({nbytes}, {dtype}): nbytes must be a non-negative multiple of the "
                             f"element size {dtype.itemsize}")
        self.dtype, self.nbytes = dtype, nbytes
        self.size = nbytes // dtype.itemsize
        self._host = None        # (guarded view, raw allocation, written bytes) under the interpreter
        self._device = None      # a torch CUDA tensor on the GPU

    def _fill(self) -> np.ndarray:
        from .memcheck import poison
        p = poison(self.dtype)
        return np.full(self.size, 0 if p is None else p, self.dtype)

    def host(self):
        """(view, raw allocation, written-bytes mask) of the interpreter's guarded copy."""
        if self._host is None:
            view, raw = _guarded(self._fill(), max(GUARD_MIN, self.nbytes))
            self._host = (view, raw, np.zeros(self.nbytes, bool))
        return self._host

    def device(self):
        """The CUDA tensor of the GPU path (poison-filled at its first use)."""
        if self._device is None:
            import torch
            self._device = torch.tensor(self._fill(), device="cuda")
        return self._device

    def numpy(self) -> np.ndarray:
        """A host copy of the current contents (poison where nothing was stored)."""
        if self._device is not None:
            return self._device.cpu().numpy()
        return (self.host()[0] if interpreted() else self._fill()).copy()

    def __repr__(self):
        return f"Scratch({self.nbytes}, {self.dtype})"


def scratch(nbytes: int, dtype=np.uint8) -> Scratch:
    """An uninitialised read-write work buffer of ``nbytes`` bytes, ``dtype`` elements, for
    :func:`launch` (the Triton twin of ``refconv.opencl.scratch(nbytes)``): see :class:`Scratch`.
    Make it inside ``run``, once per run, and pass it to every launch that shares it; findings
    name it by the kernel parameter it is passed as, like any buffer."""
    return Scratch(nbytes, dtype)


class Strided:
    """A NumPy array passed to :func:`launch` as it lies in memory (made by :func:`strided`)."""

    def __init__(self, array: np.ndarray):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"strided(a): a NumPy array is needed, got {type(array).__name__}")
        if any(st % array.itemsize for st in array.strides):
            raise ValueError(f"strided(a): byte strides {array.strides} are not multiples of the element size "
                             f"{array.itemsize}")
        self.array = array

    def span(self):
        """``(span, holes, first)``: a 1-D array holding the view's whole extent in memory (its
        elements where they lie, the checker's poison between them), one bool per element of the
        span that is no element of the view, and the span index of the view's element 0."""
        a = self.array
        es = strides(a)
        lo = sum((n - 1) * st for n, st in zip(a.shape, es) if st < 0 and n > 0)
        hi = sum((n - 1) * st for n, st in zip(a.shape, es) if st > 0 and n > 0)
        n = (hi - lo + 1) if a.size else 0
        from .memcheck import poison
        p = poison(a.dtype)
        span = np.full(n, 0 if p is None else p, a.dtype)
        holes = np.ones(n, bool)
        if a.size:
            bstr = tuple(st * a.itemsize for st in es)
            np.lib.stride_tricks.as_strided(span[-lo:], a.shape, bstr)[...] = a
            np.lib.stride_tricks.as_strided(holes[-lo:], a.shape, tuple(st * holes.itemsize for st in es))[...] = False
        return span, holes, -lo


def strided(a: np.ndarray) -> Strided:
    """Pass ``a`` to the kernel as it lies in memory -- a row pitch, a sliced, stepped or
    transposed view, as a torch or CuPy caller hands it -- instead of a C-contiguous copy (what a
    plain NumPy argument gets).  The kernel receives a pointer to ``a``'s element 0 and must
    address it with the strides :func:`strides` gives (pass them as arguments).  Under the
    interpreter the bytes between the view's elements hold poison and a load there is an
    ``out-of-bounds`` finding; on the GPU they hold the same poison."""
    return a if isinstance(a, Strided) else Strided(a)


def strides(a) -> tuple:
    """The element strides of a NumPy array (or of :func:`strided`'s wrapper), for the kernel's
    arguments: ``kit.launch(k, grid, kit.strided(x), *kit.strides(x), ...)``."""
    a = a.array if isinstance(a, Strided) else a
    if any(st % a.itemsize for st in a.strides):
        raise ValueError(f"strides(a): byte strides {a.strides} are not multiples of the element size {a.itemsize}")
    return tuple(int(st) // a.itemsize for st in a.strides)


def _scalar(a):
    """A NumPy scalar as the Python scalar Triton types (np.float32 -> float, np.int64 -> int,
    np.bool_ -> bool); anything else unchanged."""
    return a.item() if isinstance(a, np.generic) else a


#: (address, bytes) of an output buffer -> (weak reference to the array owning that memory, its
#: bytes written so far): initialisation is tracked per run -- the checker hands each run a fresh
#: ``out`` -- across the launches of that run, whether they pass ``out`` or a view of the same
#: memory (``out.reshape(-1)``); a new array at a freed address starts unwritten
_RUN_WRITTEN: dict = {}


def _owner(a: np.ndarray):
    while isinstance(getattr(a, "base", None), np.ndarray):
        a = a.base
    return a


def _written_of(out: np.ndarray) -> np.ndarray:
    """The written-bytes mask of ``out``'s memory for the run that owns it (made at its first launch)."""
    key = (int(out.__array_interface__["data"][0]), int(out.nbytes))
    owner = _owner(out)
    rec = _RUN_WRITTEN.get(key)
    if rec is not None and rec[0]() is owner:
        return rec[1]
    for k in [k for k, (r, _) in _RUN_WRITTEN.items() if r() is None]:
        del _RUN_WRITTEN[k]
    w = np.zeros(out.nbytes, bool)
    try:
        _RUN_WRITTEN[key] = (weakref.ref(owner), w)
    except TypeError:               # an owner without weak references: tracked for this launch only
        pass
    return w


# ----------------------------------------------------------------------------- launches

def launch(kernel, grid, *args, out=None, what: str | None = None, num_warps: int | None = None,
           names=None, **constexprs):
    """Run ``kernel[grid](*args, **constexprs)`` and wait for it.

    ``args``: NumPy arrays (read-only input buffers, passed as C-contiguous copies), arrays
    wrapped in :func:`strided` (passed as they lie, strides and all), :func:`scratch` buffers
    (read-write work memory), Python scalars, NumPy scalars (converted to the Python scalar:
    ``np.float32`` / ``np.float64`` -> ``float``, which Triton types fp32; any integer type ->
    ``int``, typed i32, or i64 / u64 when the value needs it; ``np.bool_`` -> ``bool``), and
    :data:`OUT` for the checker's output buffer ``out`` (its contents, the poison included, are
    the initial contents of the kernel's output; the result is copied back into ``out``, which is
    returned).  Several launches with the same ``out`` in one run chain: each starts from what
    the previous one left (under the interpreter, what any launch of the run stored counts as
    written for the uninitialised-read check).  ``grid``: a
    tuple of program counts (or a callable of the kernel's arguments, as Triton takes it).
    ``num_warps`` is passed on the GPU and ignored by the interpreter (one program at a time).
    ``names``: buffer names for findings (default: the kernel's parameter names).
    Under the interpreter every load and store is checked (:mod:`.memcheck`); findings name
    ``what`` (default: the kernel's name)."""
    if out is None and any(a is OUT for a in args):
        raise ValueError("launch(..., OUT, ...) needs out= (the checker's output buffer)")
    if out is not None and not any(a is OUT for a in args):
        raise ValueError("launch(..., out=...) needs kit.OUT among the kernel arguments")
    fn = _runnable(kernel)
    what = what or kernel_name(kernel)
    pnames = names or _param_names(kernel)
    args = tuple(_scalar(a) for a in args)
    if interpreted():
        return _launch_interpreted(kernel, fn, grid, args, out, what, pnames, constexprs)
    return _launch_gpu(fn, grid, args, out, num_warps, constexprs)


def _param_names(kernel) -> list:
    import inspect
    fn = getattr(kernel, "fn", kernel)
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


def _launch_interpreted(kernel, fn, grid, args, out, what, pnames, constexprs):
    from . import memcheck
    bufs, call, keep = [], [], []
    for i, a in enumerate(args):
        name = pnames[i] if i < len(pnames) else f"arg{i}"
        if isinstance(a, Scratch):
            view, _, written = a.host()
            bufs.append(memcheck.Buffer(name, view, writable=True, output=True, written=written))
            call.append(HostArray(view, name))
            continue
        if isinstance(a, Strided):
            span, holes, first = a.span()
            view, raw = _guarded(span, max(GUARD_MIN, span.nbytes))
            keep.append(raw)
            bufs.append(memcheck.Buffer(name, view, holes=np.repeat(holes, span.itemsize), first=first,
                                        view=(a.array.shape, strides(a))))
            call.append(HostArray(view[first:], name))
            continue
        if a is OUT:
            a, is_out = out, True
        elif isinstance(a, np.ndarray):
            is_out = False
        else:
            call.append(a)
            continue
        src = np.ascontiguousarray(a)
        view, raw = _guarded(src, max(GUARD_MIN, src.nbytes))
        keep.append(raw)
        bufs.append(memcheck.Buffer(name, view, writable=is_out, output=is_out,
                                    written=_written_of(out) if is_out else None))
        call.append(HostArray(view, name))
        if is_out:
            out_view = view
    t0 = time.perf_counter()
    with memcheck.checking(what, kernel_name(kernel), bufs), _jit_calls_interpreted():
        fn[grid](*call, **constexprs)
    dt = time.perf_counter() - t0
    timing.record(lambda: dt, "interpreted kernel", simulated=True)
    if out is not None:
        out[...] = out_view.reshape(out.shape)
        return out
    return None



_flush_buf: dict = {}


def _flush_buffer(nbytes: int):
    """A zeroed int32 CUDA tensor of ``nbytes`` bytes, made once per size, for the L2 flush."""
    import torch
    if nbytes not in _flush_buf:
        _flush_buf.clear()
        _flush_buf[nbytes] = torch.zeros(nbytes // 4, dtype=torch.int32, device="cuda")
    return _flush_buf[nbytes]

def _launch_gpu(fn, grid, args, out, num_warps, constexprs):
    import torch
    call, d_out = [], None
    for a in args:
        if a is OUT:                      # the poison goes through the device
            d_out = torch.tensor(np.array(out, order="C"), device="cuda")
            call.append(d_out)
        elif isinstance(a, Scratch):
            call.append(a.device())
        elif isinstance(a, Strided):      # the span, poison between the elements; element 0's address
            span, _, first = a.span()
            call.append(torch.tensor(span, device="cuda")[first:])
        elif isinstance(a, np.ndarray):   # a copy: the checker's inputs are read-only arrays
            # np.array copies with fresh strides: ascontiguousarray keeps a size-1 array's negative
            # strides (a flipped 1x1 kernel), which torch refuses
            call.append(torch.tensor(np.array(a, order="C"), device="cuda"))
        else:
            call.append(a)
    kw = dict(constexprs)
    if num_warps is not None:
        kw["num_warps"] = int(num_warps)
    kw.setdefault("enable_fp_fusion", False)     # the specs' tap-order sums have no FMA
    if timing.active():                          # refconv bench: a cold L2, then CUDA events
        flush = timing.flush_bytes()
        if flush:       # a read (cold, clean L2: see refconv.peers' flush), as the other backends
            _flush_buffer(flush).sum()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn[grid](*call, **kw)
        end.record()
        timing.record(lambda: start.elapsed_time(end) / 1e3, "kernel")
    else:
        fn[grid](*call, **kw)
    torch.cuda.synchronize()
    if out is not None:
        out[...] = d_out.cpu().numpy().reshape(out.shape)
        return out
    return None


#: under the interpreter, the most program-steps (programs x iterations of a kernel's main loop)
#: one launch may take: the interpreter costs about a millisecond per step (Triton's semantic
#: layer, not NumPy, dominates), so variants declare larger problems / smaller blocks invalid there
#: through :func:`budget` (env ``REFCONV_TRITON_BUDGET``).  Not a limit on the GPU.
BUDGET = 512


#: CUDA's grid limits: axis 0 up to 2**31 - 1 programs, axes 1 and 2 up to 65535
GRID_LIMITS = (2**31 - 1, 65535, 65535)


def grid_fits(grid) -> str | None:
    """For a variant's ``constraint``: why a launch of ``grid`` programs exceeds CUDA's grid
    limits (:data:`GRID_LIMITS`), or None.  Checked under the interpreter too, so that a case
    drawn there is one the GPU can launch."""
    for axis, (n, limit) in enumerate(zip(grid, GRID_LIMITS)):
        if n > limit:
            return f"grid axis {axis}: {n} programs > {limit} (CUDA's limit)"
    return None


def budget(programs: int, steps: int = 1) -> str | None:
    """For a variant's ``constraint``: why ``programs`` programs of ``steps`` main-loop iterations
    each are too costly for the interpreter (None on the GPU, or when they fit)."""
    if not interpreted():
        return None
    limit = int(os.environ.get("REFCONV_TRITON_BUDGET", BUDGET))
    cost = int(programs) * max(int(steps), 1)
    if cost > limit:
        return (f"{programs} programs x {steps} steps = {cost} program-steps; the Triton interpreter runs at "
                f"most {limit} per launch (REFCONV_TRITON_BUDGET)")
    return None


def cdiv(a: int, b: int) -> int:
    """``ceil(a / b)`` for program counts."""
    return -(-int(a) // int(b))



# ----------------------------------------------------------------------------- refconv bench

def bench_copy(nbytes: int):
    """``BenchHooks.copy``: one device-to-device copy of ``nbytes`` bytes timed with CUDA events
    (on the GPU), or a host ``memcpy`` under the interpreter."""
    if interpreted():
        return timing.host_copy(nbytes)
    import torch
    src = torch.ones(max(1, int(nbytes)), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)

    def run():
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        timing.record(lambda: start.elapsed_time(end) / 1e3, "device copy")
    return run


def bench_simulated() -> str | None:
    """``BenchHooks.simulated``: why Triton times mean nothing here (None on the GPU)."""
    if interpreted():
        return "triton runs in Triton's interpreter here: its kernel times mean nothing (needs a CUDA GPU)"
    return None


#: ``refconv bench`` hooks (``Backend.bench``)
BENCH = timing.BenchHooks(copy=bench_copy, simulated=bench_simulated)


def backend_fields() -> dict:
    """The ``Backend`` fields that make a Triton backend follow ``--triton``:
    ``Backend(name=..., variants=..., **refconv.triton.backend_fields())``."""
    return {"available": available, "options": (OPTION,), "configure": configure,
            "describe": describe, "target": target, "bench": BENCH, "versions": ("triton",),
            "real_target": "--triton gpu, on a machine with a CUDA GPU"}
