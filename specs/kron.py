"""``kron`` / ``kron_blocks``: Kronecker product of two matrices, whole or streamed by row blocks."""
from __future__ import annotations

import numpy as np

from ._validate import as_array, dtype_name, integer


def resolve(a, b):
    op = "kron"
    a = as_array("a", a, ndims=2, op=op)
    b = as_array("b", b, ndims=2, op=op)
    for name, x in (("a", a), ("b", b)):
        if x.dtype.kind not in "uif":
            raise TypeError(f"{op}: {name} has dtype {x.dtype.name}; accepted: a real numeric dtype "
                            f"(signed/unsigned integer or float)")
    if a.dtype != b.dtype:
        raise TypeError(f"{op}: b has dtype {b.dtype.name} but a has {a.dtype.name}; accepted: the same dtype")
    return a, b


def kron(a, b):
    r"""Kronecker product: ``a`` ``(m, n)``, ``b`` ``(p, q)`` -> ``(m*p, n*q)``::

        out[i*p + k, j*q + l] = a[i, j] * b[k, l]

    ``a`` and ``b`` have the same real dtype (any integer or float), which is the result dtype.
    Each element is one product: exact for integers (modulo ``2**bits``: products wrap as NumPy
    integer multiplication does, no error) and one correctly rounded product for floats (so every
    conforming implementation gives the same bits; NaN/Inf as IEEE).  Empty inputs give an empty
    result.
    """
    a, b = resolve(a, b)
    m, n = a.shape
    p, q = b.shape
    with np.errstate(all="ignore"):
        return (a[:, None, :, None] * b[None, :, None, :]).reshape(m * p, n * q)


def kron_rows(a, b, start, stop):
    """Rows ``start .. stop-1`` of ``kron(a, b)``, computed without forming the whole product
    (``0 <= start <= stop <= m*p``)."""
    a, b = resolve(a, b)
    p = b.shape[0]
    total = a.shape[0] * p
    start = integer("start", start, lo=0, hi=total, op="kron_rows")
    stop = integer("stop", stop, lo=start, hi=total, op="kron_rows")
    return _rows(a, b, start, stop)


def _rows(a, b, r0, r1):
    p = b.shape[0]
    ri = np.arange(r0, r1)
    with np.errstate(all="ignore"):
        return (a[ri // p][:, :, None] * b[ri % p][:, None, :]).reshape(r1 - r0, a.shape[1] * b.shape[1])


def kron_blocks(a, b, rows, *, out=None):
    r"""Stream ``kron(a, b)`` by row blocks: a generator of ``(row_start, block)`` with
    ``block == kron(a, b)[row_start:row_start + len(block)]``, at most ``rows`` rows each, in
    increasing order, covering all ``m*p`` rows (so a result larger than memory can be produced
    block by block, as the Kronecker paper streams row blocks of n x n^2 to the host).

    ``rows``: int >= 1.  ``out``: None, or an array (e.g. a ``numpy.memmap``) of exactly the full
    shape ``(m*p, n*q)`` and dtype (native byte order), writable; each block is then written into
    ``out[row_start:row_start+len]`` and the yielded block is that view.  Arguments are validated
    when the generator is created (not at the first ``next``).
    """
    a, b = resolve(a, b)
    rows = integer("rows", rows, lo=1, op="kron_blocks")
    m, n = a.shape
    p, q = b.shape
    shape = (m * p, n * q)
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"kron_blocks: out must be a numpy array (or memmap), got {type(out).__name__}")
        if out.shape != shape or out.dtype != a.dtype:
            raise ValueError(f"kron_blocks: out has shape {out.shape} and dtype {dtype_name(out.dtype)}; "
                             f"accepted: shape {shape} and dtype {dtype_name(a.dtype)}")
        if not out.flags.writeable:
            raise ValueError(f"kron_blocks: out (shape {out.shape}, dtype {dtype_name(out.dtype)}) is "
                             f"read-only; accepted: a writable array")

    def gen():
        with np.errstate(all="ignore"):
            for r0 in range(0, shape[0], rows):
                r1 = min(r0 + rows, shape[0])
                blk = _rows(a, b, r0, r1)
                if out is not None:
                    out[r0:r1] = blk
                    blk = out[r0:r1]
                yield r0, blk

    return gen()
