"""The memory checker of Triton's interpreter: every load and store of a kernel launched through
:func:`refconv.tooling.triton.kit.launch` is checked against the buffers passed to it.

It wraps the interpreter's builder (``triton.runtime.interpreter.interpreter_builder``:
``create_masked_load`` / ``create_masked_store``, which ``tl.load`` / ``tl.store`` reach with or
without a mask) for the duration of one launch.  For every access, the lanes whose mask is on
must address bytes inside one of the launch's buffers; lanes masked off are never checked (a
masked tail is the correct idiom).  Findings (through :func:`refconv.findings.report`, so they
fail the example being checked):

* ``out-of-bounds`` -- an active lane outside every buffer: the buffer the pointer was derived
  from (tracked through pointer additions; the nearest buffer where that was lost), the element index
  it would be (negative, or past the end), the load or store, the kernel, program id and the
  kernel's source line.  The access is *not* performed (the lane is masked off: a load gives its
  ``other``, or poison), so a bad kernel can neither corrupt the process nor crash it.  A load
  between the elements of a strided view (:func:`refconv.tooling.triton.kit.strided`: a row
  pitch's padding, elements a step skips) is ``out-of-bounds`` too;
* ``write-to-input`` -- a store into an input buffer (they are read-only; masked off too);
* ``uninitialized-read`` -- a load from the output buffer (or a scratch buffer) of bytes no
  launch of the run has written yet (the checker's poison): the written bytes are tracked per
  buffer across the launches of one run.

The kit gives every masked load without ``other=`` it can see a poison ``other=`` before the
kernel runs, on both targets (:mod:`._rewrite`); a load it cannot see (a helper reached through
an attribute, ``**kwargs``, a kernel whose source cannot be read) still reaches the builder
without ``other``, and its masked-off lanes get the same poison here (:func:`poison`: NaN for
floats, the bytes 0xA5 for integers) where the plain interpreter gives 0: Triton defines them
as undefined, so a kernel whose result depends on them fails every run (a kernel that never
uses them is unaffected).

One finding per (class, load/store, buffer, line), with the number of lanes and programs.  Under
the interpreter the builder also emulates the GPU's ``tl.dot`` default: operands of a dot whose
``input_precision`` is ``tf32`` (Triton's default for float32) are rounded to TF32 (10 mantissa
bits, round to nearest, ties away), as the tensor cores see them, so a kernel that needs
``input_precision="ieee"`` fails here as it would on the GPU.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from refconv import findings

from . import _rewrite


@dataclass
class Buffer:
    """One buffer of a launch: ``array`` is the memory the kernel sees.

    ``output``: reads of bytes not yet ``written`` (one bool per byte of ``array``; the kit passes
    the same array to every launch of a run on that buffer, so initialisation is tracked across
    launches) are ``uninitialized-read``.  ``holes`` (one bool per byte, or None): the bytes of a
    strided view's span that are no element of the view (a row pitch's padding, the elements a
    step skips); an access there is ``out-of-bounds``.  ``first``: the element offset of the
    view's first element in ``array``; ``view``: its ``(shape, element strides)``, for messages."""

    name: str
    array: np.ndarray
    writable: bool = False
    output: bool = False
    written: np.ndarray | None = field(default=None, repr=False)
    holes: np.ndarray | None = field(default=None, repr=False)
    first: int = 0
    view: tuple = ()

    def __post_init__(self):
        self.base = int(self.array.ctypes.data)
        self.end = self.base + int(self.array.nbytes)
        if self.output and self.written is None:
            self.written = np.zeros(self.array.nbytes, bool)


_HERE = os.path.dirname(os.path.abspath(__file__))


def _source_line():
    """(file, line, function) of the innermost frame in kernel code (outside triton, numpy and
    this package's kit), or None."""
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not (fn.startswith(_TRITON_DIR) or fn.startswith(_NUMPY_DIR) or fn in _SKIP_FILES):
            # a kernel rewritten by the kit (undefined lanes poisoned) keeps its lines: its file's name
            return os.path.basename(_rewrite.original_file(fn)), f.f_lineno, f.f_code.co_name
        f = f.f_back
    return None


_TRITON_DIR = _NUMPY_DIR = "\0"
_SKIP_FILES = {os.path.join(_HERE, "memcheck.py"), os.path.join(_HERE, "kit.py"), os.path.join(_HERE, "_rewrite.py"),
               contextlib.__file__}


