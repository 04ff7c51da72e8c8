"""Device buffers for refconv's OpenCL tooling: read-only inputs, scratch, and the output buffer
that starts as a copy of the checker's poisoned ``out`` (so elements a kernel never writes come
back holding the poison), plus the memory fit a ``constraint`` needs."""
from __future__ import annotations

import contextlib

import numpy as np


def roundup(n: int, m: int) -> int:
    """``n`` rounded up to a multiple of ``m`` (at least ``m``): a global size for work-groups of ``m``."""
    return max(m, (n + m - 1) // m * m)


def in_buf(e, a):
    """A read-only device buffer holding a copy of host array ``a`` (one element for an empty one)."""
    import pyopencl as cl
    a = np.ascontiguousarray(a)
    if a.nbytes == 0:
        a = np.zeros(1, a.dtype)
    return cl.Buffer(e.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)


def upload(e, buf, a: np.ndarray) -> None:
    """Copy the contiguous host array ``a`` into device buffer ``buf`` (blocking: the host may free ``a``)."""
    import pyopencl as cl
    cl.enqueue_copy(e.queue, buf, a, is_blocking=True)


def scratch(e, nbytes: int):
    """An uninitialised read-write device buffer of ``nbytes`` bytes (at least 4)."""
    import pyopencl as cl
    return cl.Buffer(e.ctx, cl.mem_flags.READ_WRITE, size=max(4, int(nbytes)))


@contextlib.contextmanager
def out_buf(e, out: np.ndarray, reuse=None):
    """A device buffer initialised FROM the caller's (poisoned) output array; when the block ends
    without an exception the device contents are read back into ``out`` (through a contiguous
    copy if ``out`` is not C-contiguous), so elements the kernel does not write keep their poison.
    ``reuse(nbytes)``: an existing READ_WRITE allocation of that size to upload into (None: a
    fresh buffer)."""
    import pyopencl as cl
    host = out if out.flags.c_contiguous else np.ascontiguousarray(out)
    if reuse is None or host.nbytes == 0:
        buf = cl.Buffer(e.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    else:
        buf = reuse(host.nbytes)
        upload(e, buf, host)
    yield buf
    cl.enqueue_copy(e.queue, host, buf).wait()
    if host is not out:
        out[...] = host


def fits_memory(e, problem, out_bytes: int) -> str | None:
    """Why the problem's buffers (each input, and ``out_bytes`` of output / scratch) do not fit
    the device: one larger than ``max_mem_alloc_size``, or all together above 90% of
    ``global_mem_size`` (None if they fit)."""
    from refconv import ops
    d = e.device
    od = ops.get(problem.op)
    sizes = [int(np.prod(shape, dtype=np.int64)) * od.input_dtype(name, problem.dims).itemsize
             for name, shape in problem.input_shapes().items()] + [int(out_bytes)]
    big = max(sizes)
    if big > d.max_mem_alloc_size:
        return f"a {big / 2**30:.2f} GiB buffer > max_mem_alloc_size {d.max_mem_alloc_size / 2**30:.2f} GiB on {e.target}"
    if sum(sizes) > 0.9 * d.global_mem_size:
        return f"{sum(sizes) / 2**30:.2f} GiB of buffers > 90% of {d.global_mem_size / 2**30:.2f} GiB on {e.target}"
    return None
