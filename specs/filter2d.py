"""``filter2d``: 2-D correlation (or convolution) of a single- or multi-channel image with a small
weight matrix, with the integer / rounding / border / overflow rules of GPU image kernels.

The module also holds the op's record (``RECORD``: domains, drawing, acceptance, bench problems).
"""
from __future__ import annotations

import numpy as np

from .dotbound import dot
from .intervals import FSet, ISet
from .peer import PeerCall, cuda_tensor, cudnn_conv2d, planes
from .record import BenchProblem, Directed, Input, OpRecord, Range

from ._validate import (FLOAT_DTYPES, INT_OUT_DTYPES, as_array, boolean, choice, dtype_arg,
                        integer)

BOUNDARIES = ("zero", "replicate", "reflect", "wrap", "valid")
ROUNDINGS = ("trunc", "nearest-even")
CASTS = ("saturate", "wrap")
_NP_PAD = {"zero": "constant", "replicate": "edge", "reflect": "reflect", "wrap": "wrap"}
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def pad_image(img: np.ndarray, kh: int, kw: int, boundary: str) -> np.ndarray:
    """Pad the last two axes so that window (y, x) of the padded image starts at (y, x):
    ``KH//2`` rows above, ``KH-1-KH//2`` below, ``KW//2`` columns left, ``KW-1-KW//2`` right.
    ``valid`` pads nothing.  Pads wider than the image repeat the rule (numpy.pad semantics:
    reflect-101 and wrap are periodic, replicate repeats the edge)."""
    if boundary == "valid":
        return img
    top, left = kh // 2, kw // 2
    widths = [(0, 0)] * (img.ndim - 2) + [(top, kh - 1 - top), (left, kw - 1 - left)]
    if boundary == "zero":
        return np.pad(img, widths, mode="constant", constant_values=0)
    return np.pad(img, widths, mode=_NP_PAD[boundary])


def out_hw(h: int, w: int, kh: int, kw: int, boundary: str) -> tuple:
    if boundary == "valid":
        return max(h - kh + 1, 0), max(w - kw + 1, 0)
    return h, w


def round_values(v: np.ndarray, rounding: str) -> np.ndarray:
    return np.trunc(v) if rounding == "trunc" else np.rint(v)


def cast_to_int(v: np.ndarray, out_dtype: np.dtype, cast: str) -> np.ndarray:
    """Integer-valued floats (or ints) -> ``out_dtype``.  ``saturate``: clip to the range,
    NaN -> 0.  ``wrap``: to int64 first (NaN -> 0, +-Inf and out-of-range values saturate to the
    int64 limits), then modulo 2**bits (two's complement), as a C conversion to int64 followed by
    an integer narrowing."""
    info = np.iinfo(out_dtype)
    if v.dtype.kind in "iu":
        if cast == "saturate":
            return np.clip(v, info.min, info.max).astype(out_dtype)
        return v.astype(np.int64).astype(out_dtype)
    nan = np.isnan(v)
    if cast == "saturate":
        # compare in float64 and convert only in-range values: a float32 clip to int32's max
        # would round the bound up to 2**31, which no int32 holds
        v = np.where(nan, 0, v).astype(np.float64)
        hi = v >= float(info.max)
        lo = v <= float(info.min)
        mid = np.where(hi | lo, 0, v).astype(np.int64)
        return np.where(hi, info.max, np.where(lo, info.min, mid)).astype(out_dtype)
    v = np.where(nan, 0, v)
    hi = v >= 2.0 ** 63
    lo = v < -(2.0 ** 63)
    mid = np.where(hi | lo, 0, v).astype(np.int64)
    r = np.where(hi, np.iinfo(np.int64).max, np.where(lo, np.iinfo(np.int64).min, mid))
    return r.astype(out_dtype)


def f32_to_int32_rz(v: np.ndarray) -> np.ndarray:
    """CUDA ``cvt.rzi.s32.f32``: truncate toward zero, saturate to int32, NaN -> 0 (int64 array)."""
    v = np.clip(v, v.dtype.type(INT32_MIN), v.dtype.type(2.0 ** 31))
    v[np.isnan(v)] = 0
    big = v >= 2.0 ** 31
    v[big] = 0
    r = v.astype(np.int32)          # truncates toward zero
    r[big] = INT32_MAX
    return r