class _Launch:
    def __init__(self, what, kernel, bufs):
        self.what, self.kernel, self.bufs = what, kernel, bufs
        self.found = {}

    def classify(self, addr, active, size):
        """(buffer index per lane, -1 outside every buffer) of the active lanes."""
        which = np.full(addr.shape, -1, np.int64)
        for i, b in enumerate(self.bufs):
            inside = (addr >= b.base) & (addr + size <= b.end)
            which[inside & active] = i
        return which

    def nearest(self, a):
        best, dist = None, None
        for b in self.bufs:
            d = b.base - a if a < b.base else (a - b.end + 1 if a >= b.end else 0)
            if dist is None or d < dist:
                best, dist = b, d
        return best

    def note(self, cls, op, buf, index, pid, lanes):
        src = _source_line()
        line = f"{src[0]}:{src[1]}" if src else "?"
        key = (cls, op, buf.name, line)
        rec = self.found.get(key)
        if rec is None:
            self.found[key] = {"first": (pid, index, src), "lanes": lanes, "programs": {pid}, "buf": buf}
        else:
            rec["lanes"] += lanes
            rec["programs"].add(pid)

    def report(self):
        for (cls, op, name, line), rec in self.found.items():
            pid, index, src = rec["first"]
            b = rec["buf"]
            n = b.array.size
            what = {"out-of-bounds": f"out-of-bounds {op} of {name}[{index}] ({name} has {n} elements)",
                    "gap": f"{op} of {name} at element offset {index} from its first element, between the "
                           f"elements of its strided view (shape {b.view[0] if b.view else '?'}, element "
                           f"strides {b.view[1] if b.view else '?'}): the kernel ignores the strides it was given",
                    "write-to-input": f"store into input buffer {name}[{index}] (inputs are read-only)",
                    "uninitialized-read": f"load of {name}[{index}] before the run wrote it "
                                          f"(uninitialised output or scratch memory)"}[cls]
            msg = (f"{self.what}: {what} in kernel {self.kernel}, program {pid}, line {line}; "
                   f"{rec['lanes']} lane(s) in {len(rec['programs'])} program(s)")
            findings.report("out-of-bounds" if cls == "gap" else cls, msg, kernel=self.kernel, program=list(pid),
                            line=line, array=name, index=int(index), access=op)


