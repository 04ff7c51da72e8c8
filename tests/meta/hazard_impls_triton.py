"""The deliberately wrong Triton kernels of issues 25 and 40, each with its fixed twin (the same kernel
with the mistake removed).  Used by ``tests/test_triton_backend.py`` (a plain ``ci`` check under
Triton's interpreter fails each hazard -- the two mask mistakes named ``out-of-bounds`` -- and
passes each twin) and by ``lab/sweeps/catch_rates.py``.

Written as a third-party Triton plugin would be: the kernels are ``@kit.jit`` functions launched
through :func:`refconv.triton.launch` (the memory checker is on under the
interpreter), the backend takes ``backend_fields()`` so that it follows ``--triton``.

* ``HAZARDS``: ``{name: Variant}``, the kernels with the mistake;
* ``FIXED``: ``{name: Variant}``, their twins, under the same names;
* ``CLASS``: ``{name: finding class}`` for the hazards the memory checker names (the others fail
  the spec's verdict without a finding);
* ``backend``: a :class:`refconv.Backend` named ``trihazards`` with all of them (variant names
  ``<name>`` and ``<name>_fixed``), for a ``refconv.backends`` entry point.

The hazards:

``triton_unmasked_load`` (``out-of-bounds``)
    filter2d float32, valid correlation in ``B x B`` output tiles whose image loads have no mask:
    the last row block of a height that ``B`` does not divide reads rows past the image.
``triton_unmasked_store`` (``out-of-bounds``)
    the same kernel storing its tile without the output mask.
``triton_plain_cast`` (wrong values)
    the same kernel on the uint8 path (float32 accumulator, ``* 2**-shift``, trunc, saturate)
    converting with a plain ``.to(tl.uint8)``: no clamp to [0, 255] (the interpreter and the GPU
    disagree on out-of-range conversions; neither saturates to uint8).
``triton_drops_last_block`` (wrong values)
    matvec, a row-block reduction over column blocks of ``B`` that stops at ``C - C % B``.
``triton_tf32_dot`` (wrong values)
    matvec through ``tl.dot`` in its default precision (TF32 on the GPU; the kit's interpreter
    emulates it) instead of ``input_precision="ieee"``.
``triton_masked_no_other`` (wrong values, on the interpreter and on the GPU)
    the row-block reduction whose masked tile load has no ``other=``: Triton leaves the lanes
    masked off undefined and ``tl.sum`` adds them.  The GPU and the plain interpreter happen to
    give 0; the kit rewrites the load to pass ``other=`` NaN before the kernel is compiled or
    interpreted, so the sum shows it on both.
``triton_strided_as_contiguous`` (wrong values; ``out-of-bounds`` where it reads a row pitch)
    declares ``layouts=("contiguous", "strided")``, is passed its inputs as they lie
    (``kit.strided``) with their strides, and addresses them as contiguous rows.
``triton_accumulates_unzeroed`` (``uninitialized-read``)
    one launch per column block adding its part into ``out``; the launch that zeroes ``out``
    first is missing.  The twin (zero, then accumulate: several launches on ``OUT`` in one run)
    passes.
``triton_scratch_short`` (``uninitialized-read``)
    partial sums into a ``kit.scratch`` work buffer, then a second launch sums them; the first
    kernel never stores the last column block's partials.  The twin passes.
"""
from __future__ import annotations

import numpy as np
import triton.language as tl

from refconv import Backend, Range, Variant
import refconv.triton as kit
from refconv.triton import backend_fields

#: tile edge of the filter kernel, column block of the reduction (not drawn: the sizes the
#: strategies draw are then not biased towards multiples of it)
B = 8

CLASS = {"triton_unmasked_load": "out-of-bounds", "triton_unmasked_store": "out-of-bounds",
         "triton_accumulates_unzeroed": "uninitialized-read", "triton_scratch_short": "uninitialized-read"}


# ----------------------------------------------------------------------------- filter2d

