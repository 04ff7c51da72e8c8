"""``conv2d``: NCHW 2-D convolution layer (cross-correlation), torch.nn.functional.conv2d semantics.

The module also holds the op's record (``RECORD``: domains, drawing, acceptance, bench problems).
"""
from __future__ import annotations

import numpy as np

from .dotbound import dot, dot_sums, dot_sums_in_f
from .peer import PeerCall, cuda_tensor, cudnn_conv2d
from .record import BenchProblem, Directed, Input, OpRecord, Range

from ._validate import as_array, int_pair, integer


#: The spec builds the zero-padded input ``xpad`` in memory: a padding that would make it larger
#: than this many elements (2 GiB of float64) is refused by name before anything is allocated.
MAX_PADDED_ELEMENTS = 2 ** 28


def resolve(x, w, bias, stride, padding, dilation, groups):
    op = "conv2d"
    x = as_array("x", x, ndims=4, dtypes=("float32", "float64"), op=op)
    w = as_array("w", w, ndims=4, dtypes=("float32", "float64"), op=op)
    if w.dtype != x.dtype:
        raise TypeError(f"{op}: w has dtype {w.dtype.name} but x has {x.dtype.name}; accepted: the same dtype")
    if bias is not None:
        bias = as_array("bias", bias, ndims=1, dtypes=(x.dtype,), op=op)
    stride = int_pair("stride", stride, lo=1, op=op)
    padding = int_pair("padding", padding, lo=0, op=op)
    dilation = int_pair("dilation", dilation, lo=1, op=op)
    groups = integer("groups", groups, lo=1, op=op)
    n, c, h, wd = x.shape
    m, cg, r, s = w.shape
    if 0 in x.shape:
        raise ValueError(f"{op}: x must be non-empty, got shape {x.shape}; accepted: (N, C, H, W) all >= 1")
    if 0 in w.shape:
        raise ValueError(f"{op}: w must be non-empty, got shape {w.shape}; accepted: (M, C//groups, R, S) all >= 1")
    if c % groups or m % groups:
        raise ValueError(f"{op}: groups={groups} must divide both C={c} (x.shape[1]) and M={m} (w.shape[0]); "
                         f"accepted: a common divisor")
    if cg != c // groups:
        raise ValueError(f"{op}: w has shape {w.shape}, w.shape[1] must be C//groups = {c // groups} "
                         f"(x has C={c}, groups={groups})")
    if bias is not None and bias.shape != (m,):
        raise ValueError(f"{op}: bias has shape {bias.shape}; accepted: ({m},) (w.shape[0])")
    padded = n * c * (h + 2 * padding[0]) * (wd + 2 * padding[1])
    if padded > MAX_PADDED_ELEMENTS and (padding[0] or padding[1]):
        raise ValueError(f"{op}: padding={padding} makes the zero-padded input (N, C, H + 2*padding[0], "
                         f"W + 2*padding[1]) = {(n, c, h + 2 * padding[0], wd + 2 * padding[1])}, {padded} "
                         f"elements; accepted: padding for which that is at most {MAX_PADDED_ELEMENTS} "
                         f"elements (the spec materialises the padded input)")
    oh = (h + 2 * padding[0] - dilation[0] * (r - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (s - 1) - 1) // stride[1] + 1
    if oh < 1 or ow < 1:
        raise ValueError(f"{op}: output would be empty ({oh}x{ow}) for x of shape {x.shape}, w of shape "
                         f"{w.shape}, stride={stride}, padding={padding}, dilation={dilation}; accepted: "
                         f"H + 2*padding - dilation*(R-1) - 1 >= 0 (and the same for W)")
    return dict(x=x, w=w, bias=bias, stride=stride, padding=padding, dilation=dilation,
                groups=groups, oh=oh, ow=ow)


def windows(a: dict):
    """Yield ``(r, s, xwin)`` with ``xwin`` of shape (N, C, OH, OW): the padded input sampled at
    tap (r, s) for every output position."""
    x, (sh, sw), (ph, pw), (dh, dw) = a["x"], a["stride"], a["padding"], a["dilation"]
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = a["oh"], a["ow"]
    _, _, r, s = a["w"].shape
    for i in range(r):
        for j in range(s):
            y0, x0 = i * dh, j * dw
            yield i, j, xp[:, :, y0:y0 + sh * (oh - 1) + 1:sh, x0:x0 + sw * (ow - 1) + 1:sw]


def conv2d(x, w, bias=None, *, stride=1, padding=0, dilation=1, groups=1):
    r"""2-D convolution layer, exactly ``torch.nn.functional.conv2d`` semantics.

    ``x``: ``(N, C, H, W)``; ``w``: ``(M, C//groups, R, S)``; ``bias``: None or ``(M,)``; all the
    same dtype, float32 or float64.  ``stride``, ``padding`` (zero padding), ``dilation``: an int
    or a pair (rows, columns); ``groups`` divides C and M.  Output ``(N, M, OH, OW)``::

        OH = floor((H + 2*ph - dh*(R-1) - 1) / sh) + 1      (OW likewise)
        g  = m // (M // groups)
        out[n, m, y, x] = bias[m] + sum_{c<C/g} sum_{r<R} sum_{s<S}
                          w[m, c, r, s] * xpad[n, g*(C/g) + c, y*sh + r*dh, x*sw + s*dw]

    (cross-correlation, no kernel flip; ``xpad`` is ``x`` with ``padding`` zeros on each side).

    **Point value.** The sum (bias included) is computed in float64 — in an unspecified order —
    and rounded once to the dtype.  For float32 this is the exact result rounded (up to float64
    error, far below a float32 ulp); for float64 it is one float64 summation order.  The
    tolerance (``refconv.tolerance``) accepts any summation order and FMA contraction,
    ``n = C/groups*R*S (+1 with bias)`` terms.  Ghost (padding) cells contribute ``w*0`` (NaN if
    ``w`` is +-Inf); NaN/Inf propagate as IEEE arithmetic does.  An empty output is an error.
    """
    a = resolve(x, w, bias, stride, padding, dilation, groups)
    x, w, groups = a["x"], a["w"], a["groups"]
    n, c, _, _ = x.shape
    m, cg = w.shape[:2]
    mg = m // groups
    out = np.zeros((n, m, a["oh"], a["ow"]), np.float64)
    w64 = w.astype(np.float64)
    with np.errstate(all="ignore"):
        for i, j, xw in windows(a):
            xw = xw.astype(np.float64)
            for g in range(groups):
                out[:, g * mg:(g + 1) * mg] += np.einsum(
                    "nchw,mc->nmhw", xw[:, g * cg:(g + 1) * cg], w64[g * mg:(g + 1) * mg, :, i, j])
        if a["bias"] is not None:
            out += a["bias"].astype(np.float64)[None, :, None, None]
        return out.astype(x.dtype)


# ----------------------------------------------------------------------------- acceptance

#: the work (output elements x terms) from which a problem takes a GEMM path of :func:`accepted`
#: (cuconv E4: 2.4e9, 231 s through the per-term engine, seconds here; E3 float64: 94 s, E4
#: float32 with NaNs: 138 s, on a CI core)
FAST_MIN_WORK = 1 << 26


def _gemm(wt, xt):
    """``(mg, cg) . (n, cg, oh, ow) -> (n, mg, oh, ow)``: one tap and group of the conv as a GEMM."""
    return np.moveaxis(np.tensordot(wt, xt, axes=([1], [1])), 0, 1)


def _tap_groups(a: dict, dtype):
    """Yield ``(out, wt, xt)``: per tap and group, the output channels' slice, the weights
    ``(mg, cg)`` and the windowed input ``(n, cg, oh, ow)``, both in ``dtype``."""
    w, groups = a["w"], a["groups"]
    m, cg = w.shape[:2]
    mg = m // groups
    wd = w.astype(dtype)
    for i, j, xw in windows(a):
        xw = np.ascontiguousarray(xw, dtype=dtype)
        for g in range(groups):
            yield ((slice(None), slice(g * mg, (g + 1) * mg)), wd[g * mg:(g + 1) * mg, :, i, j],
                   xw[:, g * cg:(g + 1) * cg])


def _special_terms(a: dict, shape: tuple):
    """Where some term ``w*x`` (or the bias) is certainly NaN, +inf or -inf, from indicator GEMMs
    (exact counts in float64): a term is NaN when an operand is NaN or an infinity meets a zero
    (``isnan(w) + isnan(x) - both + inf(w) zero(x) + zero(w) inf(x)``: the last three exclude
    each other and the first two), else infinite when an operand is, with the sign of the
    product (``w > 0`` and ``x > 0``, or both negative: positive)."""
    nan_c, pinf_c, ninf_c = (np.zeros(shape, np.float64) for _ in range(3))
    for out, wt, xt in _tap_groups(a, np.float64):
        f = lambda v: v.astype(np.float64)
        wn, xn, wi, xi = f(np.isnan(wt)), f(np.isnan(xt)), f(np.isinf(wt)), f(np.isinf(xt))
        wz, xz, wp, xp, wm, xm = f(wt == 0), f(xt == 0), f(wt > 0), f(xt > 0), f(wt < 0), f(xt < 0)
        nan_c[out] += (_gemm(wn, np.ones_like(xn)) + _gemm(np.ones_like(wn), xn) - _gemm(wn, xn)
                       + _gemm(wi, xz) + _gemm(wz, xi))
        pinf_c[out] += (_gemm(wp * wi, xp) + _gemm(wp * (1 - wi), xp * xi)
                        + _gemm(wm * wi, xm) + _gemm(wm * (1 - wi), xm * xi))
        ninf_c[out] += (_gemm(wp * wi, xm) + _gemm(wp * (1 - wi), xm * xi)
                        + _gemm(wm * wi, xp) + _gemm(wm * (1 - wi), xp * xi))
    bias = a["bias"]
    if bias is not None:
        b = bias.astype(np.float64)[None, :, None, None]
        nan_c += np.isnan(b)
        pinf_c += b == np.inf
        ninf_c += b == -np.inf
    return nan_c > 0, pinf_c > 0, ninf_c > 0


def _finite_only(a: dict) -> dict:
    """``a`` with every non-finite weight, input and bias value set to zero: their terms drop out
    of the finite sums (the per-term engine's terms: a NaN or infinite product counts as 0 there)."""
    z = lambda v: None if v is None else np.where(np.isfinite(v), v, 0).astype(v.dtype)
    return {**a, "x": z(a["x"]), "w": z(a["w"]), "bias": z(a["bias"])}


def _accepted_by_gemm(a: dict, shape: tuple):
    """The accepted set of a float32 conv from its sums (:func:`dot_sums`), each a float64 GEMM a
    tap and group over the channels: the centre ``w . x``, ``S = |w| . |x|``, the positive and
    negative parts from ``w+ . x+``, ``w- . x-``, ``w+ . x-``, ``w- . x+`` (``v+ = max(v, 0)``,
    ``v- = max(-v, 0)``) and the counts of positive and negative products from the sign indicators
    (exact integers in float64).  A float32 product is exact in float64, so every term is.  With
    non-finite inputs the sums take the finite terms (:func:`_finite_only`) and indicator GEMMs
    flag the certain NaN and infinite terms (:func:`_special_terms`)."""
    special = not all(v is None or np.isfinite(v).all() for v in (a["x"], a["w"], a["bias"]))
    flags = _special_terms(a, shape) if special else (None, None, None)
    if special:
        a = _finite_only(a)
    x, w, bias = a["x"], a["w"], a["bias"]
    sums = {k: np.zeros(shape, np.float64) for k in ("center", "S", "P", "N", "npos", "nneg")}
    for out, wt, xt in _tap_groups(a, np.float64):
        wp, wn, xp, xn = np.maximum(wt, 0), np.maximum(-wt, 0), np.maximum(xt, 0), np.maximum(-xt, 0)
        sums["center"][out] += _gemm(wt, xt)
        sums["S"][out] += _gemm(np.abs(wt), np.abs(xt))
        sums["P"][out] += _gemm(wp, xp) + _gemm(wn, xn)
        sums["N"][out] -= _gemm(wp, xn) + _gemm(wn, xp)
        ip, in_, jp, jn = ((v > 0).astype(np.float64) for v in (wt, -wt, xt, -xt))
        sums["npos"][out] += _gemm(ip, jp) + _gemm(in_, jn)
        sums["nneg"][out] += _gemm(ip, jn) + _gemm(in_, jp)
    n = w.shape[1] * w.shape[2] * w.shape[3]
    if bias is not None:
        b = bias.astype(np.float64)[None, :, None, None]
        sums["center"] += b
        sums["S"] += np.abs(b)
        sums["P"] += np.maximum(b, 0)
        sums["N"] += np.minimum(b, 0)
        sums["npos"] += b > 0
        sums["nneg"] += b < 0
        n += 1
    return dot_sums(shape, x.dtype, n, sums["center"], sums["S"], sums["P"], sums["N"],
                    sums["npos"].astype(np.int64), sums["nneg"].astype(np.int64), *flags)[0]


def _accepted_by_gemm_in_f64(a: dict, shape: tuple):
    """The accepted set of a float64 conv from two float64 GEMM sums a tap and group, ``w . x`` and
    ``|w| . |x|`` (:func:`dot_sums_in_f`: the products round, so the bound covers the centre's own
    error as well as the kernel's); with non-finite inputs the sums take the finite terms and
    indicator GEMMs flag the special ones, as in :func:`_accepted_by_gemm`.  None where a result
    could overflow."""
    special = not all(v is None or np.isfinite(v).all() for v in (a["x"], a["w"], a["bias"]))
    flags = _special_terms(a, shape) if special else (None, None, None)
    if special:
        a = _finite_only(a)
    w, bias = a["w"], a["bias"]
    center, S = np.zeros(shape, np.float64), np.zeros(shape, np.float64)
    with np.errstate(all="ignore"):       # a sum that overflows: dot_sums_in_f declines it
        for out, wt, xt in _tap_groups(a, np.float64):
            center[out] += _gemm(wt, xt)
            S[out] += _gemm(np.abs(wt), np.abs(xt))
    n = w.shape[1] * w.shape[2] * w.shape[3]
    if bias is not None:
        center += bias[None, :, None, None]
        S += np.abs(bias)[None, :, None, None]
        n += 1
    got = dot_sums_in_f(shape, np.float64, n, center, S, *flags)
    return None if got is None else got[0]


def accepted(inputs: dict, o: dict):
    """The accepted set of ``conv2d(x, w, bias, **o)`` (``o`` complete, ``groups`` included): one
    dot product per output element, n = C/groups*R*S terms (+1 with bias).  Problems with at least
    :data:`FAST_MIN_WORK` of work take a GEMM path, never declared exact: float32 ones
    :func:`_accepted_by_gemm` (the per-term engine's bound from the same sums, special values
    included), float64 ones :func:`_accepted_by_gemm_in_f64` (a bound that also covers the
    float64 GEMM's own rounding, about twice the per-term engine's) unless a result could overflow.  The others take the per-term engine (:func:`dot`), which also finds where
    the sum is exact."""
    a = resolve(inputs["x"], inputs["w"], inputs.get("bias"), o["stride"], o["padding"],
                o["dilation"], o["groups"])
    x, w, bias = a["x"], a["w"], a["bias"]
    n_, c = x.shape[:2]
    m, cg = w.shape[:2]
    mg = m // a["groups"]
    shape = (n_, m, a["oh"], a["ow"])
    work = int(np.prod(shape)) * (cg * w.shape[2] * w.shape[3] + (bias is not None))
    if work >= FAST_MIN_WORK and x.dtype == np.float32:
        return _accepted_by_gemm(a, shape)
    if work >= FAST_MIN_WORK and x.dtype == np.float64:
        got = _accepted_by_gemm_in_f64(a, shape)
        if got is not None:
            return got

    def taps():
        for i, j, xw in windows(a):
            for ci in range(cg):
                idx = (np.arange(m) // mg) * cg + ci
                yield w[:, ci, i, j][None, :, None, None], xw[:, idx], None
        if bias is not None:
            yield np.ones((), x.dtype), bias[None, :, None, None], None

    return dot(taps(), shape, x.dtype)[0]


# ----------------------------------------------------------------------------- the record

def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _shapes(d):
    shapes = {"x": (d["n"], d["c"], d["h"], d["w"]), "w": (d["m"], d["c"] // d["groups"], d["r"], d["s"])}
    if d["bias"]:
        shapes["bias"] = (d["m"],)
    return shapes


def _layout(d, o):
    (sh, sw), (ph, pw), (dh, dw) = _pair(o["stride"]), _pair(o["padding"]), _pair(o["dilation"])
    ho = (d["h"] + 2 * ph - dh * (d["r"] - 1) - 1) // sh + 1
    wo = (d["w"] + 2 * pw - dw * (d["s"] - 1) - 1) // sw + 1
    return (d["n"], d["m"], max(ho, 0), max(wo, 0)), d["dtype"]


def _groups_divide(d) -> bool:
    return d["c"] % d["groups"] == 0 and d["m"] % d["groups"] == 0


def window_fits(d, o) -> bool:
    """The dilated window fits the padded input: H + 2·pad ≥ dil·(R − 1) + 1 (and likewise W)."""
    (ph, pw), (dh, dw) = _pair(o["padding"]), _pair(o["dilation"])
    return d["h"] + 2 * ph >= dh * (d["r"] - 1) + 1 and d["w"] + 2 * pw >= dw * (d["s"] - 1) + 1


def _validity(d, o):
    if not _groups_divide(d):
        return f"groups={d['groups']} does not divide c={d['c']} and m={d['m']}"
    if not window_fits(d, o):
        return "the dilated window does not fit the padded input"
    return None


def _draw(dr):
    """Every dim but h, w from its domain; h, w favouring multiples of the launch parameters;
    groups dividing c and m; stride, padding, dilation with the window fitting."""
    d = {k: dr.pick(k) for k in ("dtype", "n", "c", "m", "r", "s", "groups", "bias")}
    d["h"] = dr.size("h")
    d["w"] = dr.size("w")
    dr.assume(_groups_divide(d))
    o = {k: dr.pick(k) for k in ("stride", "padding", "dilation")}
    dr.assume(window_fits(d, o))
    return d, o


def _flops(d, o, n_out):
    return 2 * (d["c"] // d["groups"]) * d["r"] * d["s"] * n_out + (n_out if d["bias"] else 0)


def _cuconv(name, label, h, r, m, c):
    """seed 004's Config {N, H, R, M, C}: square H x H images, R x R filters, padding (R-1)/2."""
    return BenchProblem(
        {"dtype": "float32", "n": 1, "c": c, "h": h, "w": h, "m": m, "r": r, "s": r, "groups": 1, "bias": 0},
        {"stride": 1, "padding": (r - 1) // 2, "dilation": 1}, {"x": "random.1", "w": "random.2"},
        name=f"cuconv-{name}" + (f"-{label}" if label else ""),
        source="seed 004 (the cuconv B.Sc. project) §5.1" if label else "seed 004 (the cuconv B.Sc. project) §5.2",
        note=f"N=1 H=W={h} R=S={r} M={m} C={c}")


#: seed 004 (the cuconv study, §5.1-5.2): float32 NCHW, N = 1, H = W, R = S, padding (R-1)/2,
#: stride 1.  The listing prints C = 348 for T5-5x5 A in its config table and C = 48 in its
#: results table; 48 is the GoogLeNet 5x5 layer the configurations come from, and is used here.
_PRESETS = tuple(
    [_cuconv("T3-1x1", label, h, 1, m, c) for label, h, m, c in
     (("A", 7, 256, 832), ("B", 14, 1024, 256), ("C", 27, 256, 64))]
    + [_cuconv("T4-3x3", label, h, 3, m, c) for label, h, m, c in (("A", 4, 384, 192), ("B", 13, 384, 384))]
    + [_cuconv("T5-5x5", "A", 7, 5, 128, 48)]
    + [_cuconv(label, "", h, 3, m, c) for label, h, m, c in
       (("E1", 32, 64, 64), ("E2", 32, 128, 128), ("E3", 64, 128, 128), ("E4", 64, 256, 256))])

_BENCH_OPTIONS = {"stride": 1, "padding": 0, "dilation": 1}
_BENCH_FILLS = {"x": "random.1", "w": "random.2"}

#: a 3x3 kernel over 2 channels where the support admits it (several taps per output)
_K3 = {"r": (3, 2, 1), "s": (3, 2, 1), "c": (2, 1)}

#: the directed cases (refconv.directed; docs/specs.md "What a ci run catches" says what each is for)
DIRECTED = (
    Directed("onehot-w", "x rounded to TF32 / bfloat16 / float16 (one-hot weights: every output one exact product)",
             {"x": "random", "w": "onehot", "bias": "zero"}, seed=7),
    Directed("onehot-x", "w rounded to TF32 / bfloat16 / float16 (one-hot input)",
             {"x": "onehot", "w": "random", "bias": "zero"}, seed=8),
    Directed("sparse-nan", "taps with zero or tiny weights skipped (0·NaN, 0·Inf lost), padding taps skipped",
             {"x": "special", "w": "sparse"}, _K3),
    Directed("sparse-max", "tiny weights skipped next to ±max and ±Inf inputs", {"x": "edge", "w": "sparse"}, _K3, seed=2),
    Directed("edge", "overflow to ±Inf, Inf - Inf, a bias added twice or never", {"x": "edge", "w": "edge", "bias": "edge"},
             {"bias": (1,)}, seed=3),
    Directed("ramp", "a wrong index (channel, group, stride, dilation, padding offset): distinct exact values",
             {"x": "ramp", "w": "exact", "bias": "exact"}, seed=4),
)

# ----------------------------------------------------------------------------- peers (refconv bench)

def _conv_args(problem, tensor):
    """``(x, w, kwargs)`` of ``torch.nn.functional.conv2d`` for the problem, arrays made by ``tensor``."""
    kw = {k: problem.option(k) for k in ("stride", "padding", "dilation")}
    kw["groups"] = problem.dims["groups"]
    if "bias" in problem.inputs:
        kw["bias"] = tensor(problem.inputs["bias"])
    return tensor(problem.inputs["x"]), tensor(problem.inputs["w"]), kw


def _cudnn(tf32: bool):
    def prepare(problem):
        x, w, kw = _conv_args(problem, cuda_tensor)
        return cudnn_conv2d(x, w, tf32, **kw)
    return prepare


def _torch_cpu_conv2d(problem):
    import torch
    import torch.nn.functional as F
    x, w, kw = _conv_args(problem, lambda a: torch.from_numpy(np.array(a)))
    return lambda: F.conv2d(x, w, **kw)


PEERS = (
    PeerCall("cudnn_fp32", "torch.nn.functional.conv2d (cuDNN autotuned, TF32 off)", "gpu", _cudnn(False),
             runtime="torch"),
    PeerCall("cudnn_tf32", "torch.nn.functional.conv2d (cuDNN autotuned, TF32 on)", "gpu", _cudnn(True),
             runtime="torch"),
    PeerCall("torch_cpu_conv2d", "torch.nn.functional.conv2d on the CPU", "cpu", _torch_cpu_conv2d,
             modules=("torch",)),
)

_SIZES = ("n", "c", "h", "w", "m", "r", "s", "stride", "padding", "dilation")
#: the profiles' size caps (refconv.profiles)
CAPS = {"ci": dict(zip(_SIZES, (2, 2, 20, 20, 4, 3, 3, 3, 2, 2))),
        "dev": dict(zip(_SIZES, (2, 3, 40, 40, 6, 5, 5, 3, 2, 2))),
        "thorough": dict(zip(_SIZES, (3, 8, 64, 64, 8, 5, 5, 3, 2, 2))),
        "gpu": dict(zip(_SIZES, (2, 64, 40, 40, 64, 7, 7, 3, 3, 2)))}


def _conv(n, h, r, m, c):  # seed 004's Config {N, H, R, M, C}: square H x H images, R x R filters
    return {"n": n, "c": c, "h": h, "w": h, "m": m, "r": r, "s": r}


#: the gpu profile's whole configurations: seed 004's T3-1x1 A/B/C, T4-3x3 A/B, T5-5x5 A, E1-E4
GPU_SHAPES = (_conv(1, 7, 1, 256, 832), _conv(1, 14, 1, 1024, 256), _conv(1, 27, 1, 256, 64),
              _conv(1, 4, 3, 384, 192), _conv(1, 13, 3, 384, 384), _conv(1, 7, 5, 128, 48),
              _conv(1, 32, 3, 64, 64), _conv(1, 32, 3, 128, 128), _conv(1, 64, 3, 128, 128),
              _conv(1, 64, 3, 256, 256))


RECORD = OpRecord(
    name="conv2d",
    spec=conv2d,
    inputs=(Input("x"), Input("w", "weights"), Input("bias", optional=True)),
    dims={"dtype": ("float32", "float64"), "n": Range(1), "c": Range(1), "h": Range(1),
          "w": Range(1), "m": Range(1), "r": Range(1), "s": Range(1),
          "groups": Range(1, 1), "bias": (0, 1)},
    options={"stride": Range(1), "padding": Range(0), "dilation": Range(1)},
    spec_dims=("groups",),
    shapes=_shapes,
    layout=_layout,
    validity=_validity,
    draw=_draw,
    fill_combos=({"x": "random", "w": "onehot", "bias": "zero"}, {"x": "onehot", "w": "random", "bias": "zero"},
                 {"x": "special", "w": "sparse"}, {"x": "edge", "w": "sparse"}),
    accept=accepted,
    flops=_flops,
    bench={"small": BenchProblem({"dtype": "float32", "n": 1, "c": 4, "h": 16, "w": 16, "m": 4, "r": 3, "s": 3,
                                  "groups": 1, "bias": 0}, _BENCH_OPTIONS, _BENCH_FILLS),
           "paper": BenchProblem({"dtype": "float32", "n": 1, "c": 64, "h": 32, "w": 32, "m": 64, "r": 3, "s": 3,
                                  "groups": 1, "bias": 0}, _BENCH_OPTIONS, _BENCH_FILLS)},
    presets=_PRESETS,
    compile_dims={"h": 8, "w": 8, "c": 2, "r": 3, "s": 3, "m": 2, "n": 2},
    caps=CAPS,
    profile_shapes={"gpu": GPU_SHAPES},
    peers=PEERS,
    baseline=("cudnn_fp32", "torch_cpu_conv2d"),
    directed=DIRECTED,
    grid={"w": "x", "h": "y"},
    order=20,
)
