"""``sobel``: Sobel gradient magnitude of a gray or colour image.

The module also holds the op's record (``RECORD``: domains, drawing, acceptance, bench problems).
"""
from __future__ import annotations

import numpy as np

from .dotbound import dot, gamma, overflow_threshold, ref_type, unit_roundoff
from .intervals import FSet, abs_interval
from .peer import PeerCall, gray_f32
from .record import BenchProblem, Directed, Input, OpRecord, Range

from ._validate import FLOAT_DTYPES, INT_OUT_DTYPES, as_array, choice, dtype_arg
from .filter2d import BOUNDARIES, CASTS, ROUNDINGS, cast_to_int, out_hw, pad_image, round_values

#: Gx taps (i, j, weight) in spec order; Gy uses the transposed positions (j, i).
GX_TAPS = ((0, 0, -1.0), (0, 2, 1.0), (1, 0, -2.0), (1, 2, 2.0), (2, 0, -1.0), (2, 2, 1.0))
GY_TAPS = tuple((j, i, w) for i, j, w in GX_TAPS)
GRAY_WEIGHTS = (0.299, 0.587, 0.114)


def resolve(image, magnitude, boundary, out_dtype, cast, rounding):
    op = "sobel"
    image = as_array("image", image, ndims=(2, 3), dtypes=("uint8", "float32", "float64"), op=op)
    if image.ndim == 3:
        if image.shape[2] not in (3, 4):
            raise ValueError(f"{op}: image of shape {image.shape}: a colour image must be (H, W, 3) or "
                             f"(H, W, 4); accepted channel counts: 3, 4")
        if image.dtype != np.uint8:
            raise TypeError(f"{op}: a colour image has dtype {image.dtype.name}; accepted: uint8 "
                            f"(float images must be gray, (H, W))")
    if 0 in image.shape:
        raise ValueError(f"{op}: image must be non-empty, got shape {image.shape}")
    choice("magnitude", magnitude, ("l1", "l2"), op)
    choice("boundary", boundary, BOUNDARIES, op)
    choice("cast", cast, CASTS, op)
    choice("rounding", rounding, ROUNDINGS, op)
    # None means the default, uint8 (see sobel's docstring), never np.dtype(None) == float64
    out = np.dtype(np.uint8) if out_dtype is None else dtype_arg(
        "out_dtype", out_dtype, INT_OUT_DTYPES + FLOAT_DTYPES, op)
    work = np.dtype(np.float64 if image.dtype == np.float64 else np.float32)
    if out.kind == "f" and (rounding != "trunc" or cast != "saturate"):
        bad = "rounding" if rounding != "trunc" else "cast"
        raise ValueError(f"{op}: {bad}={(rounding if bad == 'rounding' else cast)!r} does not apply to a "
                         f"float out_dtype ({out.name}); accepted: the default")
    return dict(image=image, magnitude=magnitude, boundary=boundary, out_dtype=out, cast=cast,
                rounding=rounding, work=work)


def gray(image: np.ndarray, work: np.dtype) -> np.ndarray:
    """The working-type gray image: ``image`` itself (converted) or, for colour, the float32
    ``(0.299f*R + 0.587f*G) + 0.114f*B`` (alpha ignored, no rounding back to uint8)."""
    if image.ndim == 2:
        return image.astype(work)
    c = [np.float32(k) for k in GRAY_WEIGHTS]
    ch = image[..., :3].astype(np.float32)
    return (c[0] * ch[..., 0] + c[1] * ch[..., 1]) + c[2] * ch[..., 2]


def gradient_taps(a: dict, g: np.ndarray, which: str):
    """Yield ``(weight, window)`` for Gx (``which="x"``) or Gy in spec order."""
    oh, ow = out_hw(g.shape[0], g.shape[1], 3, 3, a["boundary"])
    p = pad_image(g, 3, 3, a["boundary"])
    for i, j, w in (GX_TAPS if which == "x" else GY_TAPS):
        yield w, p[i:i + oh, j:j + ow]