@kit.jit
def tile_filter(img, wts, out, H, W, Ho, Wo, scale, KH: tl.constexpr, KW: tl.constexpr, B: tl.constexpr,
                U8: tl.constexpr, MASK_LOADS: tl.constexpr, MASK_STORE: tl.constexpr, PLAIN_CAST: tl.constexpr):
    # valid correlation, B x B outputs per program, taps in order (acc + w*x in float32); U8: the
    # uint8 image with the float32 accumulator, acc * 2**-shift, trunc, saturate to uint8
    ys = tl.program_id(0) * B + tl.arange(0, B)
    xs = tl.program_id(1) * B + tl.arange(0, B)
    m = (ys[:, None] < Ho) & (xs[None, :] < Wo)
    acc = tl.zeros((B, B), dtype=tl.float32)
    for i in range(KH):
        for j in range(KW):
            p = img + (ys[:, None] + i) * W + xs[None, :] + j
            if MASK_LOADS:
                x = tl.load(p, mask=m, other=0)
            else:
                x = tl.load(p)                                  # the mistake: no mask
            acc = acc + tl.load(wts + i * KW + j) * x.to(tl.float32)
    if U8:
        f = acc * scale
        f = tl.where(f < 0, -tl.floor(-f), tl.floor(f))     # trunc
        if PLAIN_CAST:
            r = f.to(tl.uint8)                               # the mistake: no saturation
        else:
            f = tl.where(f != f, 0.0, f)                     # NaN -> 0, then clamp
            r = tl.minimum(tl.maximum(f, 0.0), 255.0).to(tl.uint8)
    else:
        r = acc
    dst = out + ys[:, None] * Wo + xs[None, :]
    if MASK_STORE:
        tl.store(dst, r, mask=m)
    else:
        tl.store(dst, r)                                     # the mistake: no mask


def _filter_run(name, u8=False, **flags):
    def run(problem, out):
        img = np.ascontiguousarray(problem.inputs["image"])
        w = np.ascontiguousarray(problem.inputs["weights"], dtype=np.float32)
        H, W = img.shape
        KH, KW = w.shape
        Ho, Wo = H - KH + 1, W - KW + 1
        scale = 2.0 ** -int(problem.option("shift")) if u8 else 1.0
        return kit.launch(tile_filter, (kit.cdiv(Ho, B), kit.cdiv(Wo, B)), img, w, kit.OUT, H, W, Ho, Wo, scale,
                          out=out, what=f"filter2d/trihazards/{name}", KH=KH, KW=KW, B=B, U8=u8, **flags)
    return run


def _filter_constraint(problem, params):
    d = problem.dims
    if d["h"] < d["kh"] or d["w"] < d["kw"]:
        return "the image is smaller than the kernel (an empty valid output)"
    ho, wo = d["h"] - d["kh"] + 1, d["w"] - d["kw"] + 1
    return kit.budget(kit.cdiv(ho, B) * kit.cdiv(wo, B), d["kh"] * d["kw"])


FILTER = {"c": (0,), "boundary": ("valid",), "flip": (False,), "kh": Range(1, 5), "kw": Range(1, 5),
          "h": Range(1, 40), "w": Range(1, 40)}
FILTER_F32 = dict(FILTER, dtype=("float32",), accumulator=(None, "float32"), out_dtype=(None, "float32"))
FILTER_U8 = dict(FILTER, dtype=("uint8",), accumulator=("float32",), shift=Range(0, 8), rounding=("trunc",),
                 cast=("saturate",), out_dtype=(None, "uint8"))
OK = {"MASK_LOADS": True, "MASK_STORE": True, "PLAIN_CAST": False}


# ----------------------------------------------------------------------------- matvec

