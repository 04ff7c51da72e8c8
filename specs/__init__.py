"""refconv.specs: the pure-NumPy specification layer, the ground floor of refconv.

One plain vectorised NumPy function per op; each docstring is the normative definition (formula,
tap/summation order, integer, rounding, border and overflow rules).  ``docs/specs.md`` collects
them, and :mod:`refconv.tolerance` says which results of other implementations are accepted.

Next to each spec is its op record (``RECORD``, :class:`refconv.specs.record.OpRecord`): every
per-op fact the core uses (domains, drawing, acceptance engine, bench problems, profile caps and
shapes, peers).  :data:`RECORDS` holds the built-in ones.  The modules here import only NumPy
and each other (the vocabulary: :mod:`.record`, :mod:`.peer`, :mod:`.intervals`,
:mod:`.dotbound`); the core imports them, never the other way round.
"""
from . import conv2d as _conv2d
from . import filter2d as _filter2d
from . import kron as _kron
from . import matvec as _matvec
from . import sobel as _sobel
from .conv2d import conv2d
from .filter2d import filter2d
from .kron import kron, kron_blocks, kron_rows
from .matvec import matvec
from .sobel import sobel

#: the built-in op records (one per spec module), in listing order
RECORDS = tuple(sorted((m.RECORD for m in (_filter2d, _conv2d, _sobel, _matvec, _kron)),
                       key=lambda r: (r.order, r.name)))

__all__ = ["filter2d", "conv2d", "sobel", "matvec", "kron", "kron_blocks", "kron_rows", "RECORDS"]
