"""refconv-buggy: a refconv backend of deliberately wrong variants (a test fixture).

Every variant here is wrong on *some* inputs only, by one small, plausible bug (see README.md);
everywhere else it returns exactly the spec's result (computed with ``refconv.specs`` on the
same inputs), so whatever ``refconv check`` reports is the planted bug.  Tests assert that the
checker finds each bug within the ``ci`` profile, shrinks it to a small reproducer, reports the
unwritten pixel through the poisoned output buffer, survives the hang and reports the exception.
"""
from __future__ import annotations

import os
import time

import numpy as np

from refconv import Backend, Param, Range, Variant

NAME = "buggy"


def _quiet(f):
    """Run a variant with NumPy floating-point warnings off (the checker draws Inf/NaN on purpose)."""
    import functools

    @functools.wraps(f)
    def run(*args, **kwargs):
        with np.errstate(all="ignore"):
            return f(*args, **kwargs)
    return run
BOUNDARIES_NO_VALID = ("zero", "replicate", "reflect", "wrap")


def _spec(problem, weights=None, **override):
    """The spec's result for ``problem``, optionally with other weights / options."""
    from refconv import specs
    args, kwargs = problem.spec_args()
    if weights is not None:
        args = [args[0], weights] + list(args[2:])
    kwargs.update(override)
    return getattr(specs, problem.op)(*args, **kwargs)


def _store(out, result):
    out[...] = result
    return out


# ----------------------------------------------------------------------------- filter2d

def halo_off_by_one(problem, out, block=8):
    """Tiled filter2d: each block×block output tile loads its input tile plus a (KH-1)×(KW-1)
    halo.  For tiles cut by the image edge the halo extent is computed from the clipped tile
    size minus one, so the window's last row (last column) reads 0 there."""
    exact = _spec(problem)
    h, w = exact.shape[-2:]
    wts = np.asarray(problem.inputs["weights"])
    kh, kw = wts.shape
    part_rows = h % block != 0 and kh > 1        # the last row tile is partial
    part_cols = w % block != 0 and kw > 1
    res = exact.copy()
    r0, c0 = h - h % block, w - w % block        # first row / col of the partial tiles

    def short(rows, cols):
        ws = wts.copy()
        if rows:
            ws[-1, :] = 0
        if cols:
            ws[:, -1] = 0
        return _spec(problem, weights=ws)

    if part_rows:
        res[..., r0:, :] = short(True, False)[..., r0:, :]
    if part_cols:
        res[..., :, c0:] = short(False, True)[..., :, c0:]
    if part_rows and part_cols:
        res[..., r0:, c0:] = short(True, True)[..., r0:, c0:]
    return _store(out, res)


def wrong_border(problem, out):
    """Zero padding implemented with clamped reads (replicate)."""
    return _store(out, _spec(problem, boundary="replicate"))


def no_shift(problem, out):
    """The final ``>> shift`` is forgotten."""
    return _store(out, _spec(problem, shift=0))


def wrap_not_saturate(problem, out):
    """The final conversion to uint8 is a plain C cast (wrap) instead of a saturating one."""
    return _store(out, _spec(problem, cast="wrap"))


def unwritten_pixel(problem, out):
    """Output written two pixels at a time (vec2 stores); for an odd width the tail loop that
    writes the last column runs over rows 0..OH-2 only, so the last pixel of the last channel's
    last row is never written."""
    res = _spec(problem)
    if res.size == 0:
        return out
    oh, ow = res.shape[-2:]
    o3, r3 = out.reshape((-1, oh, ow)), res.reshape((-1, oh, ow))
    even = ow - ow % 2
    o3[:, :, :even] = r3[:, :, :even]             # paired stores
    if ow % 2:
        o3[:-1, :, ow - 1] = r3[:-1, :, ow - 1]   # earlier channels: full tail column
        o3[-1, :oh - 1, ow - 1] = r3[-1, :oh - 1, ow - 1]   # last channel: off by one row
    return out


# ----------------------------------------------------------------------------- kron

