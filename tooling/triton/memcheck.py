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
  kernel's source line.  The access is *not* performed (the lane is masked off: a load gives 0),
  so a bad kernel can neither corrupt the process nor crash it;
* ``write-to-input`` -- a store into an input buffer (they are read-only; masked off too);
* ``uninitialized-read`` -- a load from the output buffer of bytes the kernel has not written
  in this launch (the checker's poison).

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


@dataclass
class Buffer:
    """One buffer of a launch: ``array`` is the memory the kernel sees."""

    name: str
    array: np.ndarray
    writable: bool = False
    output: bool = False
    written: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        self.base = int(self.array.ctypes.data)
        self.end = self.base + int(self.array.nbytes)
        if self.output:
            self.written = np.zeros(self.array.nbytes, bool)


_HERE = os.path.dirname(os.path.abspath(__file__))


def _source_line():
    """(file, line, function) of the innermost frame in kernel code (outside triton, numpy and
    this package's kit), or None."""
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not (fn.startswith(_TRITON_DIR) or fn.startswith(_NUMPY_DIR) or fn in _SKIP_FILES):
            return os.path.basename(fn), f.f_lineno, f.f_code.co_name
        f = f.f_back
    return None


_TRITON_DIR = _NUMPY_DIR = "\0"
_SKIP_FILES = {os.path.join(_HERE, "memcheck.py"), os.path.join(_HERE, "kit.py"), contextlib.__file__}


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
                    "write-to-input": f"store into input buffer {name}[{index}] (inputs are read-only)",
                    "uninitialized-read": f"load of {name}[{index}] before the kernel wrote it "
                                          f"(uninitialised output memory)"}[cls]
            msg = (f"{self.what}: {what} in kernel {self.kernel}, program {pid}, line {line}; "
                   f"{rec['lanes']} lane(s) in {len(rec['programs'])} program(s)")
            findings.report(cls, msg, kernel=self.kernel, program=list(pid), line=line, array=name,
                            index=int(index), access=op)


def _element_bytes(ptrs) -> int:
    return max(1, ptrs.get_element_ty().primitive_bitwidth // 8)


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
    """A load's lanes reading output bytes never written: one ``uninitialized-read`` per buffer."""
    for i, buf in enumerate(bufs):
        if buf.written is None:
            continue
        sel = which == i
        if not sel.any():
            continue
        off = (addr[sel] - np.uint64(buf.base)).astype(np.int64)
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

    def masked_load(ptrs, mask, *rest, **kw):
        mask = check(ptrs, mask, "load")
        return cls.create_masked_load(b, ptrs, mask, *rest, **kw)

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