def resolve(image, weights, boundary, flip, accumulator, shift, rounding, cast, out_dtype):
    """Validate and normalise filter2d arguments; returns a dict (shared with the tolerance)."""
    op = "filter2d"
    image = as_array("image", image, ndims=(2, 3), dtypes=("uint8", "float32", "float64"), op=op)
    if 0 in image.shape:
        raise ValueError(f"{op}: image must be non-empty, got shape {image.shape}; accepted: "
                         f"(H, W) or (C, H, W) with every dimension >= 1")
    weights = as_array("weights", weights, ndims=2, op=op)
    if weights.dtype.kind != "f":
        raise TypeError(f"{op}: weights has dtype {weights.dtype.name}; accepted: a float dtype "
                        f"(float32, float64; others are cast to the working float type)")
    if 0 in weights.shape:
        raise ValueError(f"{op}: weights must be non-empty, got shape {weights.shape}; accepted: (KH, KW) >= (1, 1)")
    choice("boundary", boundary, BOUNDARIES, op)
    flip = boolean("flip", flip, op)
    shift = integer("shift", shift, lo=0, hi=31, op=op)
    choice("rounding", rounding, ROUNDINGS, op)
    choice("cast", cast, CASTS, op)
    is_u8 = image.dtype == np.uint8
    if is_u8:
        accumulator = "float32" if accumulator is None else accumulator
        choice("accumulator", accumulator, ("float32", "float64", "int"), op)
        out = image.dtype if out_dtype is None else dtype_arg(
            "out_dtype", out_dtype, INT_OUT_DTYPES + FLOAT_DTYPES, op)
        work = np.dtype(np.float64 if accumulator == "float64" else np.float32)
        if accumulator == "int" and rounding != "trunc":
            raise ValueError(f"{op}: rounding={rounding!r} does not apply with accumulator='int' "
                             f"(each tap truncates, the shift floors); accepted: 'trunc'")
        if out.kind == "f" and (rounding != "trunc" or cast != "saturate"):
            bad = "rounding" if rounding != "trunc" else "cast"
            raise ValueError(f"{op}: {bad}={locals()[bad]!r} does not apply to a float out_dtype "
                             f"({out.name}); accepted: the default ({'trunc' if bad == 'rounding' else 'saturate'})")
    else:
        work = image.dtype
        choice("accumulator", accumulator, (None, work.name), op)
        accumulator = work.name
        out = work if out_dtype is None else dtype_arg("out_dtype", out_dtype, (work,), op)
        for name, val, default in (("shift", shift, 0), ("rounding", rounding, "trunc"),
                                   ("cast", cast, "saturate")):
            if val != default:
                raise ValueError(f"{op}: {name}={val!r} does not apply to a {work.name} image "
                                 f"(float output); accepted: {default!r}")
    w = weights.astype(work)
    if flip:
        w = w[::-1, ::-1]
    return dict(image=image, weights=w, boundary=boundary, accumulator=accumulator, shift=shift,
                rounding=rounding, cast=cast, out_dtype=out, work=work)


def taps(a: dict, dtype=None):
    """Yield ``(weight, window)`` per tap in spec order (i outer, j inner) for the resolved
    arguments ``a``; ``window`` is the (…, OH, OW) slice of the padded image (converted to
    ``dtype`` when given)."""
    img, w, boundary = a["image"], a["weights"], a["boundary"]
    kh, kw = w.shape
    oh, ow = out_hw(img.shape[-2], img.shape[-1], kh, kw, boundary)
    p = pad_image(img, kh, kw, boundary)
    if dtype is not None:
        p = p.astype(dtype)
    for i in range(kh):
        for j in range(kw):
            yield w[i, j], p[..., i:i + oh, j:j + ow]


