"""kron on OpenCL (seed 003): one launch per element of A with row-block copies to the host, a
single launch, and row blocks streamed to the checker's RowSink (output="rows")."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling import opencl as oc

SRC, SRC_NAME = oc.package_source("kron.cl", __package__), "kron.cl"

ORIGIN = "seed 003 (Kronecker product of large dense matrices on the GPU)"
SUPPORTS = {"dtype": ("float64", "float32", "int32", "uint8"), "m": Range(1), "n": Range(1),
            "p": Range(1), "q": Range(1)}
_T = {"float64": ("double", None), "float32": ("float", None), "int32": ("int", "uint"), "uint8": ("uchar", "uint")}
WG = (Param("wg_x", (1, 2, 4, 8, 16, 32), 32), Param("wg_y", (1, 2, 4, 8, 16, 32), 32))


def _opts(dtype):
    t, ut = _T[np.dtype(dtype).name]
    o = (f"-DT={t}",) + ((f"-DUT={ut}",) if ut else ())
    if t == "double":
        oc.require_fp64()
    return o


def _host_out(out):
    """``out`` itself when the device copy can land in it directly (C-contiguous, a memmap too)."""
    return out if out.flags.c_contiguous else np.ascontiguousarray(out)


def _run_block_launches(problem, out, wg_x=32, wg_y=32):
    import pyopencl as cl
    e = oc.env()
    a, b = (np.ascontiguousarray(problem.inputs[x]) for x in "ab")
    (m, n), (p, q) = a.shape, b.shape
    host = _host_out(out)
    k = oc.kernel(SRC, "block", _opts(a.dtype), SRC_NAME)
    ab, bb = oc.to_device(a), oc.to_device(b)
    rowblk = oc.scratch(p * n * q * a.dtype.itemsize)
    with oc.diagnosed("kron/opencl/block_launches", SRC_NAME):
        for i in range(m):
            dst = host[i * p:(i + 1) * p]
            cl.enqueue_copy(e.queue, rowblk, dst)           # the poison goes through the device
            for j in range(n):
                oc.timed(k)(e.queue, (oc.roundup(q, wg_x), oc.roundup(p, wg_y)), (wg_x, wg_y),
                            ab, bb, rowblk, *map(np.int32, (n, p, q, i, j)))
            cl.enqueue_copy(e.queue, dst, rowblk)           # blocking: row-block i to the host
    if host is not out:
        out[...] = host
    return out


#: rows of C per work-item in ``whole`` (single_launch) and ``rowblock`` (streamed): the column's
#: division is paid once per this many elements
ROWS_PER_ITEM = 16


def _run_single(problem, out, wg_x=32, wg_y=32):
    a, b = (np.ascontiguousarray(problem.inputs[x]) for x in "ab")
    (m, n), (p, q) = a.shape, b.shape
    k = oc.kernel(SRC, "whole", _opts(a.dtype), SRC_NAME)
    gy = oc.roundup(-(-m * p // ROWS_PER_ITEM), wg_y)
    return oc.launch(k, (oc.roundup(n * q, wg_x), gy), (wg_x, wg_y),
                     oc.to_device(a), oc.to_device(b), oc.OUT, *map(np.int32, (m, n, p, q)),
                     out=out, what="kron/opencl/single_launch")


def _run_streamed(problem, out, wg_x=32, wg_y=32):
    """``out`` is a :class:`refconv.sink.RowSink`: one launch per row of A into one of two device
    row-block buffers (p rows of C each); each is copied to a host staging block and handed to
    ``out.write`` while the next launch runs.  Neither the device nor the host holds C."""
    import pyopencl as cl
    e = oc.env()
    a, b = (np.ascontiguousarray(problem.inputs[x]) for x in "ab")
    (m, n), (p, q) = a.shape, b.shape
    k = oc.kernel(SRC, "rowblock", _opts(a.dtype), SRC_NAME)
    ab, bb = oc.to_device(a), oc.to_device(b)
    stage = [out.poisoned(p), out.poisoned(p)]                   # poisoned host staging blocks
    bufs = [oc.scratch(stage[0].nbytes), oc.scratch(stage[1].nbytes)]     # double buffer
    pending = [None, None]
    with oc.diagnosed("kron/opencl/streamed", SRC_NAME):
        for i in range(m + 1):
            s = i % 2
            if pending[s] is not None:                           # block i-2 has landed: hand it over
                pending[s].wait()
                out.write((i - 2) * p, stage[s])
                pending[s] = None
            if i < m:
                cl.enqueue_copy(e.queue, bufs[s], stage[s], is_blocking=False)
                oc.timed(k)(e.queue, (oc.roundup(n * q, wg_x), oc.roundup(-(-p // ROWS_PER_ITEM), wg_y)),
                            (wg_x, wg_y), ab, bb, bufs[s], *map(np.int32, (n, p, q, i)))
                pending[s] = cl.enqueue_copy(e.queue, stage[s], bufs[s], is_blocking=False)
        s = (m + 1) % 2
        if pending[s] is not None:
            pending[s].wait()
            out.write((m - 1) * p, stage[s])


def _constraint(kname):
    def constraint(problem, params):
        d = problem.dims
        rows = 2 * d["p"] if kname == "rowblock" else d["m"] * d["p"]   # streamed: two row-blocks
        return (oc.check_local((params["wg_x"], params["wg_y"]), 0, (SRC, kname, _opts(d["dtype"]), SRC_NAME))
                or oc.fits_memory(problem, rows * d["n"] * d["q"] * np.dtype(d["dtype"]).itemsize))
    return constraint


def variants():
    available = oc.available
    mk = lambda name, run, kname, doc, output="array": Variant(
        op="kron", backend="opencl", name=name, run=run, supports=SUPPORTS, params=WG,
        available=available, writes="all", output=output, constraint=_constraint(kname), origin=ORIGIN,
        doc=doc)
    return [
        mk("block_launches", _run_block_launches, "block",
           "one launch per element (i, j) of A computing its p x q block into a p x n*q row-block "
           "buffer; after each row of A the row-block is copied to the host (the paper's Algorithm 2)"),
        mk("single_launch", _run_single, "whole", "one launch over the whole (m*p) x (n*q) output"),
        mk("streamed", _run_streamed, "rowblock",
           "one launch per row of A into one of two device row-block buffers, each copied "
           "(non-blocking, in order) to the host and handed to the checker's RowSink", output="rows"),
    ]