@kit.jit
def rows_reduce(m, v, y, R, C, B: tl.constexpr, DROP_LAST: tl.constexpr, NO_OTHER: tl.constexpr = False):
    # B rows per program, column blocks of B reduced by tl.sum, the last one masked
    rows = tl.program_id(0) * B + tl.arange(0, B)
    acc = tl.zeros((B,), dtype=tl.float32)
    stop = C - C % B if DROP_LAST else C                      # the mistake: the last partial block dropped
    for c0 in range(0, stop, B):
        cols = c0 + tl.arange(0, B)
        mk = (rows[:, None] < R) & (cols[None, :] < C)
        if NO_OTHER:
            a = tl.load(m + rows[:, None] * C + cols[None, :], mask=mk)   # the mistake: masked lanes undefined
        else:
            a = tl.load(m + rows[:, None] * C + cols[None, :], mask=mk, other=0)
        acc += tl.sum(a * tl.load(v + cols, mask=cols < C, other=0)[None, :], axis=1)
    tl.store(y + rows, acc, mask=rows < R)


@kit.jit
def rows_strided(m, smr, smc, v, sv, y, R, C, B: tl.constexpr, USE_STRIDES: tl.constexpr):
    # rows_reduce on inputs as they lie in memory: m[r, c] at m + r*smr + c*smc, v[c] at v + c*sv
    rows = tl.program_id(0) * B + tl.arange(0, B)
    acc = tl.zeros((B,), dtype=tl.float32)
    for c0 in range(0, C, B):
        cols = c0 + tl.arange(0, B)
        if USE_STRIDES:
            pm = m + rows[:, None] * smr + cols[None, :] * smc
            pv = v + cols * sv
        else:
            pm = m + rows[:, None] * C + cols[None, :]               # the mistake: contiguous rows assumed
            pv = v + cols
        a = tl.load(pm, mask=(rows[:, None] < R) & (cols[None, :] < C), other=0)
        acc += tl.sum(a * tl.load(pv, mask=cols < C, other=0)[None, :], axis=1)
    tl.store(y + rows, acc, mask=rows < R)


@kit.jit
def rows_zero(y, R, B: tl.constexpr):
    rows = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y + rows, tl.zeros((B,), dtype=tl.float32), mask=rows < R)


@kit.jit
def rows_accumulate(m, v, y, R, C, c0, B: tl.constexpr):
    # y[rows] += the dot product of one column block (starting at c0) of m with v
    rows = tl.program_id(0) * B + tl.arange(0, B)
    cols = c0 + tl.arange(0, B)
    a = tl.load(m + rows[:, None] * C + cols[None, :], mask=(rows[:, None] < R) & (cols[None, :] < C), other=0)
    part = tl.sum(a * tl.load(v + cols, mask=cols < C, other=0)[None, :], axis=1)
    old = tl.load(y + rows, mask=rows < R, other=0)
    tl.store(y + rows, old + part, mask=rows < R)


@kit.jit
def block_partials(m, v, work, R, C, NB, B: tl.constexpr, SKIP_LAST: tl.constexpr):
    # program (row block, column block): the partial dot products of its B x B tile into
    # work[col block, row]
    rows = tl.program_id(0) * B + tl.arange(0, B)
    cb = tl.program_id(1)
    cols = cb * B + tl.arange(0, B)
    a = tl.load(m + rows[:, None] * C + cols[None, :], mask=(rows[:, None] < R) & (cols[None, :] < C), other=0)
    part = tl.sum(a * tl.load(v + cols, mask=cols < C, other=0)[None, :], axis=1)
    keep = rows < R
    if SKIP_LAST:
        keep = keep & (cb < NB - 1)                             # the mistake: the last column block not stored
    tl.store(work + cb * R + rows, part, mask=keep)


@kit.jit
def sum_partials(work, y, R, NB, B: tl.constexpr):
    rows = tl.program_id(0) * B + tl.arange(0, B)
    acc = tl.zeros((B,), dtype=tl.float32)
    for cb in range(0, NB):
        acc += tl.load(work + cb * R + rows, mask=rows < R, other=0)
    tl.store(y + rows, acc, mask=rows < R)