def filter2d(image, weights, *, boundary="zero", flip=False, accumulator=None, shift=0,
             rounding="trunc", cast="saturate", out_dtype=None):
    r"""2-D correlation of ``image`` with ``weights`` (convolution with ``flip=True``).

    **Shapes.** ``image`` is ``(H, W)`` or planar ``(C, H, W)`` (every channel filtered with the
    same weights); ``weights`` is ``(KH, KW)``, any size >= 1 (even sizes too).  The output is
    ``(…, H, W)``, or ``(…, max(H-KH+1, 0), max(W-KW+1, 0))`` for ``boundary="valid"`` (an image
    smaller than the kernel gives an output with a 0-length dimension, not an error).

    **Formula.** Anchor ``(KH//2, KW//2)``::

        out[c, y, x] = sum_{i=0}^{KH-1} sum_{j=0}^{KW-1} w[i, j] * in[c, y + i - KH//2, x + j - KW//2]

    (for ``valid``: ``in[c, y + i, x + j]``).  ``flip=True`` uses ``w[KH-1-i, KW-1-j]`` (true
    convolution).  The *tap order* is part of the spec: ``i`` outer, ``j`` inner, row-major; the
    accumulator starts at +0 and each tap does ``acc = acc + w[i,j]*in`` (a rounded product,
    then a rounded sum: no FMA).  Every tap is evaluated, including zero weights and ghost cells
    (so ``w = Inf`` on a zero ghost cell gives NaN, IEEE ``Inf*0``).

    **Borders** (``in`` outside the image): ``zero`` ghost cells are 0; ``replicate`` the nearest
    edge pixel (OpenCV BORDER_REPLICATE, scipy ``nearest``); ``reflect`` reflect-101 without
    repeating the edge, ``dcb|abcd|cba`` (OpenCV BORDER_REFLECT_101, scipy ``mirror``); ``wrap``
    periodic (scipy ``wrap``); pads wider than the image repeat the rule periodically
    (``numpy.pad``); ``valid`` only windows fully inside the image.

    **Working type.** ``weights`` may be any float dtype; they are cast (round to nearest) to the
    working float type: float32 for uint8 images (accumulator ``float32`` or ``int``) and
    float32 images, float64 for float64 images and for ``accumulator="float64"``.

    **Float images** (float32 / float64): accumulate in the image dtype, output in the image
    dtype.  ``accumulator`` must be None or the image dtype; ``shift``, ``rounding``, ``cast``
    do not apply and must keep their defaults (``ValueError`` otherwise); ``out_dtype`` must be
    None or the image dtype.  NaN and +-Inf propagate as IEEE arithmetic does.

    **uint8 images.** ``accumulator``:

    * ``"float32"`` (default) / ``"float64"``: the tap-order sum ``s`` of ``w*float(x)`` in that
      type; then ``s * 2**-shift`` (exact except for subnormal results, where it rounds to
      nearest); then ``rounding`` (``"trunc"`` toward zero, ``"nearest-even"`` half to even);
      then ``cast`` to ``out_dtype``.
    * ``"int"``: the paper-faithful C of the 3x3 uint8 seed kernels.  ``int acc = 0``; every tap
      does ``acc = (int)((float)acc + w*(float)x)`` in float32 (the int->float conversion rounds
      to nearest, the product and the sum round to nearest, no FMA) and the conversion to int
      truncates toward zero, saturating out-of-range values to int32 and NaN to 0 (CUDA
      ``cvt.rzi.s32.f32``).  Then ``acc >> shift`` (arithmetic shift: floor division by
      ``2**shift``, also for negatives), then ``cast``.  ``rounding`` must be ``"trunc"``.

    ``out_dtype`` (default: the image dtype, uint8) is one of uint8, int8, uint16, int16, int32
    (then ``cast`` applies) or float32 / float64 (value converted with round to nearest;
    ``rounding``/``cast`` must keep their defaults).  ``cast``:

    * ``"saturate"``: clip to the range of ``out_dtype``; NaN -> 0, +-Inf -> max / min.
    * ``"wrap"``: C conversion to int64 (NaN -> 0; +-Inf and values beyond int64 saturate to the
      int64 limits), then modulo ``2**bits`` (two's complement narrowing).

    The result is a new array of dtype ``out_dtype``.
    """
    a = resolve(image, weights, boundary, flip, accumulator, shift, rounding, cast, out_dtype)
    img, work, out = a["image"], a["work"], a["out_dtype"]
    kh, kw = a["weights"].shape
    oshape = img.shape[:-2] + out_hw(img.shape[-2], img.shape[-1], kh, kw, a["boundary"])
    if a["accumulator"] == "int":
        return _int_accumulator(a, oshape)
    acc = np.zeros(oshape, work)
    with np.errstate(all="ignore"):
        for w, win in taps(a, work):
            acc = acc + w * win
        if a["shift"]:
            acc = acc * work.type(2.0 ** -a["shift"])
        if out.kind == "f":
            return acc.astype(out)
        return cast_to_int(round_values(acc, a["rounding"]), out, a["cast"])