def sobel(image, *, magnitude="l1", boundary="valid", out_dtype=np.uint8, cast="saturate",
          rounding="trunc"):
    r"""Sobel gradient magnitude.

    **Input.** Gray ``(H, W)`` uint8, float32 or float64, or colour ``(H, W, 3|4)`` uint8 (RGB or
    RGBA; alpha ignored).  Colour is converted to a float32 gray image
    ``gray = (0.299f*R + 0.587f*G) + 0.114f*B`` evaluated in float32 in that order (constants
    rounded to float32, each product and sum rounded to nearest, no FMA); the gray value is *not*
    rounded back to uint8.  Gray uint8 is converted exactly to float32.

    **Working type** ``F``: float64 for float64 input, float32 otherwise.

    **Gradients** (correlation with the 3x3 masks, anchor (1, 1), borders as ``filter2d``,
    ``boundary="valid"`` by default -> output ``(max(H-2,0), max(W-2,0))``)::

        Kx = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]      Ky = Kx.T
        Gx = -p00 + p02 - 2*p10 + 2*p12 - p20 + p22     (p_ij = gray[y+i-1, x+j-1])
        Gy = -p00 + p20 - 2*p01 + 2*p21 - p02 + p22

    accumulated in ``F`` from +0 in exactly that order; the zero taps are *not* evaluated (an Inf
    in the centre column does not make Gx NaN).

    **Magnitude** in ``F``: ``"l1"`` = ``|Gx| + |Gy|``; ``"l2"`` = ``sqrt(Gx*Gx + Gy*Gy)``
    (correctly rounded IEEE sqrt; overflow of the squares gives Inf, not hypot).

    **Output.** ``out_dtype`` float32/float64: the magnitude converted (round to nearest).
    Integer (uint8 default, int8, uint16, int16, int32): ``rounding`` (``trunc`` /
    ``nearest-even``) then ``cast`` (``saturate`` clips, NaN -> 0; ``wrap`` converts to int64 then
    modulo 2**bits), exactly as ``filter2d``.  Gray uint8 input gives exact float sums.
    ``out_dtype=None`` means the default, as in ``filter2d``; but sobel's default is uint8 for
    every input (the 8-bit edge map of OpenCV's ``Sobel`` + ``convertScaleAbs``), not the image
    dtype as in ``filter2d``, because a float image's gradient magnitude is as often wanted as an
    8-bit map; pass ``out_dtype=image.dtype`` to keep floats.
    """
    a = resolve(image, magnitude, boundary, out_dtype, cast, rounding)
    work, out = a["work"], a["out_dtype"]
    with np.errstate(all="ignore"):
        g = gray(a["image"], work)
        grads = []
        for which in ("x", "y"):
            oh, ow = out_hw(g.shape[0], g.shape[1], 3, 3, a["boundary"])
            acc = np.zeros((oh, ow), work)
            for w, win in gradient_taps(a, g, which):
                acc = acc + work.type(w) * win
            grads.append(acc)
        gx, gy = grads
        if magnitude == "l1":
            mag = np.abs(gx) + np.abs(gy)
        else:
            mag = np.sqrt(gx * gx + gy * gy)
        if out.kind == "f":
            return mag.astype(out)
        return cast_to_int(round_values(mag, rounding), out, cast)


# ----------------------------------------------------------------------------- acceptance