@kit.jit
def rows_dot(m, v, y, R, C, IEEE: tl.constexpr):
    # 16 rows per program; v broadcast over 16 columns so that tl.dot applies; column 0 kept
    rows = tl.program_id(0) * 16 + tl.arange(0, 16)
    j = tl.arange(0, 16)
    acc = tl.zeros((16, 16), dtype=tl.float32)
    for c0 in range(0, C, 16):
        cols = c0 + tl.arange(0, 16)
        a = tl.load(m + rows[:, None] * C + cols[None, :], mask=(rows[:, None] < R) & (cols[None, :] < C), other=0)
        x = tl.load(v + cols, mask=cols < C, other=0)[:, None] + tl.zeros((16, 16), dtype=tl.float32)
        if IEEE:
            acc = tl.dot(a, x, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, x, acc)                            # the mistake: the default (TF32 on the GPU)
    tl.store(y + rows, tl.sum(tl.where(j[None, :] == 0, acc, 0.0), axis=1), mask=rows < R)


def _matvec_run(name, kernel, rows_per_program, **flags):
    def run(problem, out):
        m, v = (np.ascontiguousarray(problem.inputs[k]) for k in "mv")
        R, C = m.shape
        return kit.launch(kernel, (kit.cdiv(R, rows_per_program),), m, v, kit.OUT, R, C, out=out,
                          what=f"matvec/trihazards/{name}", **flags)
    return run


def _matvec_constraint(rows_per_program, cols_per_step):
    def constraint(problem, params):
        d = problem.dims
        return kit.budget(kit.cdiv(d["rows"], rows_per_program), kit.cdiv(d["cols"], cols_per_step))
    return constraint


def _strided_run(name, USE_STRIDES):
    def run(problem, out):
        m, v = problem.inputs["m"], problem.inputs["v"]      # as drawn: C-contiguous or strided views
        R, C = m.shape
        return kit.launch(rows_strided, (kit.cdiv(R, B),), kit.strided(m), *kit.strides(m), kit.strided(v),
                          *kit.strides(v), kit.OUT, R, C, out=out, what=f"matvec/trihazards/{name}", B=B,
                          USE_STRIDES=USE_STRIDES)
    return run


def _two_launch_run(name, ZERO_FIRST):
    def run(problem, out):
        m, v = (np.ascontiguousarray(problem.inputs[k]) for k in "mv")
        R, C = m.shape
        grid = (kit.cdiv(R, B),)
        if ZERO_FIRST:                                          # the mistake: out not zeroed first
            kit.launch(rows_zero, grid, kit.OUT, R, out=out, what=f"matvec/trihazards/{name}", B=B)
        for c0 in range(0, C, B):
            kit.launch(rows_accumulate, grid, m, v, kit.OUT, R, C, c0, out=out, what=f"matvec/trihazards/{name}",
                       B=B)
        return out
    return run


def _scratch_run(name, SKIP_LAST):
    def run(problem, out):
        m, v = (np.ascontiguousarray(problem.inputs[k]) for k in "mv")
        R, C = m.shape
        nb = kit.cdiv(C, B)
        work = kit.scratch(nb * R * 4, np.float32)
        kit.launch(block_partials, (kit.cdiv(R, B), nb), m, v, work, R, C, nb, what=f"matvec/trihazards/{name}",
                   B=B, SKIP_LAST=SKIP_LAST)
        return kit.launch(sum_partials, (kit.cdiv(R, B),), work, kit.OUT, R, nb, out=out,
                          what=f"matvec/trihazards/{name}", B=B)
    return run


def _launches_constraint(problem, params):
    d = problem.dims
    return kit.budget(kit.cdiv(d["rows"], B) * kit.cdiv(d["cols"], B) * 2)


MATVEC = {"dtype": ("float32",), "rows": Range(1, 64), "cols": Range(1, 64)}


# ----------------------------------------------------------------------------- the variants

def _variant(op, name, run, supports, constraint, doc, **kw):
    return Variant(op=op, backend="trihazards", name=name, run=run, supports=dict(supports), constraint=constraint,
                   available=kit.available, doc=doc, **kw)


