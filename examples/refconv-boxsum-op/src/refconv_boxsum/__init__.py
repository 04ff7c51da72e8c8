"""refconv-boxsum-op: a plugin that brings its own op, ``boxsum2d``, and two variants of it.

The worked example of docs/plugins.md, "A new op": the spec, its float acceptance (any summation
order, with or without FMA: no tolerance), the op record, and a backend.  tests/meta/test_example_op.py
checks it and checks that the docs quote this file as it is.

    pip install -e examples/refconv-boxsum-op
    refconv list --op boxsum2d
    refconv check --backend boxsum
"""
from __future__ import annotations

import numpy as np

from refconv import Backend, Param, Variant, ops
from refconv.specs.dotbound import dot
from refconv.specs.record import BenchProblem, Input, OpRecord, Range

__all__ = ["RECORD", "backend", "boxsum2d"]


# --8<-- [start:spec]
def boxsum2d(image, *, k=3):
    """``out[i, j] = sum(image[i:i+k, j:j+k])`` for a 2-D float32 ``image``, valid windows only
    (``out`` is ``(H-k+1, W-k+1)``): the exact sum, rounded once to float32."""
    x = np.asarray(image)
    if x.ndim != 2 or x.dtype != np.float32:
        raise TypeError(f"boxsum2d: image must be a 2-D float32 array, got {x.dtype} {x.shape}")
    if not 1 <= k <= min(x.shape):
        raise ValueError(f"boxsum2d: k={k} outside 1..{min(x.shape)}")
    ho, wo = x.shape[0] - k + 1, x.shape[1] - k + 1
    acc = np.zeros((ho, wo), np.float64)        # float64 holds a sum of 25 float32 values closely
    with np.errstate(all="ignore"):
        for a in range(k):
            for b in range(k):
                acc += x[a:a + ho, b:b + wo]
        return acc.astype(np.float32)
# --8<-- [end:spec]


# --8<-- [start:accept]
def _accept(inputs, o):
    """What a float32 kernel may return: the k*k window terms summed in any order, with or
    without FMA (a dot product with weights 1, :func:`refconv.specs.dotbound.dot`)."""
    x, k = np.asarray(inputs["image"]), o["k"]
    ho, wo = x.shape[0] - k + 1, x.shape[1] - k + 1
    one = np.float32(1)
    taps = ((one, x[a:a + ho, b:b + wo], None) for a in range(k) for b in range(k))
    return dot(taps, (ho, wo), np.float32)[0]
# --8<-- [end:accept]


# --8<-- [start:record]
RECORD = OpRecord(
    name="boxsum2d",
    spec=boxsum2d,
    inputs=(Input("image", role="pixels"),),
    dims={"dtype": ("float32",), "h": Range(1), "w": Range(1)},
    options={"k": Range(1, 5)},                   # the spec's keyword; its default (3) is read from it
    shapes=lambda d: {"image": (d["h"], d["w"])},
    layout=lambda d, o: ((d["h"] - o["k"] + 1, d["w"] - o["k"] + 1), d["dtype"]),
    validity=lambda d, o: None if min(d["h"], d["w"]) >= o["k"] else f"k={o['k']} > min(h={d['h']}, w={d['w']})",
    accept=_accept,
    flops=lambda d, o, n_out: n_out * o["k"] ** 2,
    bench={"small": BenchProblem({"dtype": "float32", "h": 64, "w": 64}, {"k": 3}, {"image": "random.1"})},
    caps={"ci": {"h": 24, "w": 24}, "dev": {"h": 48, "w": 48}, "thorough": {"h": 96, "w": 96},
          "gpu": {"h": 2048, "w": 2048}},
)
ops.register_op(RECORD)          # at import, before any Variant of the op is built
# --8<-- [end:record]


# --8<-- [start:backend]
def direct(problem, out, rows=8):
    """Each window summed tap by tap in float32, ``rows`` output rows at a time."""
    x, k = problem.inputs["image"], problem.option("k")
    ho, wo = out.shape
    with np.errstate(all="ignore"):              # the checker draws Inf, NaN and extremes on purpose
        for r0 in range(0, ho, rows):
            r1 = min(r0 + rows, ho)
            acc = np.zeros((r1 - r0, wo), np.float32)
            for a in range(k):
                for b in range(k):
                    acc += x[r0 + a:r1 + a, b:b + wo]
            out[r0:r1] = acc


def separable(problem, out):
    """Sums of k columns first, then of k of those rows: another summation order, also accepted."""
    x, k = problem.inputs["image"], problem.option("k")
    ho, wo = out.shape
    with np.errstate(all="ignore"):
        cols = np.zeros((x.shape[0], wo), np.float32)
        for b in range(k):
            cols += x[:, b:b + wo]
        acc = np.zeros((ho, wo), np.float32)
        for a in range(k):
            acc += cols[a:a + ho]
    out[...] = acc


backend = Backend(name="boxsum", variants=lambda: [
    Variant("boxsum2d", "boxsum", "direct", run=direct, params=(Param("rows", (1, 3, 8), 8),)),
    Variant("boxsum2d", "boxsum", "separable", run=separable),
])
# --8<-- [end:backend]
