"""The seed studies' benchmark problems, by name (``refconv bench --preset NAME``).

* ``filter2d-u8-3x3-3072``: seed 000 (Çizelge 3-5): a 3072x3072 uint8 image, 3x3 float weights,
  integer accumulator, ``>> 4``, wrap to uint8, valid interior.  Every variant of the op runs on it;
  those named ``{GM,CM,SM}[_CF{k}][_Vec]`` form the paper's coarsening table (CF 2-16, with and
  without vector stores), drawn as the coarsening-factor curve.
* ``sobel-4096x3072``: seed 002 (§4.2, 표 4-5): a 4096 wide, 3072 high RGBA image, gray
  conversion in the kernel, ``|Gx|+|Gy|`` truncated and saturated to uint8, valid interior
  (methods I-IV are the ``smem_*`` variants).
* ``matvec-4096``, ``matvec-16384``: seed 002 (§5): float32 N x N matrix times vector.
* ``kron-100`` ... ``kron-360`` (step 20): seed 003 (Tablo 1): two n x n float64 matrices.  From
  n = 300 only the ``streamed`` variants run (the n² x n² result, 60-125 GB, does not fit a GPU).
* ``cuconv-T3-1x1-A`` ... ``cuconv-T5-5x5-A`` and ``cuconv-E1`` ... ``cuconv-E4``: seed 004
  (the cuconv study, §5.1-5.2): float32 NCHW, N = 1, H = W, R = S, padding (R-1)/2, stride 1.
  The listing prints C = 348 for T5-5x5 A in its config table and C = 48 in its results table;
  48 is the GoogLeNet 5x5 layer the configurations come from, and is used here.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from .problem import Problem


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


_F2D_OPT = {"boundary": "valid", "flip": False, "accumulator": "int", "shift": 4, "cast": "wrap"}
_SOBEL_OPT = {"magnitude": "l1", "boundary": "valid", "out_dtype": "uint8", "cast": "saturate", "rounding": "trunc"}


def _conv(name, label, h, r, m, c):
    return Preset(
        f"cuconv-{name}" + (f"-{label}" if label else ""), "conv2d",
        {"dtype": "float32", "n": 1, "c": c, "h": h, "w": h, "m": m, "r": r, "s": r, "groups": 1, "bias": 0},
        {"stride": 1, "padding": (r - 1) // 2, "dilation": 1}, {"x": "random.1", "w": "random.2"},
        "seeds/004_906959956e3859a4.txt §5.1" if label else "seeds/004_906959956e3859a4.txt §5.2",
        note=f"N=1 H=W={h} R=S={r} M={m} C={c}")


def _all() -> tuple[Preset, ...]:
    out = [
        Preset("filter2d-u8-3x3-3072", "filter2d",
               {"dtype": "uint8", "c": 0, "h": 3072, "w": 3072, "kh": 3, "kw": 3}, dict(_F2D_OPT),
               {"image": "random.1", "weights": "exact.2"}, "seeds/000_4bc22224e0c2d458.txt Çizelge 3-5",
               note="with the coarsening table (GM/CM/SM, CF 2-16, _Vec)"),
        Preset("sobel-4096x3072", "sobel", {"dtype": "uint8", "channels": 4, "h": 3072, "w": 4096},
               dict(_SOBEL_OPT), {"image": "random.1"}, "seeds/002_bac98b268d2530e5.txt 표 4-5",
               note="methods I-IV: smem_if, smem_4copy, smem_linear, smem_rows2"),
    ]
    for n in (4096, 16384):
        out.append(Preset(f"matvec-{n}", "matvec", {"dtype": "float32", "rows": n, "cols": n}, {},
                          {"m": "random.1", "v": "random.2"}, "seeds/002_bac98b268d2530e5.txt §5"))
    for n in range(100, 361, 20):
        big = n >= 300
        out.append(Preset(f"kron-{n}", "kron", {"dtype": "float64", "m": n, "n": n, "p": n, "q": n}, {},
                          {"a": "random.1", "b": "random.2"}, "seeds/003_589ce5a1556f477e.txt Tablo 1",
                          only="streamed" if big else None,
                          note=f"result {n * n}x{n * n}, {8 * n ** 4 / 1e9:.1f} GB"))
    for label, h, r, m, c in (("A", 7, 1, 256, 832), ("B", 14, 1, 1024, 256), ("C", 27, 1, 256, 64)):
        out.append(_conv("T3-1x1", label, h, r, m, c))
    for label, h, r, m, c in (("A", 4, 3, 384, 192), ("B", 13, 3, 384, 384)):
        out.append(_conv("T4-3x3", label, h, r, m, c))
    out.append(_conv("T5-5x5", "A", 7, 5, 128, 48))
    for label, h, m, c in (("E1", 32, 64, 64), ("E2", 32, 128, 128), ("E3", 64, 128, 128), ("E4", 64, 256, 256)):
        out.append(_conv(label, "", h, 3, m, c))
    return tuple(out)


PRESETS: dict[str, Preset] = {p.name: p for p in _all()}


def select(spec: list[str] | None) -> list[Preset]:
    """Presets named by ``spec`` (names, globs, comma lists, or ``all``), in table order; an unknown
    name raises ``ValueError`` listing the accepted ones."""
    wanted = [w.strip() for s in (spec or []) for w in s.split(",") if w.strip()]
    out = []
    for w in wanted:
        hits = list(PRESETS) if w == "all" else [n for n in PRESETS if fnmatch.fnmatchcase(n, w)]
        if not hits:
            raise ValueError(f"--preset {w!r} matches no preset; accepted: all, or one of {', '.join(PRESETS)}"
                             " (globs allowed)")
        out += [n for n in hits if n not in out]
    order = list(PRESETS)
    return [PRESETS[n] for n in sorted(out, key=order.index)]