def _pair(key, op, mk_run, supports, constraint, bad, good, doc_bad, doc_good, **kw):
    """(hazard, twin): ``mk_run(name, **flags)`` with the mistake's flags and the fixed flags."""
    return (_variant(op, key, mk_run(key, **bad), supports, constraint, doc_bad, **kw),
            _variant(op, f"{key}_fixed", mk_run(f"{key}_fixed", **good), supports, constraint, doc_good, **kw))


_PAIRS = {
    "triton_unmasked_load": _pair("triton_unmasked_load", "filter2d", _filter_run, FILTER_F32, _filter_constraint,
                                  dict(OK, MASK_LOADS=False), OK, "tile loads without the output mask",
                                  "masked tile loads"),
    "triton_unmasked_store": _pair("triton_unmasked_store", "filter2d", _filter_run, FILTER_F32, _filter_constraint,
                                   dict(OK, MASK_STORE=False), OK, "tile store without the output mask",
                                   "masked tile store"),
    "triton_plain_cast": _pair("triton_plain_cast", "filter2d", lambda n, **f: _filter_run(n, u8=True, **f),
                               FILTER_U8, _filter_constraint, dict(OK, PLAIN_CAST=True), OK,
                               "uint8 path: plain float -> uint8 cast", "uint8 path: NaN -> 0, clamp, cast"),
    "triton_drops_last_block": _pair("triton_drops_last_block", "matvec",
                                     lambda n, **f: _matvec_run(n, rows_reduce, B, B=B, **f), MATVEC,
                                     _matvec_constraint(B, B), {"DROP_LAST": True}, {"DROP_LAST": False},
                                     "column blocks up to C - C % B", "every column block, the last masked"),
    "triton_tf32_dot": _pair("triton_tf32_dot", "matvec", lambda n, **f: _matvec_run(n, rows_dot, 16, **f),
                             MATVEC, _matvec_constraint(16, 16), {"IEEE": False}, {"IEEE": True},
                             "tl.dot in its default precision (TF32)", "tl.dot(input_precision='ieee')"),
    "triton_masked_no_other": _pair("triton_masked_no_other", "matvec",
                                    lambda n, **f: _matvec_run(n, rows_reduce, B, B=B, DROP_LAST=False, **f),
                                    MATVEC, _matvec_constraint(B, B), {"NO_OTHER": True}, {"NO_OTHER": False},
                                    "masked tile load without other= feeding tl.sum",
                                    "masked tile load with other=0"),
    "triton_strided_as_contiguous": _pair("triton_strided_as_contiguous", "matvec", _strided_run, MATVEC,
                                          _matvec_constraint(B, B), {"USE_STRIDES": False}, {"USE_STRIDES": True},
                                          "declares strided inputs, addresses them as contiguous rows",
                                          "addresses its inputs through the strides it is given",
                                          layouts=("contiguous", "strided")),
    "triton_accumulates_unzeroed": _pair("triton_accumulates_unzeroed", "matvec", _two_launch_run, MATVEC,
                                         _launches_constraint, {"ZERO_FIRST": False}, {"ZERO_FIRST": True},
                                         "one launch per column block adding into out, never zeroed",
                                         "a launch zeroes out, then one per column block adds into it"),
    "triton_scratch_short": _pair("triton_scratch_short", "matvec", _scratch_run, MATVEC, _launches_constraint,
                                  {"SKIP_LAST": True}, {"SKIP_LAST": False},
                                  "partials into a scratch buffer, the last column block's never stored",
                                  "partials into a scratch buffer, then summed per row"),
}

HAZARDS = {name: pair[0] for name, pair in _PAIRS.items()}
FIXED = {name: pair[1] for name, pair in _PAIRS.items()}

backend = Backend(name="trihazards", variants=lambda: [*HAZARDS.values(), *FIXED.values()], **backend_fields())
