"""Problem instances: spec inputs + options, with a one-line descriptor that round-trips.

A :class:`Problem` is fully described by its op, its *dims* (shapes and dtype), its *options*
(the spec's keyword arguments) and one *fill* per input (how the input data is generated, from a
kind and a seed).  The descriptor is one line, in the spirit of oneDNN benchdnn's
``mb1ic64ih56oc64oh56kh3ph1``::

    filter2d:dtype=uint8,c=0,h=5,w=7,kh=3,kw=3:boundary=valid,accumulator=int,shift=4,cast=wrap:image=random.17,weights=exact.3

so any failure can be re-run from that line alone (``Problem.parse(line)``).

Fill kinds (``kind.seed``):

``zero``, ``one``
    constant 0 / 1.
``ramp``
    ``(flat index * 7) mod 17 - 8`` (floats) or ``(flat index * 7) mod 256`` (uint8): deterministic,
    varied, exact.
``exact``
    random values exactly representable so every float sum of products is exact: integers in
    [-8, 8] and halves/quarters (weights), integers 0..255 (uint8), small integers (float images).
``extreme``
    values drawn from the dtype's extremes: {0, max} for uint8; {0, ±1, ±max, ±tiny} for floats.
``random``
    general floats (uniform in [-2, 2] for weights, [0, 255] for float images, normal otherwise).
``special``
    ``random`` with NaN, +Inf, -Inf and -0.0 sprinkled in (floats only).
``delta``
    all zero but one element (position from the seed) set to the dtype max (uint8) or 1.0.
``onehot``
    all zero but one power of two ``±2**k`` (k in [-2, 2]; 1..128 for integers) per index of the
    first axis (one in all for 1-D arrays and filter weights).  Paired with a full-significand
    ``random`` operand every output is one exact product: bitwise comparison, whatever n, so an
    input rounded to TF32 / bfloat16 / float16 changes the bits.
``ties``
    multiples of 1/4 (weights in [-2, 2], pixels in [0, 24] so that Sobel magnitudes stay below
    255, data in [-16, 16]; integers for integer dtypes): sums land on .5, where half-up and
    half-to-even rounding differ.
``sparse``
    mostly zero and tiny weights (|w| < 1e-6, both signs) among multiples of 1/4 (floats), or zeros
    among random values (integers): with NaN / Inf / huge pixels this exposes kernels that skip
    zero or tiny taps (as OpenCV and SciPy do).
``edge``
    values at saturation edges: {0, 1, max-1, max} (and min, min+1) for integers; for float data
    {0, ±1, ±max, ±max/2, ±max/4, ±Inf, NaN} (pixels also 254.5, 255, 255.5); for weights {0, ±1, 1/2,
    1/255, 256/255, 2**23, 2**31/255, 2**31/2295, ±max} (sums at 255/256, beyond 2**24, at the
    int32 limit 2**31 and overflowing to ±Inf).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from . import ops
from .oprecord import OpRecord

FILL_KINDS = ("zero", "one", "delta", "ramp", "exact", "extreme", "random", "special", "onehot", "ties",
              "sparse", "edge")


#: An op's problem space is its record (:class:`refconv.oprecord.OpRecord`, next to its spec).
OpDef = OpRecord


class _OpDefs(Mapping):
    """op name -> its record, read from :mod:`refconv.ops` when used (a view: an op registered
    later shows)."""

    def __getitem__(self, op):
        if not ops.has(op):
            raise KeyError(op)
        return ops.get(op)

    def __iter__(self):
        return iter(ops.names())

    def __len__(self):
        return len(ops.names())

    def __repr__(self):
        return f"OPDEFS({', '.join(ops.names())})"


#: The spec's whole domain per op (``OPDEFS[op].dims`` / ``.options``), from the op records.
#: Sizes are unbounded above (``Range(lo)``): what is cheap to draw is the profiles' business
#: (:mod:`refconv.profiles`), what a kernel implements is its variant's ``supports``.
OPDEFS: Mapping[str, OpRecord] = _OpDefs()


# ----------------------------------------------------------------------------- fills

def make_fill(kind: str, seed: int, shape: tuple, dtype: np.dtype, role: str = "data") -> np.ndarray:
    """Deterministic data for one input.  ``role`` is ``"weights"`` for filter/conv weights (signed,
    small) and ``"data"`` otherwise.  See the module docstring for the kinds; each kind is one
    ``_fill_<kind>`` function drawing from ``np.random.default_rng(seed)`` (``random`` and
    ``special``: :func:`_fill_random`)."""
    if kind not in FILL_KINDS:
        raise ValueError(f"fill kind {kind!r} not accepted; accepted: {FILL_KINDS}")
    dtype = np.dtype(dtype)
    fill = _FillArgs(kind, np.random.default_rng(seed), shape, dtype, role,
                     int(np.prod(shape, dtype=np.int64)), dtype.kind in "ui")
    return _FILLS.get(kind, _fill_random)(fill)


@dataclass(frozen=True)
class _FillArgs:
    """What every fill kind draws from: the kind, the generator, the shape and dtype, the input's
    role, the element count and whether the dtype is an integer one."""

    kind: str
    rng: np.random.Generator
    shape: tuple
    dtype: np.dtype
    role: str
    size: int
    is_int: bool


def _int_range(dtype: np.dtype, signed: tuple = (-100, 100)) -> tuple:
    """The values integer fills draw from: ``0..min(max, 255)`` unsigned, ``signed`` otherwise."""
    info = np.iinfo(dtype)
    return (0, min(info.max, 255)) if info.min == 0 else signed


def _fill_zero(f: _FillArgs):
    return np.zeros(f.shape, f.dtype)


def _fill_one(f: _FillArgs):
    return np.ones(f.shape, f.dtype)


def _fill_delta(f: _FillArgs):
    a = np.zeros(f.size, f.dtype)
    if f.size:
        a[f.rng.integers(f.size)] = np.iinfo(f.dtype).max if f.is_int else 1.0
    return a.reshape(f.shape)


def _fill_ramp(f: _FillArgs):
    i = np.arange(f.size, dtype=np.int64)
    if f.is_int and np.iinfo(f.dtype).min == 0:
        return ((i * 7) % 256).astype(f.dtype).reshape(f.shape)
    return ((i * 7) % 17 - 8).astype(f.dtype).reshape(f.shape)


def _fill_exact(f: _FillArgs):
    if f.is_int:
        lo, hi = _int_range(f.dtype)
        return f.rng.integers(lo, hi + 1, size=f.shape).astype(f.dtype)
    if f.role == "weights":
        # integers in [-8, 8], and some halves / quarters: every product with a uint8 or a
        # small-integer pixel and every partial sum is exact in float32.
        return (f.rng.integers(-32, 33, size=f.shape) / 4.0).astype(f.dtype)
    return f.rng.integers(-16, 17, size=f.shape).astype(f.dtype)


def _fill_extreme(f: _FillArgs):
    if f.is_int:
        info = np.iinfo(f.dtype)
        pool = np.unique(np.array([0, info.max, info.min, 1], dtype=np.int64)).astype(f.dtype)
        return f.rng.choice(pool, size=f.shape).astype(f.dtype)
    fi = np.finfo(f.dtype)
    pool = np.array([0.0, 1.0, -1.0, fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal], dtype=f.dtype)
    return f.rng.choice(pool, size=f.shape).astype(f.dtype)


def _fill_onehot(f: _FillArgs):
    a = np.zeros(f.shape, f.dtype)
    if f.size:
        shape, rng = f.shape, f.rng
        rows = 1 if (len(shape) <= 1 or f.role == "weights" and len(shape) == 2) else shape[0]
        flat = a.reshape(rows, -1)
        cols = rng.integers(flat.shape[1], size=rows)
        if f.is_int:
            vals = 2 ** rng.integers(0, 8, size=rows)
        else:
            vals = np.ldexp(rng.choice([-1.0, 1.0], size=rows), rng.integers(-2, 3, size=rows))
        flat[np.arange(rows), cols] = vals
    return a


def _fill_ties(f: _FillArgs):
    if f.is_int:
        lo, hi = _int_range(f.dtype)
        return f.rng.integers(lo, hi + 1, size=f.shape).astype(f.dtype)
    lo, hi = {"weights": (-8, 8), "pixels": (0, 96)}.get(f.role, (-64, 64))
    return (f.rng.integers(lo, hi + 1, size=f.shape) / 4.0).astype(f.dtype)


def _fill_sparse(f: _FillArgs):
    rng, shape = f.rng, f.shape
    if f.is_int:
        lo, hi = _int_range(f.dtype, (-1000, 1000))
        v = rng.integers(lo, hi + 1, size=shape)
        return np.where(rng.random(shape) < 0.5, 0, v).astype(f.dtype)
    tiny = rng.choice([-1.0, 1.0], size=shape) * 10.0 ** rng.uniform(-9, -6, size=shape)
    quarters = rng.integers(-8, 9, size=shape) / 4.0
    u = rng.random(shape)
    return np.where(u < 0.4, 0.0, np.where(u < 0.7, tiny, quarters)).astype(f.dtype)


def _fill_edge(f: _FillArgs):
    if f.is_int:
        info = np.iinfo(f.dtype)
        top = min(info.max, 255) if info.min == 0 else info.max
        pool = np.unique(np.array([0, 1, top - 1, top] + ([] if info.min == 0 else [info.min, info.min + 1]),
                                  np.int64))
        return f.rng.choice(pool, size=f.shape).astype(f.dtype)
    fi = np.finfo(f.dtype)
    if f.role == "weights":
        pool = np.array([0.0, 1.0, -1.0, 0.5, 1 / 255, 256 / 255, 2.0 ** 23, 2.0 ** 31 / 255,
                         2.0 ** 31 / 2295, float(fi.max), -float(fi.max)], np.float64)
    else:
        m = float(fi.max)
        pool = np.array([0.0, 1.0, -1.0, m, -m, m / 2, -m / 2, m / 4, -m / 4], np.float64)
        pool = np.concatenate([pool, [np.inf, -np.inf, np.nan]])
        if f.role == "pixels":
            pool = np.concatenate([pool, [255.0, 254.5, 255.5]])
    return f.rng.choice(pool, size=f.shape).astype(f.dtype)


def _fill_random(f: _FillArgs):
    """``random`` (``special``: the same, then an eighth of the elements NaN, +-Inf or -0)."""
    rng, shape, dtype = f.rng, f.shape, f.dtype
    if f.is_int:
        lo, hi = _int_range(dtype, (-1000, 1000))
        if f.kind == "special":
            raise ValueError(f"fill kind 'special' needs a float dtype, got {dtype}")
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    if f.role == "weights":
        a = rng.uniform(-2.0, 2.0, size=shape).astype(dtype)
    elif f.role == "pixels":
        a = rng.uniform(0.0, 255.0, size=shape).astype(dtype)
    else:
        a = rng.standard_normal(size=shape).astype(dtype)
    if f.kind == "special" and f.size:
        flat = a.reshape(-1)
        n = max(1, f.size // 8)
        idx = rng.choice(f.size, size=n, replace=False)
        flat[idx] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dtype), size=n)
    return a


_FILLS = {"zero": _fill_zero, "one": _fill_one, "delta": _fill_delta, "ramp": _fill_ramp, "exact": _fill_exact,
          "extreme": _fill_extreme, "onehot": _fill_onehot, "ties": _fill_ties, "sparse": _fill_sparse,
          "edge": _fill_edge}


# ----------------------------------------------------------------------------- problem

def _fmt(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, tuple):
        return "x".join(_fmt(x) for x in v)
    return str(v)


def _parse_value(s: str):
    if s == "none":
        return None
    if re.fullmatch(r"-?\d+", s):
        return int(s)
    if re.fullmatch(r"-?\d+(x-?\d+)+", s):
        return tuple(int(x) for x in s.split("x"))
    return s



@dataclass(frozen=True, eq=False)
class Problem:
    """One instance of an op: ``dims`` (shapes, dtype), ``options`` (spec keyword arguments) and
    ``fills`` (input name -> ``"kind.seed"``).  ``inputs`` materialises the arrays (cached);
    ``option(name)`` is an option's value or the spec's default.  A variant writes into the ``out``
    buffer the checker passes to ``run(problem, out, **params)`` (plugin API 2); ``output()`` is
    the deprecated API-1 buffer."""

    op: str
    dims: Mapping[str, Any]
    options: Mapping[str, Any] = field(default_factory=dict)
    fills: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        od = ops.get(self.op)
        missing = [k for k in od.dims if k not in self.dims]
        if missing:
            raise ValueError(f"{self.op} problem: missing dims {missing}; required: {list(od.dims)}")
        unknown = [k for k in self.dims if k not in od.dims]
        if unknown:
            raise ValueError(f"{self.op} problem: unknown dims {unknown}; accepted: {list(od.dims)}")
        unknown = [k for k in self.options if k not in od.options]
        if unknown:
            raise ValueError(f"{self.op} problem: unknown options {unknown}; accepted: {list(od.options)}")
        fills = dict(self.fills)
        for name in self.input_shapes():
            fills.setdefault(name, "random.0")
            kind, _, seed = fills[name].partition(".")
            if kind not in FILL_KINDS or not seed.isdigit():
                raise ValueError(f"fill for {name!r} is {fills[name]!r}; accepted: KIND.SEED with KIND in {FILL_KINDS}")
        object.__setattr__(self, "dims", dict(self.dims))
        object.__setattr__(self, "options", dict(self.options))
        object.__setattr__(self, "fills", fills)
        object.__setattr__(self, "_cache", {})

    # -- data
    @property
    def record(self) -> OpRecord:
        """The op's record (:mod:`refconv.ops`)."""
        return ops.get(self.op)

    def option(self, name: str):
        """Spec option ``name``: this problem's value, else the spec's default (read from the
        spec's signature through the op record, so a backend cannot drift from it)."""
        return self.options[name] if name in self.options else self.record.default(name)

    def input_shapes(self) -> dict:
        return self.record.input_shapes(self.dims)

    @property
    def inputs(self) -> dict:
        """Input arrays by name, in the record's order (``filter2d``: image, weights; ``conv2d``:
        x, w[, bias]; ``sobel``: image; ``matvec``: m, v; ``kron``: a, b).  Generated once, then
        cached."""
        c = self._cache
        if "inputs" not in c:
            od = self.record
            out = {}
            for name, shape in self.input_shapes().items():
                kind, _, seed = self.fills[name].partition(".")
                out[name] = make_fill(kind, int(seed), shape, od.input_dtype(name, self.dims), od.input_role(name))
                out[name].setflags(write=False)
            c["inputs"] = out
        return c["inputs"]

    def input_nbytes(self) -> int:
        """Bytes of all inputs, from the dims (the arrays are not materialised)."""
        od = self.record
        return sum(int(np.prod(shape, dtype=np.int64)) * od.input_dtype(name, self.dims).itemsize
                   for name, shape in self.input_shapes().items())

    def with_inputs(self, arrays: Mapping[str, np.ndarray]) -> "Problem":
        """A copy whose inputs are the given arrays (used to replay a saved reproducer)."""
        p = dataclasses.replace(self)
        p._cache["inputs"] = {k: np.asarray(v) for k, v in arrays.items()}
        return p

    def spec_args(self) -> tuple[list, dict]:
        """Positional inputs and keyword arguments of the op's spec (``self.record.spec``): the
        inputs in order (None for an absent optional one), the options and the record's
        ``spec_dims``."""
        return self.record.spec_args(self.inputs, self.options, self.dims)

    # -- the output buffer
    def output(self) -> np.ndarray:
        """Plugin API 1 (deprecated): the buffer an API-1 ``run(problem, **params)`` writes into,
        set by the checker before such a run; outside it, a zero-filled buffer of the spec's
        output layout (the record's ``output_layout``, from the dims and options; the spec is not
        run).  API-2 variants get their buffer as ``run(problem, out, **params)``."""
        c = self._cache
        if "out" not in c:
            shape, dtype = self.record.output_layout(self.dims, self.options)
            c["out"] = np.zeros(shape, dtype)
        return c["out"]

    def set_output(self, buf: np.ndarray) -> None:
        self._cache["out"] = buf

    # -- descriptor
    def descriptor(self) -> str:
        od = self.record
        dims = ",".join(f"{k}={_fmt(self.dims[k])}" for k in od.dims)
        opts = ",".join(f"{k}={_fmt(v)}" for k, v in self.options.items())
        fills = ",".join(f"{k}={self.fills[k]}" for k in self.input_shapes())
        return f"{self.op}:{dims}:{opts}:{fills}"

    @classmethod
    def parse(cls, line: str) -> "Problem":
        """Inverse of :meth:`descriptor`."""
        parts = line.strip().split(":")
        if len(parts) != 4:
            raise ValueError(f"descriptor {line!r}: expected OP:DIMS:OPTIONS:FILLS (4 ':'-separated fields)")
        op, dims_s, opts_s, fills_s = parts

        def kv(s, what):
            out = {}
            for item in filter(None, s.split(",")):
                k, eq, v = item.partition("=")
                if not eq:
                    raise ValueError(f"descriptor {line!r}: {what} item {item!r} is not KEY=VALUE")
                out[k] = v
            return out

        dims = {k: _parse_value(v) for k, v in kv(dims_s, "dims").items()}
        bools = ops.get(op).bool_options
        opts = {}
        for k, v in kv(opts_s, "options").items():
            val = _parse_value(v)
            opts[k] = bool(val) if k in bools else val
        return cls(op, dims, opts, kv(fills_s, "fills"))

    def __eq__(self, other):
        return isinstance(other, Problem) and self.descriptor() == other.descriptor()

    def __hash__(self):
        return hash(self.descriptor())

    def __repr__(self):
        return f"Problem({self.descriptor()!r})"
