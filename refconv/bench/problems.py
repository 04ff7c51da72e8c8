"""The problems ``refconv bench`` runs without ``--preset`` (one per op and ``--scale``, from the op
records' ``bench`` problems) and the host memory the check of one row needs on a problem
(:func:`host_bytes_needed`, against :func:`available_host_bytes`: a row that would not fit is
skipped with both numbers instead of exhausting the host)."""
from __future__ import annotations

import numpy as np

from .. import ops
from ..errors import UsageError
from ..problem import Problem
from . import roofline


def scales() -> tuple:
    """The ``--scale`` names: those of the op records' ``bench`` problems, in order of first use."""
    return tuple(dict.fromkeys(scale for rec in ops.records() for scale in rec.bench))


def bench_problem(op: str, scale: str) -> Problem:
    """The op record's ``bench[scale]`` problem of ``op`` (``--scale``); ``UsageError`` naming the
    scale or op and the accepted ones."""
    if scale not in scales():
        raise UsageError(f"--scale {scale!r} not accepted; accepted: {', '.join(scales())}")
    bp = ops.get(op).bench.get(scale)
    if bp is None:
        with_one = [r.name for r in ops.records() if scale in r.bench]
        raise UsageError(f"op {op!r} has no --scale {scale!r} problem; ops with one: {', '.join(with_one)}")
    return Problem(op, dict(bp.dims), dict(bp.options), dict(bp.fills))


#: host memory for the row blocks of a row-checked op (the checker's spec rows, the variant's
#: staging, comparison temporaries), whatever the size of the result
ROW_CHECK_BYTES = 1 << 30


def host_bytes_needed(problem: Problem, work: roofline.Work, variant=None) -> int:
    """Host memory the check of one variant needs, about.  Ops checked as a whole: four times
    inputs plus output (spec result, poisoned buffer, the variant's host copy, comparison
    temporaries).  Ops the checker checks by row blocks (their record has ``rows``, e.g. kron):
    no whole spec result; the variant's poisoned host output (``output="array"``; none for
    ``output="rows"``, whose sink discards the checked blocks) plus the inputs and
    :data:`ROW_CHECK_BYTES` of blocks."""
    if problem.record.rows is None:
        return 4 * work.bytes
    shape, dtype = problem.record.output_layout(problem.dims, problem.options)
    out_bytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    in_bytes = max(work.bytes - out_bytes, 0)
    held = 0 if variant is not None and variant.output == "rows" else out_bytes
    return held + in_bytes + ROW_CHECK_BYTES


def available_host_bytes() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes, None where it cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None
