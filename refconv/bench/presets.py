"""The benchmark problems by name (``refconv bench --preset NAME``): the op records' ``presets``
(next to each spec), ordered by source (the study their sizes come from, ``seed 000 (...) table``:
the seed studies' order, described in docs/backends.md), then by op.

The built-in ones are the seed studies' problems:

* ``filter2d-u8-3x3-3072``: seed 000 (Çizelge 3-5): a 3072x3072 uint8 image, 3x3 float weights,
  integer accumulator, ``>> 4``, wrap to uint8, valid interior.  Every variant of the op runs on it;
  those named ``{GM,CM,SM}[_CF{k}][_Vec]`` form the paper's coarsening table (CF 2-16, with and
  without vector stores), drawn as the coarsening-factor curve.
* ``cuconv-T3-1x1-A`` ... ``cuconv-T5-5x5-A`` and ``cuconv-E1`` ... ``cuconv-E4``: seed 004
  (the cuconv study, §5.1-5.2): float32 NCHW, N = 1, H = W, R = S, padding (R-1)/2, stride 1.
  The listing prints C = 348 for T5-5x5 A in its config table and C = 48 in its results table;
  48 is the GoogLeNet 5x5 layer the configurations come from, and is used here.
* ``sobel-4096x3072``: seed 002 (§4.2, 표 4-5): a 4096 wide, 3072 high RGBA image, gray
  conversion in the kernel, ``|Gx|+|Gy|`` truncated and saturated to uint8, valid interior
  (methods I-IV are the ``smem_*`` variants).
* ``matvec-4096``, ``matvec-16384``: seed 002 (§5): float32 N x N matrix times vector.
* ``kron-100`` ... ``kron-360`` (step 20): seed 003 (Tablo 1): two n x n float64 matrices.  From
  n = 300 only the ``streamed`` variants run (the n² x n² result, 60-125 GB, does not fit a GPU).
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from .. import ops
from ..errors import UsageError
from ..problem import Problem


@dataclass(frozen=True)
class Preset:
    name: str
    op: str
    dims: dict
    options: dict
    fills: dict
    source: str
    only: str | None = None        # variant-name glob: the other variants are skipped with the reason
    note: str = ""
    tags: tuple = field(default=())

    def problem(self) -> Problem:
        return Problem(self.op, dict(self.dims), dict(self.options), dict(self.fills))


def _all() -> tuple[Preset, ...]:
    found = [(rec, bp) for rec in ops.records() for bp in rec.presets]
    # by the study ("seed 000 ..."), then op order; stable within an op
    found.sort(key=lambda rb: (" ".join(rb[1].source.split()[:2]) or "~", rb[0].order))
    return tuple(Preset(bp.name, rec.name, dict(bp.dims), dict(bp.options), dict(bp.fills), bp.source,
                        only=bp.only, note=bp.note, tags=tuple(bp.tags)) for rec, bp in found)


PRESETS: dict[str, Preset] = {p.name: p for p in _all()}


def select(spec: list[str] | None) -> list[Preset]:
    """Presets named by ``spec`` (names, globs, comma lists, or ``all``), in table order; an unknown
    name raises ``ValueError`` listing the accepted ones."""
    wanted = [w.strip() for s in (spec or []) for w in s.split(",") if w.strip()]
    out = []
    for w in wanted:
        hits = list(PRESETS) if w == "all" else [n for n in PRESETS if fnmatch.fnmatchcase(n, w)]
        if not hits:
            raise UsageError(f"--preset {w!r} matches no preset; accepted: all, or one of {', '.join(PRESETS)}"
                             " (globs allowed)")
        out += [n for n in hits if n not in out]
    order = list(PRESETS)
    return [PRESETS[n] for n in sorted(out, key=order.index)]
