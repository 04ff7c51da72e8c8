"""kron on OpenCL (seed 003): one launch per element of A with row-block copies to the host, a
single launch, and row blocks streamed to the checker's RowSink (output="rows").

The twins of ``kron/numba_cuda/*``: the same kernels (``kron.cl``) over the same launches and
default shapes (block_launches: 32 x 32 work-groups over B, one launch per element of A;
single_launch: 32 x 8 work-groups, about :data:`ROWS_PER_ITEM` rows a work-item; streamed:
``rows_per_block`` rows of C a launch, 1024 by default, in 32 x 8 work-groups), so that ``refconv
bench`` compares the two backends on the same work.  The kernels take the sizes in one
``__constant int`` buffer and at most two scalars (:func:`_sizes`)."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling import opencl as oc

SRC, SRC_NAME = oc.package_source("kron.cl", __package__), "kron.cl"

ORIGIN = "seed 003 (Kronecker product of large dense matrices on the GPU)"
SUPPORTS = {"dtype": ("float64", "float32", "int32", "uint8"), "m": Range(1), "n": Range(1),
            "p": Range(1), "q": Range(1)}
_T = {"float64": ("double", None), "float32": ("float", None), "int32": ("int", "uint"), "uint8": ("uchar", "uint")}
_WG_X = (1, 2, 4, 8, 16, 32)
_WG_Y = (1, 2, 4, 8, 16, 32)


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
    ab, bb, sizes = oc.to_device(a), oc.to_device(b), _sizes(n, p, q)
    rowblk = oc.scratch(p * n * q * a.dtype.itemsize)
    with oc.diagnosed("kron/opencl/block_launches", SRC_NAME):
        for i in range(m):
            dst = host[i * p:(i + 1) * p]
            cl.enqueue_copy(e.queue, rowblk, dst)           # the poison goes through the device
            for j in range(n):
                oc.timed(k)(e.queue, (oc.roundup(q, wg_x), oc.roundup(p, wg_y)), (wg_x, wg_y),
                            ab, bb, rowblk, sizes, np.int32(i), np.int32(j))
            cl.enqueue_copy(e.queue, dst, rowblk)           # blocking: row-block i to the host
    if host is not out:
        out[...] = host
    return out


def _sizes(n, p, q):
    """``n, p, q`` as one ``__constant int`` buffer (uploaded once per run).  NVIDIA's OpenCL
    charges a launch with more than two scalar arguments a few microseconds more inside its
    profiling interval, where a buffer costs nothing extra (lab/probes/gpu_opencl_launch_probe.py);
    block_launches pays that on each of its m*n launches and streamed on each row block, while
    the Numba twin's CUDA launches never do."""
    return oc.int_constants((n, p, q))


#: rows of C per work-item in ``rows`` (single_launch, streamed): the column's division is paid
#: once per this many elements (the Numba twin's ``ROWS_PER_THREAD``)
ROWS_PER_ITEM = 16