def _element_bytes(ptrs) -> int:
    return max(1, ptrs.get_element_ty().primitive_bitwidth // 8)


#: what a masked-off lane of a ``tl.load`` without ``other=`` reads under the checker, by dtype
#: kind: a quiet NaN for floats; for integers the byte 0xA5 repeated (uint8 165, int32
#: -1515870811, ...): a value no sum of the lane hides, where the plain interpreter gives 0
POISON_BYTE = 0xA5


def poison(dtype) -> np.ndarray:
    """The 0-d poison of ``dtype`` (see :data:`POISON_BYTE`); None for bool (no loud value)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.array(np.nan, dtype)
    if dtype.kind in "iu":
        return np.frombuffer(bytes([POISON_BYTE]) * dtype.itemsize, dtype)[0].copy()
    return None


def _poison_handle(ti, ptrs):
    """The ``other`` operand of an interpreted load without ``other=``: poison in every lane
    (None where the element type has none: bool, pointers -- the interpreter's zeros then)."""
    ty = ptrs.get_element_ty()
    if getattr(ty, "is_ptr", lambda: False)():
        return None
    try:
        dt = ti._get_np_dtype(ty)
    except Exception:               # noqa: BLE001 - a type without a NumPy twin: leave it to triton
        return None
    p = poison(dt)
    if p is None:
        return None
    return ti.TensorHandle(np.full(np.shape(ptrs.data), p, dt), ty)


def _round_tf32(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to TF32 (10 explicit mantissa bits), ties away from zero; NaN and
    Inf unchanged."""
    x = np.ascontiguousarray(x, np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(x), r, x).astype(np.float32)


def _check(run, bufs: list, ptrs, mask, op: str, pid) -> np.ndarray:
    """One interpreted load or store: per lane, the index of the buffer it falls in, ``-1`` for a
    lane not to perform.  Active lanes in no buffer are ``out-of-bounds``; for a store, lanes into
    an input are ``write-to-input`` and the bytes of output it writes are marked written; for a
    load, lanes reading output bytes never written are ``uninitialized-read`` (``pid()``: the
    program id, for the findings)."""
    addr = np.asarray(ptrs.data).astype(np.uint64, copy=False)
    active = np.broadcast_to(np.asarray(mask.data, bool), addr.shape)
    size = _element_bytes(ptrs)
    which = run.classify(addr, active, size)
    bad = active & (which < 0)
    if bad.any():
        lanes = np.flatnonzero(bad.reshape(-1))
        a = int(addr.reshape(-1)[lanes[0]])
        buf = getattr(ptrs, "_rc_buf", None) or run.nearest(a)
        run.note("out-of-bounds", op, buf, (a - buf.base) // buf.array.itemsize, pid(), int(lanes.size))
    if op == "store":
        return _stored(run, bufs, addr, which, size, pid)
    _loaded(run, bufs, addr, which, size, pid)
    return which


def _stored(run, bufs: list, addr, which, size: int, pid):
    """A store's lanes: into an input, noted and not performed (``-1``); into output, marked written."""
    for i, buf in enumerate(bufs):
        sel = which == i
        if not sel.any():
            continue
        if not buf.writable:
            a = int(addr[sel].reshape(-1)[0])
            run.note("write-to-input", "store", buf, (a - buf.base) // buf.array.itemsize, pid(), int(sel.sum()))
            which = np.where(sel, -1, which)
        elif buf.written is not None:
            off = (addr[sel] - np.uint64(buf.base)).astype(np.int64)
            for k in range(size):
                buf.written[off + k] = True
    return which


def _loaded(run, bufs: list, addr, which, size: int, pid) -> None:
    """A load's lanes reading output bytes never written: one ``uninitialized-read`` per buffer;
    lanes in the gaps of a strided view: ``out-of-bounds`` (class ``gap`` here)."""
    for i, buf in enumerate(bufs):
        if buf.written is None and buf.holes is None:
            continue
        sel = which == i
        if not sel.any():
            continue
        off = (addr[sel] - np.uint64(buf.base)).astype(np.int64)
        if buf.holes is not None:
            gap = np.zeros(off.shape, bool)
            for k in range(size):
                gap |= buf.holes[off + k]
            if gap.any():
                run.note("gap", "load", buf, int(off[gap][0]) // buf.array.itemsize - buf.first, pid(),
                         int(gap.sum()))
            continue
        unw = np.zeros(off.shape, bool)
        for k in range(size):
            unw |= ~buf.written[off + k]
        if unw.any():
            run.note("uninitialized-read", "load", buf, int(off[unw][0]) // buf.array.itemsize, pid(),
                     int(unw.sum()))


@contextlib.contextmanager
def checking(what: str, kernel: str, bufs: list):
    """Check the loads and stores of the interpreted launch inside the block against ``bufs``."""
    global _TRITON_DIR, _NUMPY_DIR
    import triton
    import triton.language as tl
    from triton.runtime import interpreter as ti

    _TRITON_DIR = os.path.dirname(os.path.abspath(triton.__file__))
    _NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))
    b = ti.interpreter_builder
    cls = type(b)
    run = _Launch(what, kernel, bufs)

    def pid():
        return tuple(int(v) for v in b.grid_idx)

    def check(ptrs, mask, op):
        return ti.TensorHandle(_check(run, bufs, ptrs, mask, op, pid) >= 0, tl.int1)

    # (the trailing arguments -- cache and eviction policies, volatility -- differ between versions)
    def addptr(ptr, offset):
        # provenance: the buffer a pointer was derived from (its base lanes inside it, or the tag
        # of the pointer it was derived from), so that a far address names the right buffer
        out = cls.create_addptr(b, ptr, offset)
        tag = getattr(ptr, "_rc_buf", None)
        if tag is None:
            base = np.asarray(ptr.data).reshape(-1)
            if base.size:
                lo, hi = int(base.min()), int(base.max())
                tag = next((buf for buf in bufs if buf.base <= lo and hi <= buf.end), None)
        if tag is not None:
            out._rc_buf = tag
        return out

    def masked_load(ptrs, mask, other=None, *rest, **kw):
        mask = check(ptrs, mask, "load")
        if other is None:     # no other=: the lanes masked off are undefined in Triton; poison them
            other = _poison_handle(ti, ptrs)
        return cls.create_masked_load(b, ptrs, mask, other, *rest, **kw)

    def masked_store(ptrs, value, mask, *rest, **kw):
        mask = check(ptrs, mask, "store")
        return cls.create_masked_store(b, ptrs, value, mask, *rest, **kw)

    def dot(a, b_, d, input_precision, *rest, **kw):
        if "TF32" in str(input_precision).upper() and "X3" not in str(input_precision).upper() \
                and a.dtype.scalar == tl.float32 and b_.dtype.scalar == tl.float32:
            a = ti.TensorHandle(_round_tf32(a.data), a.dtype.scalar)
            b_ = ti.TensorHandle(_round_tf32(b_.data), b_.dtype.scalar)
        return cls.create_dot(b, a, b_, d, input_precision, *rest, **kw)

    patched = {"create_masked_load": masked_load, "create_masked_store": masked_store, "create_dot": dot,
               "create_addptr": addptr}
    for k, v in patched.items():
        setattr(b, k, v)
    # the interpreter's integer overflow check computes every add / mul / sub twice and its
    # device_assert never fires there (issue 25): off, for half the interpreter's cost
    options = b.options
    if getattr(options, "sanitize_overflow", False):
        b.options = dataclasses.replace(options, sanitize_overflow=False)
    try:
        yield run
    finally:
        b.options = options
        for k in patched:
            b.__dict__.pop(k, None)
        run.report()
