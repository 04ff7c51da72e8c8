"""Deliberately wrong implementations, one per bug class of issues 17 and 23, used by the tests in
``tests/meta/test_stronger_checker.py`` and by ``lab/sweeps/catch_rates.py`` (catch rate of the
checker's own draws).  Each is the spec except for one plausible bug, and declares only the
support a real kernel with that bug would (e.g. a sobel that implements ``nearest-even``).

Each function returns its (wrong) result for a problem; :func:`_v` makes it a plugin-API-2
variant whose ``run(problem, out)`` writes that result into the checker's ``out`` buffer."""
from __future__ import annotations

import numpy as np

from refconv import Range, Variant
import importlib

f2d = importlib.import_module("refconv.specs.filter2d")


def _spec(problem, **override):
    from refconv import specs
    args, kwargs = problem.spec_args()
    kwargs.update(override)
    with np.errstate(all="ignore"):
        return getattr(specs, problem.op)(*args, **kwargs)


def _filter2d_float_path(problem, keep_tap):
    """filter2d with a float accumulator, evaluating only the taps where ``keep_tap(w)``."""
    o = dict(boundary="zero", flip=False, accumulator=None, shift=0, rounding="trunc", cast="saturate",
             out_dtype=None)
    o.update(problem.options)
    ins = problem.inputs
    a = f2d.resolve(ins["image"], ins["weights"], o["boundary"], o["flip"], o["accumulator"], o["shift"],
                    o["rounding"], o["cast"], o["out_dtype"])
    work, out = a["work"], a["out_dtype"]
    acc = None
    with np.errstate(all="ignore"):
        for w, win in f2d.taps(a, work):
            if acc is None:
                acc = np.zeros(win.shape, work)
            if keep_tap(w):
                acc = acc + w * win
        if a["shift"]:
            acc = acc * work.type(2.0 ** -a["shift"])
        if out.kind == "f":
            return acc.astype(out)
        return f2d.cast_to_int(f2d.round_values(acc, a["rounding"]), out, a["cast"])


def skip_zero_weight_taps(problem):
    """Skips taps whose weight is 0 (OpenCV's and SciPy's sparse-kernel shortcut): 0*NaN and
    0*Inf no longer give NaN."""
    return _filter2d_float_path(problem, lambda w: w != 0)


def skip_tiny_weight_taps(problem):
    """Skips taps with |w| < 1e-6 (a 'negligible weight' threshold)."""
    return _filter2d_float_path(problem, lambda w: not abs(w) < 1e-6)


def sobel_half_up(problem):
    """Sobel whose 'nearest-even' rounding is floor(x + 0.5) (half up)."""
    o = dict(problem.options)
    out = np.dtype(o.pop("out_dtype", "uint8"))
    mag = _spec(problem, out_dtype="float64", rounding="trunc", cast="saturate")
    if out.kind == "f":
        return _spec(problem)
    with np.errstate(all="ignore"):
        return f2d.cast_to_int(np.floor(mag + 0.5), out, o.get("cast", "saturate"))


def _filter2d_unrounded(problem):
    """filter2d's value before rounding and the cast (float64), for a uint8 image on a float
    accumulator."""
    from refconv import specs
    args, kwargs = problem.spec_args()
    kwargs.update(out_dtype="float64", rounding="trunc", cast="saturate")
    with np.errstate(all="ignore"):
        return specs.filter2d(*args, **kwargs)


def _filter2d_rounded_by(problem, rounding: str, how):
    """filter2d, except that ``rounding`` on a float accumulator to an integer output is ``how``."""
    out = np.dtype(problem.option("out_dtype") or problem.dims["dtype"])
    if (problem.dims["dtype"] != "uint8" or problem.option("accumulator") == "int" or out.kind == "f"
            or problem.option("rounding") != rounding):
        return _spec(problem)
    with np.errstate(all="ignore"):
        return f2d.cast_to_int(how(_filter2d_unrounded(problem)), out, problem.option("cast"))


def filter2d_half_up(problem):
    """filter2d whose 'nearest-even' rounding is floor(x + 0.5) (half up)."""
    return _filter2d_rounded_by(problem, "nearest-even", lambda v: np.floor(v + 0.5))


def trunc_as_floor(problem):
    """filter2d whose 'trunc' rounding is floor (the same for positive sums, one less for negative
    fractional ones)."""
    return _filter2d_rounded_by(problem, "trunc", np.floor)


def int8_symmetric_saturation(problem):
    """filter2d to int8 saturating to [-127, 127] (symmetric quantisation) instead of [-128, 127]."""
    if str(problem.options.get("out_dtype")) != "int8":
        return _spec(problem)
    r = _spec(problem, out_dtype="int32")
    return np.clip(r, -127, 127).astype(np.int8)