def _rows_global(nrows: int, wg_y: int) -> int:
    """The global y size for ``nrows`` rows: about ROWS_PER_ITEM rows a work-item, at most 65535
    work-groups (the Numba twin's grid, whose y extent CUDA caps at 65535 blocks)."""
    return wg_y * min(max(1, -(-nrows // (wg_y * ROWS_PER_ITEM))), 65535)


def _run_single(problem, out, wg_x=32, wg_y=8):
    a, b = (np.ascontiguousarray(problem.inputs[x]) for x in "ab")
    (m, n), (p, q) = a.shape, b.shape
    k = oc.kernel(SRC, "rows", _opts(a.dtype), SRC_NAME)
    return oc.launch(k, (oc.roundup(n * q, wg_x), _rows_global(m * p, wg_y)), (wg_x, wg_y),
                     oc.to_device(a), oc.to_device(b), oc.OUT, _sizes(n, p, q), np.int32(0), np.int32(m * p),
                     out=out, what="kron/opencl/single_launch")


def _run_streamed(problem, out, rows_per_block=1024, wg_x=32, wg_y=8):
    """``out`` is a :class:`refconv.sink.RowSink`: one launch per block of ``rows_per_block`` rows of
    C into one of two device buffers, each filled with the poison first (a device fill, so an
    element the kernel never writes comes back poisoned), copied to a host staging block and
    handed to ``out.write`` while the next launch runs.  Neither the device nor the host holds C."""
    import pyopencl as cl
    e = oc.env()
    a, b = (np.ascontiguousarray(problem.inputs[x]) for x in "ab")
    (m, n), (p, q) = a.shape, b.shape
    k = oc.kernel(SRC, "rows", _opts(a.dtype), SRC_NAME)
    ab, bb, sizes = oc.to_device(a), oc.to_device(b), _sizes(n, p, q)
    rows, rb = m * p, max(1, min(rows_per_block, m * p))
    poison = out.poisoned(1)[0, :1].copy()                       # the fill pattern: one element
    stage = [out.poisoned(rb), out.poisoned(rb)]                 # host staging blocks
    bufs = [oc.scratch(stage[0].nbytes), oc.scratch(stage[1].nbytes)]     # double buffer
    pending = [None, None]                                       # (copy event, row0, nrows)
    with oc.diagnosed("kron/opencl/streamed", SRC_NAME):
        for blk, r0 in enumerate(list(range(0, rows, rb)) + [None, None]):
            s = blk % 2
            if pending[s] is not None:                           # block blk-2 has landed: hand it over
                ev, q0, nr0 = pending[s]
                ev.wait()
                out.write(q0, stage[s][:nr0])
                pending[s] = None
            if r0 is None:
                continue
            nr = min(rb, rows - r0)
            cl.enqueue_fill_buffer(e.queue, bufs[s], poison, 0, nr * n * q * a.dtype.itemsize)
            oc.timed(k)(e.queue, (oc.roundup(n * q, wg_x), _rows_global(nr, wg_y)), (wg_x, wg_y),
                        ab, bb, bufs[s], sizes, np.int32(r0), np.int32(nr))
            pending[s] = (cl.enqueue_copy(e.queue, stage[s][:nr], bufs[s], is_blocking=False), r0, nr)


def _constraint(kname, output="array"):
    def constraint(problem, params):
        d = problem.dims
        if output == "rows":                                    # streamed: two blocks of rows_per_block rows
            rows = 2 * max(1, min(params.get("rows_per_block", 1024), d["m"] * d["p"]))
        else:
            rows = d["m"] * d["p"]
        return (oc.check_local((params["wg_x"], params["wg_y"]), 0, (SRC, kname, _opts(d["dtype"]), SRC_NAME))
                or oc.fits_memory(problem, rows * d["n"] * d["q"] * np.dtype(d["dtype"]).itemsize))
    return constraint


def variants():
    available = oc.available
    wg = lambda y: (Param("wg_x", _WG_X, 32), Param("wg_y", _WG_Y, y))
    mk = lambda name, run, kname, params, doc, output="array": Variant(
        op="kron", backend="opencl", name=name, run=run, supports=SUPPORTS, params=params,
        available=available, writes="all", output=output, constraint=_constraint(kname, output), origin=ORIGIN,
        doc=doc)
    return [
        mk("block_launches", _run_block_launches, "block", wg(32),
           "one launch per element (i, j) of A computing its p x q block into a p x n*q row-block "
           "buffer; after each row of A the row-block is copied to the host (the paper's Algorithm 2); "
           "32 x 32 work-groups, the Numba twin's blocks"),
        mk("single_launch", _run_single, "rows", wg(8),
           "one launch over the whole (m*p) x (n*q) output: a work-item per column and every "
           "(global y)-th row, about 16 rows each; 32 x 8 work-groups, the Numba twin's blocks"),
        mk("streamed", _run_streamed, "rows", (Param("rows_per_block", (1, 2, 3, 4, 8, 16, 256, 1024), 1024),) + wg(8),
           "rows_per_block rows of C a launch into one of two device buffers, each copied (non-blocking, "
           "in order) to the host and handed to the checker's RowSink; the Numba twin's blocks of 1024 "
           "rows and 32 x 8 work-groups", output="rows"),
    ]