def _magnitude(fx: FSet, fy: FSet, kind, F, R):
    """The accepted magnitudes from the accepted gradients: ``l1`` in ``F`` on the end points
    (monotone); ``l2`` with ``gamma_2`` for the squares and their sum and a relative ``u`` for a
    faithful (not necessarily correctly rounded) sqrt, never a single value."""
    fi = np.finfo(F)
    with np.errstate(all="ignore"):
        xlo, xhi = abs_interval(fx)
        ylo, yhi = abs_interval(fy)
        fin = fx.fin & fy.fin
        nan = fx.nan | fy.nan
        inf_x, inf_y = fx.pinf | fx.ninf, fy.pinf | fy.ninf
        pinf = (inf_x & (fy.fin | inf_y)) | (inf_y & (fx.fin | inf_x))
        if kind == "l1":
            lo = xlo + ylo            # F arithmetic: rn is monotone
            hi = xhi + yhi
            pinf |= fin & np.isinf(hi)
        else:
            a, b = xlo, ylo
            a2, b2 = a.astype(R) * a.astype(R), b.astype(R) * b.astype(R)
            # squares and sum: relative gamma_2 plus underflow (eta per square, in the squared
            # domain); sqrt: relative u (cv2.magnitude and fast-math sqrtf are only faithful, so
            # even exact squares and sum give an interval).  Both monotone, applied to the end points.
            g2 = R.type(gamma(2, F))
            u = R.type(unit_roundoff(F))
            eta = R.type(fi.smallest_subnormal) * 3
            rlo = np.sqrt(np.maximum((a2 + b2) * (1 - g2) - eta, 0)) * (1 - u)
            rhi = np.sqrt((xhi.astype(R) ** 2 + yhi.astype(R) ** 2) * (1 + g2) + eta) * (1 + u)
            rlo = np.maximum(np.nextafter(rlo, R.type(-np.inf)), 0)
            rhi = np.nextafter(rhi, R.type(np.inf))
            lo = rlo.astype(F)
            hi = rhi.astype(F)
            over = xhi.astype(R) ** 2 + yhi.astype(R) ** 2 >= overflow_threshold(F, R)
            pinf |= fin & (over | np.isinf(hi))
        fin = fin & np.isfinite(lo)
        lo = np.where(fin, lo, 0).astype(F)
        hi = np.where(fin, hi, 0).astype(F)
    return FSet(lo, hi, fin, pinf, np.zeros_like(fin), nan)


def accepted(inputs: dict, o: dict):
    """The accepted set of ``sobel(image, **o)`` (``o`` complete): colour input first gets a
    3-term gray interval; 6 nonzero taps per gradient; then the magnitude, rounding and cast."""
    a = resolve(inputs["image"], o["magnitude"], o["boundary"], o["out_dtype"], o["cast"], o["rounding"])
    img, F, out = a["image"], a["work"], a["out_dtype"]
    R = ref_type(F)
    hw = img.shape[:2]
    to_int = (lambda fs: fs.to_int(out, a["cast"], lambda v: round_values(v, a["rounding"]), cast_to_int))
    if img.ndim == 3:
        ch = img[..., :3].astype(np.float32)
        fs, center, rad, ex = dot(((np.float32(k), ch[..., t], None)
                                   for t, k in enumerate(GRAY_WEIGHTS)), hw, np.float32)
        gc, gr = center, rad
    else:
        gc, gr = img.astype(R), None
    oh, ow = out_hw(hw[0], hw[1], 3, 3, a["boundary"])
    shape = (oh, ow)
    pc = pad_image(gc, 3, 3, a["boundary"])
    pr = pad_image(gr, 3, 3, a["boundary"]) if gr is not None else None
    if 0 in shape:
        e = np.zeros(shape, bool)
        fs = FSet(np.zeros(shape, F), np.zeros(shape, F), e, e, e, e)
        return fs.to_float(out) if out.kind == "f" else to_int(fs)
    grads = []
    for gt in (GX_TAPS, GY_TAPS):
        tps = ((F.type(wt), pc[i:i + oh, j:j + ow], None if pr is None else pr[i:i + oh, j:j + ow])
               for i, j, wt in gt)
        grads.append(dot(tps, shape, F)[0])
    fx, fy = grads
    fs = _magnitude(fx, fy, a["magnitude"], F, R)
    if out.kind == "f":
        return fs.to_float(out)
    return to_int(fs)


