"""Streamed outputs: a variant declared with ``output="rows"`` hands its 2-D result to a
:class:`RowSink` in row blocks instead of filling one array.

The checker gives such a variant a sink whose ``consume`` compares each block with the spec's rows
as it arrives and then drops it, so a result larger than host *and* device memory (seed 003's
``n = 360`` float64 Kronecker product: 125 GiB) is produced and verified without ever being held
whole.  A variant calls::

    out.write(row0, block)      # block: (rows, out.shape[1]) array of out.dtype, rows in order or not

Each row must be written exactly once; writing a row twice, a block of the wrong width or dtype,
or rows outside ``0 .. out.shape[0]`` raises ``ValueError`` naming what was given.  Rows that
are never written are reported by the checker as unwritten.  ``out.poisoned(rows)`` returns a host
block filled with the checker's poison value, for a variant to upload as its device staging
buffer so that elements its kernel never writes keep a value no computation produces.
"""
from __future__ import annotations

from typing import Callable

import numpy as np


class RowSink:
    """A ``(rows, cols)`` result of ``dtype`` delivered in row blocks to ``consume(row0, block)``."""

    def __init__(self, shape: tuple, dtype, consume: Callable[[int, np.ndarray], None], poison=None):
        if len(shape) != 2:
            raise ValueError(f"RowSink: shape {shape!r}; accepted: a 2-D (rows, cols) shape")
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self.ndim = 2
        self.poison = poison
        self._consume = consume
        self._written = np.zeros(self.shape[0], dtype=bool)

    @property
    def rows_written(self) -> int:
        return int(self._written.sum())

    def missing_rows(self) -> np.ndarray:
        """Indices of the rows never written."""
        return np.flatnonzero(~self._written)

    def poisoned(self, rows: int) -> np.ndarray:
        """A ``(rows, cols)`` host block filled with the poison (zeros when the sink has none)."""
        blk = np.zeros((int(rows), self.shape[1]), self.dtype)
        if self.poison is not None:
            blk[...] = self.poison
        return blk

    def write(self, row0: int, block) -> None:
        block = np.asarray(block)
        if block.ndim == 1 and block.size % max(self.shape[1], 1) == 0 and self.shape[1]:
            block = block.reshape(-1, self.shape[1])
        if block.ndim != 2 or block.shape[1] != self.shape[1]:
            raise ValueError(f"RowSink.write: block of shape {block.shape}; accepted: (rows, {self.shape[1]})")
        if block.dtype != self.dtype:
            raise ValueError(f"RowSink.write: block dtype {block.dtype.name}; accepted: {self.dtype.name}")
        row0 = int(row0)
        row1 = row0 + block.shape[0]
        if row0 < 0 or row1 > self.shape[0]:
            raise ValueError(f"RowSink.write: rows {row0}..{row1 - 1} outside 0..{self.shape[0] - 1}")
        again = np.flatnonzero(self._written[row0:row1])
        if again.size:
            raise ValueError(f"RowSink.write: row {row0 + int(again[0])} written twice")
        self._written[row0:row1] = True
        self._consume(row0, block)

    def __repr__(self):
        return f"RowSink(shape={self.shape}, dtype={self.dtype.name}, rows_written={self.rows_written})"