def x86_int_conversion(problem):
    """The int accumulator converted with cvttss2si: out of range and NaN give INT32_MIN instead of
    saturating (x86 instead of CUDA's cvt.rzi.s32.f32)."""
    o = dict(boundary="zero", flip=False, shift=0, cast="saturate", out_dtype=None)
    o.update(problem.options)
    ins = problem.inputs
    a = f2d.resolve(ins["image"], ins["weights"], o["boundary"], o["flip"], "int", o["shift"], "trunc",
                    o["cast"], o["out_dtype"])
    acc = None
    with np.errstate(all="ignore"):
        for w, win in f2d.taps(a, np.float32):
            if acc is None:
                acc = np.zeros(win.shape, np.int64)
            v = acc.astype(np.float32) + w * win
            bad = ~(np.abs(v) < np.float32(2.0 ** 31))
            acc = np.where(bad, -(2 ** 31), np.trunc(np.where(bad, 0, v))).astype(np.int64)
    acc = acc >> a["shift"]
    out = a["out_dtype"]
    return acc.astype(out) if out.kind == "f" else f2d.cast_to_int(acc, out, a["cast"])


def hardcoded_uint8_saturation(problem):
    """Integer outputs saturated to the uint8 range [0, 255] whatever out_dtype says."""
    r = _spec(problem)
    if r.dtype.kind in "iu" and problem.options.get("cast", "saturate") == "saturate":
        return np.clip(r.astype(np.int64), 0, 255).astype(r.dtype)
    return r


def float64_accumulator_in_float32(problem):
    """accumulator='float64' requested, float32 used."""
    if problem.options.get("accumulator") == "float64":
        return _spec(problem, accumulator="float32")
    return _spec(problem)


def tf32(a: np.ndarray) -> np.ndarray:
    """Round float32 values to TF32 (10 explicit significand bits, round to nearest even)."""
    b = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    fin = np.isfinite(a)
    r = ((b + 0xFFF + ((b >> 13) & 1)) & ~np.uint64(0x1FFF)).astype(np.uint32).view(np.float32)
    return np.where(fin, r, a).astype(np.float32)


def tf32_inputs(problem):
    """Inputs rounded to TF32, products and sum exact (float64), result rounded once (tensor-core
    style: the best a TF32 kernel can do)."""
    from refconv import specs
    args, kwargs = problem.spec_args()
    args = [tf32(x).astype(np.float64) if isinstance(x, np.ndarray) else x for x in args]
    with np.errstate(all="ignore"):
        return getattr(specs, problem.op)(*args, **kwargs).astype(np.float32)


def _v(op, name, impl, supports):
    """A variant of ``impl`` (``impl(problem) -> result``) in plugin API 2."""
    def run(problem, out):
        r = np.asarray(impl(problem))
        if r.shape != out.shape or r.dtype != out.dtype:
            return r        # returned as is: the checker reports the wrong shape / dtype
        out[...] = r        # same dtype: a bit-exact copy (NaN payloads included)
    run.__name__ = run.__qualname__ = impl.__name__
    return Variant(op, "wrong", name, run=run, supports=supports, doc=impl.__doc__ or "")


F32 = {"dtype": ("float32",)}
BUGS = {
    # issue 17 item 1: the integer path
    "x86_int_conversion": _v("filter2d", "x86_int_conversion", x86_int_conversion,
                             {"dtype": ("uint8",), "accumulator": ("int",), "out_dtype": (None,)}),
    # item 2: fills that expose bugs
    "sobel_half_up": _v("sobel", "half_up", sobel_half_up, {"rounding": ("nearest-even",), "out_dtype": ("uint8",)}),
    "skip_zero_weight_taps": _v("filter2d", "skip_zero", skip_zero_weight_taps, {"dtype": ("float32", "float64")}),
    "skip_tiny_weight_taps": _v("filter2d", "skip_tiny", skip_tiny_weight_taps,
                                {"accumulator": ("float32", "float64"), "out_dtype": (None,)}),
    # item 3: precision loss at large n
    "tf32_matvec_n1000": _v("matvec", "tf32_n1000", tf32_inputs, {**F32, "cols": Range(1000, 1000)}),
    "tf32_conv2d_n1000": _v("conv2d", "tf32_n1000", tf32_inputs,
                            {**F32, "c": Range(8, 8), "r": Range(11, 11), "s": Range(11, 11), "h": Range(11, 16),
                             "w": Range(11, 16), "padding": (0,), "dilation": (1,)}),
    "tf32_matvec": _v("matvec", "tf32", tf32_inputs, F32),
    # item 4: options never drawn
    "float64_accumulator_in_float32": _v("filter2d", "acc64_in_f32", float64_accumulator_in_float32,
                                         {"dtype": ("uint8",), "out_dtype": (None,)}),
    "filter2d_uint8_saturation": _v("filter2d", "u8_saturation", hardcoded_uint8_saturation, {}),
    "sobel_uint8_saturation": _v("sobel", "u8_saturation", hardcoded_uint8_saturation, {}),
    "int8_symmetric_saturation": _v("filter2d", "int8_symmetric", int8_symmetric_saturation,
                                    {"dtype": ("uint8",), "out_dtype": ("int8",), "cast": ("saturate",)}),
    # issue 23: rounding classes of filter2d itself
    "filter2d_half_up": _v("filter2d", "half_up", filter2d_half_up, {"rounding": ("nearest-even",)}),
    "trunc_as_floor": _v("filter2d", "trunc_as_floor", trunc_as_floor, {}),
}