# ----------------------------------------------------------------------------- the record

def _layout(d, o):
    hw = (max(d["h"] - 2, 0), max(d["w"] - 2, 0)) if o["boundary"] == "valid" else (d["h"], d["w"])
    return hw, np.dtype(np.uint8 if o["out_dtype"] is None else o["out_dtype"])


def _validity(d, o):
    if not (d["channels"] == 0 or d["dtype"] == "uint8"):
        return f"channels={d['channels']} needs dtype uint8"
    return None


def _draw(dr):
    """dtype, channels (colour only for uint8), sizes favouring multiples of the launch
    parameters; magnitude, boundary, out_dtype, and rounding and cast for integer outputs."""
    d = {"dtype": dr.pick("dtype"), "channels": dr.pick("channels"), "h": dr.size("h"), "w": dr.size("w")}
    dr.assume(_validity(d, {}) is None)
    o = {"magnitude": dr.pick("magnitude"), "boundary": dr.pick("boundary"), "out_dtype": dr.pick("out_dtype")}
    if not o["out_dtype"].startswith("float"):     # rounding / cast apply to integer outputs
        o["cast"] = dr.pick("cast")
        o["rounding"] = dr.pick("rounding")
    else:
        dr.assume(d["dtype"] != "float64" or o["out_dtype"] != "float32")
    return d, o


def _flops(d, o, n_out):
    gray = 5 * d["h"] * d["w"] if d["channels"] in (3, 4) else 0
    return (2 * 2 * 6 + 3) * n_out + gray


#: seed 002 (§4.2): an RGBA image, gray conversion in the kernel, |Gx|+|Gy| truncated and
#: saturated to uint8, valid interior
_PAPER_OPTIONS = {"magnitude": "l1", "boundary": "valid", "out_dtype": "uint8", "cast": "saturate",
                  "rounding": "trunc"}

#: the directed cases (refconv.directed; docs/specs.md "What a ci run catches" says what each is for)
DIRECTED = (
    Directed("ties", "nearest-even implemented half-up floor(x + 0.5) or half-away (needs .5 magnitudes: float32 quarters)",
             {"image": "ties"}, {"dtype": ("float32",), "channels": (0,), "rounding": ("nearest-even",),
                                 "magnitude": ("l1",)}, seed=6),
    Directed("ties-any", "rounding on every dtype that can tie (crossed with dtype, magnitude, out_dtype)",
             {"image": "ties"}, {"rounding": ("nearest-even",)}, seed=8),
    Directed("saturation-wide", "integer outputs saturated to the uint8 range whatever out_dtype says",
             {"image": "edge"}, {"out_dtype": ("int16", "int32", "uint16", "int8"), "cast": ("saturate",)}, seed=4),
    Directed("wrap", "cast='wrap' done as saturation (or the reverse) past the output range",
             {"image": "edge"}, {"cast": ("wrap",), "out_dtype": ("uint8", "int8")}, seed=5),
    Directed("special", "NaN / ±Inf pixels (NaN -> 0, ±Inf -> the limits) and ±max overflow",
             {"image": ("special", "edge")}, {"dtype": ("float32",)}, seed=2),
    Directed("delta", "Gx/Gy swapped, a transposed or mirrored stencil, a wrong gray weight (one bright pixel)",
             {"image": "delta"}, seed=3),
)

# ----------------------------------------------------------------------------- peers (refconv bench)

def _cupy_sobel(problem):
    import cupy as cp
    import cupyx.scipy.ndimage as nd
    g = cp.asarray(gray_f32(problem.inputs["image"]))
    return lambda: cp.abs(nd.sobel(g, axis=1)) + cp.abs(nd.sobel(g, axis=0))