def transposed_block(problem, out):
    """One thread per element of a p×q block: thread t = k*q + l computes A[i,j]*B[k,l] but its
    output position inside the block is decoded column-major, (t % p, t // p)."""
    a, b = problem.inputs["a"], problem.inputs["b"]
    (m, n), (p, q) = a.shape, b.shape
    for i in range(m):
        for j in range(n):
            blk = a[i, j] * b                            # same dtype rules as the spec
            for k in range(p):
                for l in range(q):
                    t = k * q + l
                    out[i * p + t % p, j * q + t // p] = blk[k, l]
    return out


# ----------------------------------------------------------------------------- matvec

def drop_last_col(problem, out, unroll=4):
    """Column loop unrolled by ``unroll``; the remainder loop runs to ``cols - 1``."""
    m, v = problem.inputs["m"], problem.inputs["v"]
    cols = m.shape[1]
    main = cols - cols % unroll
    y = m[:, :main] @ v[:main]
    if cols % unroll:
        y = y + m[:, main:cols - 1] @ v[main:cols - 1]
    return _store(out, y)


def hangs(problem, out):
    """Block-per-row reduction behind a barrier sized for 4 rows: with more than 3 rows the
    barrier is never passed (modelled as a very long sleep)."""
    if problem.dims["rows"] > 3:
        deadline = time.monotonic() + float(os.environ.get("REFCONV_BUGGY_HANG_SECONDS", "3600"))
        while time.monotonic() < deadline:
            time.sleep(0.05)
    return _store(out, _spec(problem))


# ----------------------------------------------------------------------------- conv2d

def raises(problem, out):
    """Direct convolution over a zero-padded staging copy of x that is allocated (H + pad) ×
    (W + pad) instead of (H + 2·pad) × (W + 2·pad): a window reaching the bottom or right
    padding indexes past the buffer (IndexError); otherwise the result is right."""
    ins, o = problem.inputs, problem.options
    x, w = ins["x"], ins["w"]
    s, pad, d = o.get("stride", 1), o.get("padding", 0), o.get("dilation", 1)
    n, c, h, wd = x.shape
    mm, _, r, sw = w.shape
    ho = (h + 2 * pad - d * (r - 1) - 1) // s + 1
    wo = (wd + 2 * pad - d * (sw - 1) - 1) // s + 1
    xp = np.zeros((n, c, h + pad, wd + pad), x.dtype)        # bug: should be + 2 * pad
    xp[:, :, pad:pad + h, pad:pad + wd] = x[:, :, :h, :wd]
    iy = np.arange(ho)[:, None] * s + np.arange(r)[None, :] * d     # (Ho, R) padded rows
    ix = np.arange(wo)[:, None] * s + np.arange(sw)[None, :] * d    # (Wo, S) padded cols
    patches = xp[:, :, iy[:, :, None, None], ix[None, None, :, :]]  # (N, C, Ho, R, Wo, S)
    y = np.einsum("ncyrxs,mcrs->nmyx", patches, w)
    if "bias" in ins:
        y = y + ins["bias"][None, :, None, None]
    return _store(out, y.astype(x.dtype))


# ----------------------------------------------------------------------------- the backend

def _variants():
    V = lambda op, name, run, **kw: Variant(op=op, backend=NAME, name=name, run=_quiet(run),  # noqa: E731
                                           origin="refconv-buggy (planted bug)",
                                           doc=(run.__doc__ or "").strip().splitlines()[0], **kw)
    u8_int = {"dtype": ("uint8",), "c": (0,), "kh": Range(1, 5), "kw": Range(1, 5), "shift": Range(0, 4)}
    return [
        V("filter2d", "halo_off_by_one", halo_off_by_one,
          supports={"dtype": ("float32",), "boundary": ("zero", "replicate"), "kh": Range(1, 7),
                    "kw": Range(1, 7), "out_dtype": (None,)},
          params=(Param("block", (4, 8), 8),)),
        V("filter2d", "wrong_border", wrong_border,
          supports={**u8_int, "boundary": ("zero",), "out_dtype": (None,)}),
        V("filter2d", "no_shift", no_shift,
          supports={**u8_int, "accumulator": ("int",), "boundary": BOUNDARIES_NO_VALID,
                    "out_dtype": (None,)}),
        V("filter2d", "wrap_not_saturate", wrap_not_saturate,
          supports={**u8_int, "cast": ("saturate",), "boundary": BOUNDARIES_NO_VALID,
                    "out_dtype": (None,)}),
        V("filter2d", "unwritten_pixel", unwritten_pixel,
          supports={"dtype": ("uint8", "float32"), "out_dtype": (None,)}),
        V("kron", "transposed_block", transposed_block,
          supports={"dtype": ("float64", "float32", "int32", "uint8")}),
        V("matvec", "drop_last_col", drop_last_col,
          supports={"dtype": ("float32", "float64")},
          params=(Param("unroll", (2, 4), 4),)),
        V("matvec", "hangs", hangs, supports={"dtype": ("float32", "float64")}),
        V("conv2d", "raises", raises,
          supports={"dtype": ("float32", "float64"), "groups": (1,)}),
    ]


backend = Backend(name=NAME, variants=_variants,
                  describe=lambda: "deliberately wrong variants (refconv test plugin)")