def _int_accumulator(a: dict, oshape: tuple) -> np.ndarray:
    """``accumulator="int"`` (the paper's C): per tap ``acc = (int)((float)acc + w*(float)x)``
    in float32, truncating and saturating (:func:`f32_to_int32_rz`); then ``acc >> shift``, then
    the conversion to ``out_dtype`` (``cast`` for integers)."""
    out = a["out_dtype"]
    acc = np.zeros(oshape, np.int32)
    with np.errstate(all="ignore"):
        for w, win in taps(a, np.float32):
            v = acc.astype(np.float32)
            v += w * win
            acc = f32_to_int32_rz(v)
    acc = acc.astype(np.int64) >> a["shift"]
    if out.kind == "f":
        return acc.astype(out)
    return cast_to_int(acc, out, a["cast"])


# ----------------------------------------------------------------------------- acceptance
# (the rules: refconv.tolerance)

def _rn32_sum(a, b):
    """``rn_float32(a + b)`` of float64 arrays, correctly rounded (no double rounding): ``a`` holds
    float32 values, ``b`` any float64 value.  The float64 sum ``s`` and its exact error ``err``
    (TwoSum) give the float32 result: ``float32(s)``, except where ``s`` is a float32 tie and
    ``err != 0``, when the exact sum lies on the side of ``err``."""
    with np.errstate(all="ignore"):
        s = a + b
        bb = s - a
        err = (a - (s - bb)) + (b - bb)
        r = s.astype(np.float32)
        r64 = r.astype(np.float64)
        toward = np.where(r64 > s, np.float32(-np.inf), np.float32(np.inf)).astype(np.float32)
        other = np.nextafter(r, toward)
        fin = np.isfinite(s) & np.isfinite(r64) & np.isfinite(other)
        tie = fin & (r64 != s) & (np.abs(r64 - s) == np.abs(other.astype(np.float64) - s)) & (err != 0)
        pick = np.where(err > 0, np.maximum(r, other), np.minimum(r, other))
        return np.where(tie, pick, r)


def int_accumulator_interval(taps, shape):
    """Integer interval ``[lo, hi]`` of the paper-faithful int accumulator (``refconv.tolerance``).

    One tap maps ``acc`` to ``g(acc) = cvt_rzi_sat(rn32(rn32(float(acc)) + p))``, where ``p`` is
    the product: ``rn32(w*x)`` (the spec) or the exact ``w*x`` (an FMA).  The int->float conversion
    and the float add round to nearest, deterministic and monotone; so is the truncating,
    saturating conversion.  ``g`` is therefore non-decreasing in ``acc`` and in ``p``, and the
    exact image of ``[lo, hi]`` is ``[min_p g(lo), max_p g(hi)]``: only the FMA choice widens it.
    Non-finite products are deterministic (NaN -> 0, +-Inf -> the int32 limits)."""
    lo = np.zeros(shape, np.int64)
    hi = np.zeros(shape, np.int64)
    with np.errstate(all="ignore"):
        for w, x in taps:
            w32 = np.float32(w)
            x = np.broadcast_to(np.asarray(x, np.float64), shape)
            if not np.isfinite(w32):
                v = lo.astype(np.float32) + w32 * x.astype(np.float32)
                lo = hi = f32_to_int32_rz(v).astype(np.int64)
                continue
            p_round = (w32 * x.astype(np.float32)).astype(np.float64)   # the spec's rounded product
            p_exact = np.float64(w32) * x                               # exact (24 + 8 bits); an FMA's
            ends = []
            for end, pick in ((lo, np.minimum), (hi, np.maximum)):
                a = end.astype(np.float32).astype(np.float64)           # rn int -> float32
                v = pick(_rn32_sum(a, p_round), _rn32_sum(a, p_exact))
                ends.append(f32_to_int32_rz(v.astype(np.float32)).astype(np.int64))
            lo, hi = ends
    return lo, hi


