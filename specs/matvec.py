"""``matvec``: matrix-vector product.

The module also holds the op's record (``RECORD``: domains, acceptance, bench problems).
"""
from __future__ import annotations

import numpy as np

from .dotbound import dot
from .peer import PeerCall, cuda_tensor
from .record import BenchProblem, Directed, Input, OpRecord, Range

from ._validate import as_array


def resolve(m, v):
    op = "matvec"
    m = as_array("m", m, ndims=2, dtypes=("float32", "float64"), op=op)
    v = as_array("v", v, ndims=1, dtypes=("float32", "float64"), op=op)
    if v.dtype != m.dtype:
        raise TypeError(f"{op}: v has dtype {v.dtype.name} but m has {m.dtype.name}; accepted: the same dtype")
    if m.shape[1] != v.shape[0]:
        raise ValueError(f"{op}: m has shape {m.shape} and v has shape {v.shape}; accepted: "
                         f"v.shape == (m.shape[1],) = ({m.shape[1]},)")
    if 0 in m.shape:
        raise ValueError(f"{op}: m must be non-empty, got shape {m.shape}")
    return dict(m=m, v=v)


def matvec(m, v):
    r"""``y = m @ v``: ``m`` ``(R, C)``, ``v`` ``(C,)``, same dtype float32 or float64;
    ``y[r] = sum_c m[r, c] * v[c]`` of shape ``(R,)`` and the same dtype.

    **Point value.** Computed in float64 (in an unspecified order) and rounded once to the dtype
    (for float32: the exact dot product correctly rounded up to a float64-level error).  The
    tolerance accepts any summation order and FMA contraction (``n = C`` terms); NaN/Inf
    propagate as IEEE arithmetic does.
    """
    a = resolve(m, v)
    with np.errstate(all="ignore"):
        return (a["m"].astype(np.float64) @ a["v"].astype(np.float64)).astype(a["m"].dtype)


def accepted(inputs: dict, o: dict):
    """The accepted set of ``matvec(m, v)``: one dot product per row, n = C terms."""
    a = resolve(inputs["m"], inputs["v"])
    m, v = a["m"], a["v"]
    return dot(((m[:, k], v[k], None) for k in range(m.shape[1])), (m.shape[0],), m.dtype)[0]


_FILLS = {"m": "random.1", "v": "random.2"}


def _square(n, **kw):
    return BenchProblem({"dtype": "float32", "rows": n, "cols": n}, {}, _FILLS, **kw)


#: the directed cases (refconv.directed; docs/specs.md "What a ci run catches" says what each is for)
DIRECTED = (
    Directed("onehot-v", "m rounded to TF32 / bfloat16 / float16 (one-hot v: every output one exact product)",
             {"m": "random", "v": "onehot"}, seed=7),
    Directed("onehot-m", "v rounded to TF32 / bfloat16 / float16 (one-hot rows of m)", {"m": "onehot", "v": "random"},
             seed=8),
    Directed("sparse-nan", "zero or tiny terms skipped (0·NaN, 0·Inf lost)", {"m": "sparse", "v": "special"}),
    Directed("edge", "overflow to ±Inf, Inf - Inf, a partial sum dropped or added twice",
             {"m": "edge", "v": "edge"}, seed=2),
    Directed("ramp", "a wrong row or column index (transposed m, a stride of the wrong dim): distinct exact values",
             {"m": "ramp", "v": "exact"}, seed=3),
)

# ----------------------------------------------------------------------------- peers (refconv bench)

def _cublas_mv(problem):
    import torch
    m, v = cuda_tensor(problem.inputs["m"]), cuda_tensor(problem.inputs["v"])
    return lambda: torch.mv(m, v)


def _numpy_matvec(problem):
    m, v = problem.inputs["m"], problem.inputs["v"]
    return lambda: m @ v


PEERS = (
    PeerCall("cublas_mv", "torch.mv (cuBLAS)", "gpu", _cublas_mv, runtime="torch"),
    PeerCall("numpy_matvec", "numpy m @ v", "cpu", _numpy_matvec),
)

#: the profiles' size caps (refconv.profiles)
CAPS = {"ci": {"rows": 40, "cols": 40}, "dev": {"rows": 120, "cols": 120},
        "thorough": {"rows": 300, "cols": 300}, "gpu": {"rows": 16384, "cols": 16384}}

#: the gpu profile's whole configurations: seed 002's N = 4096 and 16384; rows / columns past
#: 65535; past 2**31 elements
GPU_SHAPES = ({"rows": 4096, "cols": 4096}, {"rows": 16384, "cols": 16384}, {"rows": 16385, "cols": 16383},
              {"rows": 65537, "cols": 33}, {"rows": 33, "cols": 65537}, {"rows": 65537, "cols": 32769})


RECORD = OpRecord(
    name="matvec",
    spec=matvec,
    inputs=(Input("m"), Input("v")),
    dims={"dtype": ("float32", "float64"), "rows": Range(1), "cols": Range(1)},
    shapes=lambda d: {"m": (d["rows"], d["cols"]), "v": (d["cols"],)},
    layout=lambda d, o: ((d["rows"],), d["dtype"]),
    fill_combos=({"m": "random", "v": "onehot"}, {"m": "onehot", "v": "random"}, {"m": "sparse", "v": "special"}),
    accept=accepted,
    flops=lambda d, o, n_out: 2 * d["rows"] * d["cols"],
    bench={"small": _square(128), "paper": _square(16384)},
    #: seed 002 (§5): float32 N x N matrix times vector
    presets=tuple(_square(n, name=f"matvec-{n}", source="seed 002 (Kim, Kim, Woo & Ihm 2010, CUDA optimisation techniques) §5") for n in (4096, 16384)),
    compile_dims={"rows": 8, "cols": 8},
    caps=CAPS,
    profile_shapes={"gpu": GPU_SHAPES},
    peers=PEERS,
    baseline=("cublas_mv", "numpy_matvec"),
    directed=DIRECTED,
    grid={"rows": "x", "cols": "y"},
    order=40,
)
