"""The memory roofline of one problem: the minimum bytes any implementation must move and the
arithmetic it must do, from the problem's dims and options alone (no variant, no backend).

Bytes: every input element read once plus every output element written once, at the dtypes of
the spec (:func:`output_layout`: the spec's output, so a ``valid`` filter writes only the
interior).  Intermediate results (a gray image, partial sums) are not counted:
an implementation that keeps them on chip moves nothing more.

FLOPs (a multiply and an add count as two): the spec's arithmetic with zero taps of fixed masks
left out:

* ``filter2d``: ``2·kh·kw`` per output element (every channel);
* ``conv2d``: ``2·(c/groups)·r·s`` per output element, plus one add per element for a bias;
* ``sobel``: ``2·6`` per gradient (the 6 nonzero taps of each 3x3 mask), 2 gradients, plus 3 for
  the magnitude (``|gx|+|gy|``: 2 abs + 1 add; ``l2``: 2 mul + 1 add, the root not counted),
  per output pixel; plus 5 per input pixel for the gray conversion of 3- or 4-channel images;
* ``matvec``: ``2·rows·cols``;
* ``kron``: one multiply per output element.

The time floor of a problem on a device is ``min_bytes / copy_bandwidth``, where the copy
bandwidth is what a device-to-device copy reaches in the same run (``2·nbytes / time``: read plus
write); ``% of roofline`` is that floor over the measured kernel time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .problem import Problem


@dataclass(frozen=True)
class Work:
    """Minimum traffic and arithmetic of one problem."""

    bytes: int
    flops: int

    @property
    def intensity(self) -> float:
        """FLOPs per byte moved."""
        return self.flops / self.bytes if self.bytes else float("inf")


def output_layout(problem: Problem) -> tuple[tuple, np.dtype]:
    """(shape, dtype) of the spec's output, from the dims and options alone (no spec run, so a
    problem too large for the host can still be sized)."""
    d, o = problem.dims, problem.options
    if problem.op == "filter2d":
        valid = o.get("boundary", "zero") == "valid"
        hw = (d["h"] - d["kh"] + 1, d["w"] - d["kw"] + 1) if valid else (d["h"], d["w"])
        return ((d["c"],) if d["c"] else ()) + hw, np.dtype(o.get("out_dtype") or d["dtype"])
    if problem.op == "conv2d":
        st, pad, dil = o.get("stride", 1), o.get("padding", 0), o.get("dilation", 1)
        ho = (d["h"] + 2 * pad - dil * (d["r"] - 1) - 1) // st + 1
        wo = (d["w"] + 2 * pad - dil * (d["s"] - 1) - 1) // st + 1
        return (d["n"], d["m"], ho, wo), np.dtype(d["dtype"])
    if problem.op == "sobel":
        valid = o.get("boundary", "valid") == "valid"
        return ((d["h"] - 2, d["w"] - 2) if valid else (d["h"], d["w"])), np.dtype(o.get("out_dtype") or "uint8")
    if problem.op == "matvec":
        return (d["rows"],), np.dtype(d["dtype"])
    if problem.op == "kron":
        return (d["m"] * d["p"], d["n"] * d["q"]), np.dtype(d["dtype"])
    raise ValueError(f"roofline: op {problem.op!r} not accepted; accepted: filter2d, conv2d, sobel, matvec, kron")


def _out_elems(problem: Problem) -> tuple[int, int]:
    shape, dtype = output_layout(problem)
    n = int(np.prod(shape, dtype=np.int64))
    return n, n * dtype.itemsize


def _in_bytes(problem: Problem) -> int:
    from .problem import OPDEFS
    od = OPDEFS[problem.op]
    return sum(int(np.prod(s, dtype=np.int64)) * od.input_dtype(name, problem.dims).itemsize
               for name, s in problem.input_shapes().items())


def _flops(problem: Problem, n_out: int) -> int:
    d = problem.dims
    if problem.op == "filter2d":
        return 2 * d["kh"] * d["kw"] * n_out
    if problem.op == "conv2d":
        return 2 * (d["c"] // d["groups"]) * d["r"] * d["s"] * n_out + (n_out if d["bias"] else 0)
    if problem.op == "sobel":
        gray = 5 * d["h"] * d["w"] if d["channels"] in (3, 4) else 0
        return (2 * 2 * 6 + 3) * n_out + gray
    if problem.op == "matvec":
        return 2 * d["rows"] * d["cols"]
    if problem.op == "kron":
        return n_out
    raise ValueError(f"roofline: op {problem.op!r} not accepted; accepted: filter2d, conv2d, sobel, matvec, kron")


def work(problem: Problem) -> Work:
    """Minimum bytes moved and FLOPs of ``problem`` (rules in the module docstring)."""
    n_out, out_bytes = _out_elems(problem)
    return Work(bytes=_in_bytes(problem) + out_bytes, flops=_flops(problem, n_out))


def floor_seconds(w: Work, copy_bandwidth: float) -> float:
    """The memory-bound time floor: ``w.bytes / copy_bandwidth`` (bytes per second)."""
    if not copy_bandwidth or copy_bandwidth <= 0:
        raise ValueError(f"copy_bandwidth must be > 0 bytes/s, got {copy_bandwidth!r}")
    return w.bytes / copy_bandwidth


def percent_of_roofline(w: Work, copy_bandwidth: float, seconds: float) -> float:
    """``100 · floor / seconds``: how close a measured time is to the memory roofline."""
    if not seconds or seconds <= 0:
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    return 100.0 * floor_seconds(w, copy_bandwidth) / seconds