def accepted(inputs: dict, o: dict):
    """The accepted set of ``filter2d(image, weights, **o)`` (``o`` complete): one dot product
    per output element (n = KH*KW), then the shift, rounding and cast on the end points; the int
    accumulator tap by tap (:func:`int_accumulator_interval`)."""
    a = resolve(inputs["image"], inputs["weights"], o["boundary"], o["flip"], o["accumulator"],
                o["shift"], o["rounding"], o["cast"], o["out_dtype"])
    img, out, work = a["image"], a["out_dtype"], a["work"]
    kh, kw = a["weights"].shape
    shape = img.shape[:-2] + out_hw(img.shape[-2], img.shape[-1], kh, kw, a["boundary"])
    if a["accumulator"] == "int":
        L, H = int_accumulator_interval(taps(a, np.float64), shape)
        L, H = L >> a["shift"], H >> a["shift"]
        if out.kind == "f":
            return FSet(L.astype(out), H.astype(out), np.ones(shape, bool), *(np.zeros(shape, bool),) * 3)
        fin = np.ones(shape, bool)
        if a["cast"] == "saturate":
            info = np.iinfo(out)
            return ISet(np.clip(L, info.min, info.max), np.clip(H, info.min, info.max), fin, None, [], out)
        return ISet(L, H, fin, np.iinfo(out).bits, [], out)
    if 0 in shape:
        fs = FSet(np.zeros(shape, work), np.zeros(shape, work), *(np.zeros(shape, bool),) * 4)
    else:
        fs = dot(((w, x, None) for w, x in taps(a)), shape, work)[0]
    if a["shift"]:
        k = work.type(2.0 ** -a["shift"])
        fs = fs.map(lambda v: v * k)
    if out.kind == "f":
        return fs.to_float(out)
    return fs.to_int(out, a["cast"], lambda v: round_values(v, a["rounding"]), cast_to_int)


# ----------------------------------------------------------------------------- the record

def _shapes(d):
    img = (d["h"], d["w"]) if d["c"] == 0 else (d["c"], d["h"], d["w"])
    return {"image": img, "weights": (d["kh"], d["kw"])}


def _dtypes(name, d):
    if name == "image":
        return d["dtype"]
    return "float64" if d["dtype"] == "float64" else "float32"


def _layout(d, o):
    hw = (max(d["h"] - d["kh"] + 1, 0), max(d["w"] - d["kw"] + 1, 0)) if o["boundary"] == "valid" \
        else (d["h"], d["w"])
    return ((d["c"],) if d["c"] else ()) + hw, np.dtype(o["out_dtype"] or d["dtype"])


def _draw(dr):
    """dtype, channels, sizes (h, w favouring multiples of the launch parameters), kernel size;
    boundary and flip; for uint8 an accumulator, shift, out_dtype and (integer outputs only)
    rounding and cast; for float images the image dtype throughout."""
    d = {"dtype": dr.pick("dtype"), "c": dr.pick("c"), "h": dr.size("h"), "w": dr.size("w"),
         "kh": dr.pick("kh"), "kw": dr.pick("kw")}
    o = {"boundary": dr.pick("boundary"), "flip": dr.pick("flip")}
    if d["dtype"] == "uint8":
        accs = tuple(a for a in dr.dom("accumulator") if a in ("float32", "int", "float64"))
        dr.assume(accs)
        o["accumulator"] = dr.one_of(accs, "accumulator")
        o["shift"] = dr.pick("shift")
        out = dr.pick("out_dtype")
        if out is not None:
            o["out_dtype"] = out
        if out is None or not out.startswith("float"):   # rounding / cast apply to integer outputs
            if o["accumulator"] != "int":
                o["rounding"] = dr.pick("rounding")
            o["cast"] = dr.pick("cast")
    else:
        accs = tuple(a for a in dr.dom("accumulator") if a == d["dtype"])
        if dr.declared("accumulator"):
            dr.assume(accs)
        outs = tuple(x for x in dr.dom("out_dtype") if x in (None, d["dtype"]))
        dr.assume(outs)
        out = dr.one_of(outs, "out_dtype")
        if out is not None:
            o["out_dtype"] = out
    return d, o


#: the seed study's problem (seed 000): integer accumulator, ``>> 4``, wrap to uint8, valid interior
_PAPER_OPTIONS = {"boundary": "valid", "flip": False, "accumulator": "int", "shift": 4, "cast": "wrap"}
_PAPER_FILLS = {"image": "random.1", "weights": "exact.2"}

#: a 3x3 kernel where the support admits one (several taps: a zero next to a NaN, sums of mixed signs)
_K3 = {"kh": (3, 5, 4, 2, 1), "kw": (3, 5, 4, 2, 1)}

#: a kernel of two taps on a float accumulator, no shift: sums of two quarter-valued products
#: land on .5 and stay inside the output range (a larger kernel saturates them away)
_SMALL = {"kh": (1, 2, 3), "kw": (2, 1, 3), "accumulator": ("float32", "float64"), "shift": (0, 1)}