def _cv2_sobel(problem):
    import cv2
    g = np.clip(gray_f32(problem.inputs["image"]), 0, 255).astype(np.uint8)

    def call():
        gx = cv2.convertScaleAbs(cv2.Sobel(g, cv2.CV_16S, 1, 0))
        gy = cv2.convertScaleAbs(cv2.Sobel(g, cv2.CV_16S, 0, 1))
        return cv2.add(gx, gy)
    return call


def _scipy_sobel(problem):
    import scipy.ndimage as nd
    g = gray_f32(problem.inputs["image"])
    return lambda: np.abs(nd.sobel(g, axis=1)) + np.abs(nd.sobel(g, axis=0))


PEERS = (
    PeerCall("cupy_sobel", "cupyx.scipy.ndimage.sobel (x and y, |gx|+|gy|, of the gray image)", "gpu",
             _cupy_sobel, runtime="cupy"),
    PeerCall("cv2_Sobel", "cv2.Sobel (x and y, |gx|+|gy|, of the gray image)", "cpu", _cv2_sobel,
             modules=("cv2",)),
    PeerCall("scipy_sobel", "scipy.ndimage.sobel (x and y, |gx|+|gy|, of the gray image)", "cpu", _scipy_sobel,
             modules=("scipy.ndimage",)),
)

#: the profiles' size caps (refconv.profiles)
CAPS = {"ci": {"h": 20, "w": 20}, "dev": {"h": 40, "w": 40}, "thorough": {"h": 64, "w": 64},
        "gpu": {"h": 2048, "w": 2048}}

#: the gpu profile's whole configurations: seed 002's 4096 x 3072 Sobel, and the same boundaries
#: as filter2d's
GPU_SHAPES = ({"h": 3072, "w": 4096}, {"h": 4096, "w": 3072}, {"h": 3073, "w": 4095},
              {"h": 131073, "w": 9}, {"h": 4, "w": 65537})


RECORD = OpRecord(
    name="sobel",
    spec=sobel,
    inputs=(Input("image", "pixels"),),
    dims={"dtype": ("uint8", "float32"), "channels": (0, 3, 4), "h": Range(1), "w": Range(1)},
    options={"magnitude": ("l1", "l2"), "boundary": BOUNDARIES,
             "out_dtype": ("uint8", "int8", "uint16", "int16", "int32", "float32", "float64"),
             "cast": CASTS, "rounding": ROUNDINGS},
    shapes=lambda d: {"image": (d["h"], d["w"]) if d["channels"] == 0 else (d["h"], d["w"], d["channels"])},
    layout=_layout,
    validity=_validity,
    interior=lambda d: ((d["h"], d["w"]), (1, 1)),
    draw=_draw,
    fill_combos=({"image": "ties"}, {"image": "ties"}, {"image": "edge"}),
    accept=accepted,
    flops=_flops,
    bench={"small": BenchProblem({"dtype": "uint8", "channels": 4, "h": 64, "w": 64}, _PAPER_OPTIONS,
                                 {"image": "random.1"}),
           "paper": BenchProblem({"dtype": "uint8", "channels": 4, "h": 3072, "w": 4096}, _PAPER_OPTIONS,
                                 {"image": "random.1"})},
    presets=(BenchProblem({"dtype": "uint8", "channels": 4, "h": 3072, "w": 4096}, _PAPER_OPTIONS,
                          {"image": "random.1"}, name="sobel-4096x3072",
                          source="seed 002 (Kim, Kim, Woo & Ihm 2010, CUDA optimisation techniques) 표 4-5",
                          note="methods I-IV: smem_if, smem_4copy, smem_linear, smem_rows2"),),
    compile_dims={"h": 8, "w": 8},
    caps=CAPS,
    profile_shapes={"gpu": GPU_SHAPES},
    peers=PEERS,
    baseline=("cupy_sobel", "cv2_Sobel", "scipy_sobel"),
    directed=DIRECTED,
    grid={"w": "x", "h": "y"},
    order=30,
)
