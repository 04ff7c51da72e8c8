"""``kron`` / ``kron_blocks``: Kronecker product of two matrices, whole or streamed by row blocks.

The module also holds the op's record (``RECORD``: domains, row-block checking, bench problems).
"""
from __future__ import annotations

import numpy as np

from .peer import PeerCall, cuda_tensor, out_fits_gpu
from .record import BenchProblem, Directed, Input, OpRecord, Range

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


# ----------------------------------------------------------------------------- the record

def _rows_of(inputs: dict):
    """``(shape, dtype, rows_of)`` of the result, with ``rows_of(r0, r1)`` its rows ``r0 .. r1-1``
    (the checker verifies a kron result block by block, never forming it whole)."""
    a, b = resolve(inputs["a"], inputs["b"])
    shape = (a.shape[0] * b.shape[0], a.shape[1] * b.shape[1])
    return shape, a.dtype, lambda r0, r1: kron_rows(a, b, r0, r1)


def _square(n, **kw):
    return BenchProblem({"dtype": "float64", "m": n, "n": n, "p": n, "q": n}, {},
                        {"a": "random.1", "b": "random.2"}, **kw)


#: the directed cases (refconv.directed; docs/specs.md "What a ci run catches" says what each is for)
DIRECTED = (
    Directed("ramp", "a transposed or swapped block, a wrong row/column index: distinct exact values everywhere",
             {"a": "ramp", "b": "exact"}, seed=3),
    Directed("edge", "integer products that wrap (not widened), ±max·±max overflow to ±Inf",
             {"a": "edge", "b": "edge"}, seed=2),
    Directed("special", "NaN / ±Inf / -0 operands (Inf·0 = NaN, the sign of zero)", {"a": "special", "b": ("special", "edge")}),
    Directed("onehot", "an operand rounded to a narrower type (one-hot b: each element one exact product)",
             {"a": "random", "b": "onehot"}, seed=7),
)

# ----------------------------------------------------------------------------- peers (refconv bench)

def _torch_kron(problem):
    import torch
    a, b = problem.inputs["a"], problem.inputs["b"]
    out_fits_gpu(a.size * b.size * a.itemsize)
    ta, tb = cuda_tensor(a), cuda_tensor(b)
    return lambda: torch.kron(ta, tb)


def _cupy_kron(problem):
    import cupy as cp
    a, b = problem.inputs["a"], problem.inputs["b"]
    out_fits_gpu(a.size * b.size * a.itemsize, cp.cuda.runtime.memGetInfo()[0])
    ca, cb = cp.asarray(a), cp.asarray(b)
    return lambda: cp.kron(ca, cb)


def _numpy_kron(problem):
    a, b = problem.inputs["a"], problem.inputs["b"]
    return lambda: np.kron(a, b)


PEERS = (
    PeerCall("torch_kron", "torch.kron", "gpu", _torch_kron, runtime="torch"),
    PeerCall("cupy_kron", "cupy.kron", "gpu", _cupy_kron, runtime="cupy"),
    PeerCall("numpy_kron", "numpy.kron", "cpu", _numpy_kron),
)

#: the profiles' size caps (refconv.profiles)
CAPS = {"ci": {"m": 4, "n": 2, "p": 6, "q": 6}, "dev": {"m": 6, "n": 2, "p": 10, "q": 10},
        "thorough": {"m": 8, "n": 8, "p": 12, "q": 12}, "gpu": {"m": 64, "n": 64, "p": 64, "q": 64}}


def _sq(n):
    return {"m": n, "n": n, "p": n, "q": n}


#: the gpu profile's whole configurations: seed 003's n = 100 ... 360 (216: more than 2**31
#: elements; >= 250: only row-streamed variants fit the host); m*p past 65535*8 rows; n*q past
#: 2**31 / 8
GPU_SHAPES = (_sq(100), _sq(200), _sq(216), _sq(300), _sq(360),
              {"m": 1025, "n": 1, "p": 513, "q": 3}, {"m": 3, "n": 257, "p": 2, "q": 257})


RECORD = OpRecord(
    name="kron",
    spec=kron,
    inputs=(Input("a"), Input("b")),
    dims={"dtype": ("float64", "float32", "int32", "uint8"), "m": Range(1), "n": Range(1),
          "p": Range(1), "q": Range(1)},
    shapes=lambda d: {"a": (d["m"], d["n"]), "b": (d["p"], d["q"])},
    layout=lambda d, o: ((d["m"] * d["p"], d["n"] * d["q"]), d["dtype"]),
    fill_combos=({"a": "edge", "b": "edge"},),
    accept=None,          # exact: every element is one product
    rows=_rows_of,
    flops=lambda d, o, n_out: n_out,
    bench={"small": _square(8), "paper": _square(200)},
    #: seed 003 (Tablo 1): two n x n float64 matrices, n = 100 ... 360; from n = 300 only the
    #: ``streamed`` variants run (the n² x n² result, 60-125 GB, does not fit a GPU)
    presets=tuple(_square(n, name=f"kron-{n}", source="seed 003 (Kronecker product of dense float64 matrices on a GPU) Tablo 1",
                          only="streamed" if n >= 300 else None,
                          note=f"result {n * n}x{n * n}, {8 * n ** 4 / 1e9:.1f} GB")
                  for n in range(100, 361, 20)),
    compile_dims={"m": 2, "n": 2, "p": 3, "q": 3},
    caps=CAPS,
    profile_shapes={"gpu": GPU_SHAPES},
    peers=PEERS,
    baseline=("torch_kron", "cupy_kron", "numpy_kron"),
    directed=DIRECTED,
    grid={"n": "x", "m": "y"},
    order=50,
)