#: the directed cases (refconv.directed; docs/specs.md "What a ci run catches" says what each is for)
DIRECTED = (
    Directed("sparse-nan", "taps with zero or tiny weights skipped (0·NaN, 0·Inf, tiny·Inf lost)",
             {"image": ("special", "edge"), "weights": "sparse"}, _K3),
    Directed("sparse-max", "tiny weights skipped next to ±max and ±Inf pixels; saturation of their sums",
             {"image": "edge", "weights": "sparse"}, _K3, seed=2),
    Directed("int32-limit", "int accumulator past the int32 limits (x86 cvttss2si gives INT32_MIN; CUDA saturates)",
             {"image": "edge", "weights": "edge"}, {**_K3, "accumulator": ("int",), "dtype": ("uint8",)}),
    Directed("acc-precision", "accumulator='float64' computed in float32 (sums past 2**24, low bits wrapped out)",
             {"image": "random", "weights": "edge"},
             {**_K3, "dtype": ("uint8",), "accumulator": ("float64",), "cast": ("wrap",)}, seed=3),
    Directed("saturation-wide", "integer outputs saturated to the wrong range (uint8's for every out_dtype)",
             {"image": "edge", "weights": "edge"},
             {**_K3, "dtype": ("uint8",), "out_dtype": ("int16", "int32", "uint16", "int8"), "cast": ("saturate",),
              "accumulator": ("float32", "float64", "int")}, seed=4),
    Directed("saturation-int8", "int8 saturated to [-127, 127] (symmetric quantisation) or wrapped",
             {"image": "edge", "weights": "edge"},
             {**_K3, "dtype": ("uint8",), "out_dtype": ("int8",), "cast": ("saturate",)}, seed=5),
    Directed("ties", "rounding half-up or half-away instead of half-to-even; trunc instead of round",
             {"image": "ties", "weights": "ties"}, {**_SMALL, "rounding": ("nearest-even",)}, seed=6),
    Directed("trunc-negative", "trunc done as floor (or through an unsigned type) on negative fractional sums",
             {"image": "ties", "weights": "ties"},
             {**_SMALL, "dtype": ("uint8",), "rounding": ("trunc",), "out_dtype": ("int16", "int32", "int8")},
             seed=9),
    Directed("onehot", "inputs rounded to TF32 / bfloat16 / float16 (every output one exact product: bitwise)",
             {"image": "random", "weights": "onehot"}, seed=7),
)

# ----------------------------------------------------------------------------- peers (refconv bench)

def _cupy_correlate(problem):
    import cupy as cp
    import cupyx.scipy.ndimage as nd
    ps = [cp.asarray(p) for p in planes(problem.inputs["image"])]
    w = cp.asarray(problem.inputs["weights"])
    return lambda: [nd.correlate(p, w, mode="constant") for p in ps]


def _cudnn(tf32: bool):
    """The image's planes as one float32 batch, a depthwise conv2d (one group per plane)."""
    def prepare(problem):
        img = problem.inputs["image"]
        x = cuda_tensor(np.asarray(img, np.float32).reshape((1, -1) + img.shape[-2:]))
        w = cuda_tensor(problem.inputs["weights"], np.float32)
        w = w.reshape(1, 1, *w.shape).repeat(x.shape[1], 1, 1, 1)
        return cudnn_conv2d(x, w, tf32, groups=x.shape[1])
    return prepare


def _cv2_filter2d(problem):
    import cv2
    ps = [np.ascontiguousarray(p) for p in planes(problem.inputs["image"])]
    w = np.asarray(problem.inputs["weights"], np.float32)
    return lambda: [cv2.filter2D(p, -1, w, borderType=cv2.BORDER_CONSTANT) for p in ps]


def _scipy_correlate(problem):
    import scipy.ndimage as nd
    ps = planes(problem.inputs["image"])
    w = np.asarray(problem.inputs["weights"])
    return lambda: [nd.correlate(p, w, mode="constant") for p in ps]


