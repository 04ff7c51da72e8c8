"""refconv.specs: the pure-NumPy specification layer.

One plain vectorised NumPy function per op; each docstring is the normative definition (formula,
tap/summation order, integer, rounding, border and overflow rules).  ``docs/specs.md`` collects
them, and :mod:`refconv.tolerance` says which results of other implementations are accepted.
"""
from .conv2d import conv2d
from .filter2d import filter2d
from .kron import kron, kron_blocks, kron_rows
from .matvec import matvec
from .sobel import sobel

__all__ = ["filter2d", "conv2d", "sobel", "matvec", "kron", "kron_blocks", "kron_rows"]
