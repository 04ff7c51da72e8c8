"""kron in Triton (seed 003): the whole product in one launch of ``block_r x block_c`` tiles,
and a streamed variant launching one block of ``rows_per_block`` rows at a time into a poisoned
staging buffer handed to the checker's RowSink (``output="rows"``)."""
from __future__ import annotations

import numpy as np

from refconv.variant import Param, Range, Variant

from refconv.tooling.triton import kit


def _kern():
    """The kernels module (imports triton: at the first launch only)."""
    from . import _kernels
    return _kernels

ORIGIN = "seed 003 (Kronecker product of large dense matrices on the GPU) in Triton; issue 25"
SUPPORTS = {"dtype": ("float64", "float32", "int32", "uint8"), "m": Range(1), "n": Range(1),
            "p": Range(1), "q": Range(1)}
TILE = (Param("block_r", (2, 4, 16, 32), 16), Param("block_c", (4, 8, 32, 64), 32),
        Param("num_warps", (1, 2, 4, 8), 4))


def _ab(problem):
    a, b = (np.ascontiguousarray(problem.inputs[x]) for x in "ab")
    return a, b, a.shape, b.shape


def _run_single(problem, out, block_r=16, block_c=32, num_warps=4):
    a, b, (m, n), (p, q) = _ab(problem)
    grid = (kit.cdiv(m * p, block_r), kit.cdiv(n * q, block_c))
    return kit.launch(_kern().kron_tiles, grid, a, b, kit.OUT, 0, m * p, n, p, q, out=out,
                      what="kron/triton/single_launch", num_warps=num_warps, BR=block_r, BC=block_c)


def _run_streamed(problem, out, block_r=16, block_c=32, rows_per_block=8, num_warps=4):
    """``out`` is a :class:`refconv.sink.RowSink`: rows_per_block rows of C per launch."""
    a, b, (m, n), (p, q) = _ab(problem)
    k = _kern().kron_tiles
    for r0 in range(0, m * p, rows_per_block):
        nr = min(rows_per_block, m * p - r0)
        stage = out.poisoned(nr)
        kit.launch(k, (kit.cdiv(nr, block_r), kit.cdiv(n * q, block_c)), a, b, kit.OUT, r0, nr, n, p, q,
                   out=stage, what="kron/triton/streamed", num_warps=num_warps, BR=block_r, BC=block_c)
        out.write(r0, stage)


def _constraint(problem, p):
    d = problem.dims
    rows = min(p.get("rows_per_block", d["m"] * d["p"]), d["m"] * d["p"])
    grid = (kit.cdiv(rows, p["block_r"]), kit.cdiv(d["n"] * d["q"], p["block_c"]))
    return kit.grid_fits(grid) or kit.budget(grid[0] * grid[1])


def variants() -> list[Variant]:
    mk = lambda name, run, params, doc, output="array": Variant(
        op="kron", backend="triton", name=name, run=run, supports=SUPPORTS, params=params,
        available=kit.available, output=output, constraint=_constraint, origin=ORIGIN, doc=doc)
    return [
        mk("single_launch", _run_single, TILE,
           "one launch of block_r x block_c tiles over the (m*p) x (n*q) output: C[r, s] = A[r//p, s//q] * B[r%p, s%q]"),
        mk("streamed", _run_streamed, TILE + (Param("rows_per_block", (1, 3, 8, 64), 8),),
           "one launch per block of rows_per_block rows of C into a poisoned staging block handed to the "
           "checker's RowSink", output="rows"),
    ]