PEERS = (
    PeerCall("cupy_correlate", "cupyx.scipy.ndimage.correlate", "gpu", _cupy_correlate, runtime="cupy"),
    PeerCall("cudnn_fp32", "torch.nn.functional.conv2d (cuDNN autotuned, TF32 off), float32 image", "gpu",
             _cudnn(False), runtime="torch"),
    PeerCall("cudnn_tf32", "torch.nn.functional.conv2d (cuDNN autotuned, TF32 on), float32 image", "gpu",
             _cudnn(True), runtime="torch"),
    PeerCall("cv2_filter2D", "cv2.filter2D", "cpu", _cv2_filter2d, modules=("cv2",)),
    PeerCall("scipy_correlate", "scipy.ndimage.correlate", "cpu", _scipy_correlate, modules=("scipy.ndimage",)),
)

#: the profiles' size caps (refconv.profiles)
CAPS = {"ci": {"c": 2, "h": 20, "w": 20, "kh": 10, "kw": 10},
        "dev": {"c": 3, "h": 40, "w": 40, "kh": 10, "kw": 10},
        "thorough": {"c": 3, "h": 64, "w": 64, "kh": 10, "kw": 10},
        "gpu": {"c": 3, "h": 2048, "w": 2048, "kh": 9, "kw": 9}}

#: the gpu profile's whole configurations: seed 000's 3072² 3x3; k·block·CF ± 1 around it; rows
#: past 65535·by (gridDim.y) and columns past 65535
GPU_SHAPES = ({"h": 3072, "w": 3072, "kh": 3, "kw": 3}, {"h": 3073, "w": 3071, "kh": 3, "kw": 3},
              {"h": 4095, "w": 4097, "kh": 3, "kw": 3}, {"h": 131073, "w": 17, "kh": 3, "kw": 3},
              {"h": 5, "w": 65537, "kh": 3, "kw": 3}, {"h": 1025, "w": 2047, "kh": 5, "kw": 5},
              {"h": 777, "w": 1023, "kh": 7, "kw": 7})


RECORD = OpRecord(
    name="filter2d",
    spec=filter2d,
    inputs=(Input("image", "pixels"), Input("weights", "weights")),
    dims={"dtype": ("uint8", "float32", "float64"), "c": Range(0), "h": Range(1), "w": Range(1),
          "kh": Range(1), "kw": Range(1)},
    options={"boundary": BOUNDARIES, "flip": (False, True), "accumulator": ("float32", "int", "float64"),
             "shift": Range(0, 8), "rounding": ROUNDINGS, "cast": CASTS,
             "out_dtype": (None, "uint8", "int8", "uint16", "int16", "int32", "float32", "float64")},
    shapes=_shapes,
    input_dtypes=_dtypes,
    layout=_layout,
    interior=lambda d: ((d["h"], d["w"]), (d["kh"] // 2, d["kw"] // 2)),
    draw=_draw,
    fill_combos=({"image": "random", "weights": "onehot"}, {"image": "special", "weights": "sparse"},
                 {"image": "edge", "weights": "sparse"}, {"image": "random", "weights": "ties"},
                 {"image": "edge", "weights": "edge"}, {"image": "random", "weights": "edge"},
                 {"image": "ties", "weights": "ties"}),
    accept=accepted,
    flops=lambda d, o, n_out: 2 * d["kh"] * d["kw"] * n_out,
    bench={"small": BenchProblem({"dtype": "uint8", "c": 0, "h": 64, "w": 64, "kh": 3, "kw": 3},
                                 _PAPER_OPTIONS, _PAPER_FILLS),
           "paper": BenchProblem({"dtype": "uint8", "c": 0, "h": 3072, "w": 3072, "kh": 3, "kw": 3},
                                 _PAPER_OPTIONS, _PAPER_FILLS)},
    presets=(BenchProblem({"dtype": "uint8", "c": 0, "h": 3072, "w": 3072, "kh": 3, "kw": 3},
                          _PAPER_OPTIONS, _PAPER_FILLS, name="filter2d-u8-3x3-3072",
                          source="seed 000 (Özer & Demirci, 3×3 image convolution on CUDA) Çizelge 3-5",
                          note="with the coarsening table (GM/CM/SM, CF 2-16, _Vec)"),),
    compile_dims={"h": 8, "w": 8, "kh": 3, "kw": 3, "c": 2},
    caps=CAPS,
    profile_shapes={"gpu": GPU_SHAPES},
    peers=PEERS,
    baseline=("cupy_correlate", "cv2_filter2D", "scipy_correlate"),
    directed=DIRECTED,
    grid={"w": "x", "h": "y"},
    order=10,
)
