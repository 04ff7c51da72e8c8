"""The memory roofline of one problem: the minimum bytes any implementation must move and the
arithmetic it must do, from the problem's dims and options alone (no variant, no backend).

Bytes: every input element read once plus every output element written once, at the dtypes of
the spec (:func:`output_layout`: the spec's output, so a ``valid`` filter writes only the
interior).  Intermediate results (a gray image, partial sums) are not counted:
an implementation that keeps them on chip moves nothing more.

FLOPs (a multiply and an add count as two): the spec's arithmetic with zero taps of fixed masks
left out (each op record's ``flops``):

* ``filter2d``: ``2·kh·kw`` per output element (every channel);
* ``conv2d``: ``2·(c/groups)·r·s`` per output element, plus one add per element for a bias;
* ``sobel``: ``2·6`` per gradient (the 6 nonzero taps of each 3x3 mask), 2 gradients, plus 3 for
  the magnitude (``|gx|+|gy|``: 2 abs + 1 add; ``l2``: 2 mul + 1 add, the root not counted),
  per output pixel; plus 5 per input pixel for the gray conversion of 3- or 4-channel images;
* ``matvec``: ``2·rows·cols``;
* ``kron``: one multiply per output element.

The time floor of a problem on a device is ``min_bytes / copy_bandwidth``, where the copy
bandwidth is what a device-to-device copy reaches in the same run (``2·nbytes / time``: read plus
write); ``% of roofline`` is that floor over the measured kernel time.  The bench also times, per
problem, a copy that moves exactly :func:`work`'s bytes (:func:`refconv.bench.rows.copy_row`): the
floor measured at the problem's own size, beside this one extrapolated from a large copy.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..problem import Problem


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
    problem too large for the host can still be sized): the op record's ``output_layout``."""
    return problem.record.output_layout(problem.dims, problem.options)


def _out_elems(problem: Problem) -> tuple[int, int]:
    shape, dtype = output_layout(problem)
    n = int(np.prod(shape, dtype=np.int64))
    return n, n * dtype.itemsize


def _in_bytes(problem: Problem) -> int:
    return problem.input_nbytes()


def _flops(problem: Problem, n_out: int) -> int:
    return problem.record.count_flops(problem.dims, problem.options, n_out)


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
