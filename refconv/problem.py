"""Problem instances: spec inputs + options, with a one-line descriptor that round-trips.

A :class:`Problem` is fully described by its op, its *dims* (shapes and dtype), its *options*
(the spec's keyword arguments) and one *fill* per input (how the input data is generated, from a
kind and a seed).  The descriptor is one line, in the spirit of oneDNN benchdnn's
``mb1ic64ih56oc64oh56kh3ph1``::

    filter2d:dtype=uint8,c=0,h=5,w=7,kh=3,kw=3:boundary=valid,accumulator=int,shift=4,cast=wrap:image=random.17,weights=exact.3

so any failure can be re-run from that line alone (``Problem.parse(line)``).  A problem drawn
for a variant that takes strided inputs (``Variant.layouts``) has a fifth field, the layouts of
the inputs that are not C-contiguous (``...:image=random.17,weights=exact.3:image=pitch3``; see
:data:`LAYOUT_KINDS`).

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
from .specs.record import OpRecord

FILL_KINDS = ("zero", "one", "delta", "ramp", "exact", "extreme", "random", "special", "onehot", "ties",
              "sparse", "edge")


# ----------------------------------------------------------------------------- fills

def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _int_range(dtype, signed: tuple) -> tuple:
    """``(lo, hi)`` of integer fills: 0..min(max, 255) for an unsigned dtype, else ``signed``."""
    info = np.iinfo(dtype)
    return (0, min(info.max, 255)) if info.min == 0 else signed


def _fill_delta(rng, shape, dtype, role):
    size = _size(shape)
    a = np.zeros(size, dtype)
    if size:
        a[rng.integers(size)] = np.iinfo(dtype).max if dtype.kind in "ui" else 1.0
    return a.reshape(shape)


def _fill_ramp(rng, shape, dtype, role):
    i = np.arange(_size(shape), dtype=np.int64)
    if dtype.kind in "ui" and np.iinfo(dtype).min == 0:
        return ((i * 7) % 256).astype(dtype).reshape(shape)
    return ((i * 7) % 17 - 8).astype(dtype).reshape(shape)


def _fill_exact(rng, shape, dtype, role):
    if dtype.kind in "ui":
        lo, hi = _int_range(dtype, (-100, 100))
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    if role == "weights":
        # integers in [-8, 8], and some halves / quarters: every product with a uint8 or a
        # small-integer pixel and every partial sum is exact in float32.
        return (rng.integers(-32, 33, size=shape) / 4.0).astype(dtype)
    return rng.integers(-16, 17, size=shape).astype(dtype)


def _fill_extreme(rng, shape, dtype, role):
    if dtype.kind in "ui":
        info = np.iinfo(dtype)
        pool = np.unique(np.array([0, info.max, info.min, 1], dtype=np.int64)).astype(dtype)
        return rng.choice(pool, size=shape).astype(dtype)
    fi = np.finfo(dtype)
    pool = np.array([0.0, 1.0, -1.0, fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal], dtype=dtype)
    return rng.choice(pool, size=shape).astype(dtype)


def _fill_onehot(rng, shape, dtype, role):
    a = np.zeros(shape, dtype)
    if _size(shape):
        rows = 1 if (len(shape) <= 1 or role == "weights" and len(shape) == 2) else shape[0]
        flat = a.reshape(rows, -1)
        cols = rng.integers(flat.shape[1], size=rows)
        if dtype.kind in "ui":
            vals = 2 ** rng.integers(0, 8, size=rows)
        else:
            vals = np.ldexp(rng.choice([-1.0, 1.0], size=rows), rng.integers(-2, 3, size=rows))
        flat[np.arange(rows), cols] = vals
    return a


def _fill_ties(rng, shape, dtype, role):
    if dtype.kind in "ui":
        lo, hi = _int_range(dtype, (-100, 100))
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    lo, hi = {"weights": (-8, 8), "pixels": (0, 96)}.get(role, (-64, 64))
    return (rng.integers(lo, hi + 1, size=shape) / 4.0).astype(dtype)


def _fill_sparse(rng, shape, dtype, role):
    if dtype.kind in "ui":
        lo, hi = _int_range(dtype, (-1000, 1000))
        v = rng.integers(lo, hi + 1, size=shape)
        return np.where(rng.random(shape) < 0.5, 0, v).astype(dtype)
    tiny = rng.choice([-1.0, 1.0], size=shape) * 10.0 ** rng.uniform(-9, -6, size=shape)
    quarters = rng.integers(-8, 9, size=shape) / 4.0
    u = rng.random(shape)
    return np.where(u < 0.4, 0.0, np.where(u < 0.7, tiny, quarters)).astype(dtype)


def _fill_edge(rng, shape, dtype, role):
    if dtype.kind in "ui":
        info = np.iinfo(dtype)
        top = min(info.max, 255) if info.min == 0 else info.max
        pool = np.unique(np.array([0, 1, top - 1, top] + ([] if info.min == 0 else [info.min, info.min + 1]),
                                  np.int64))
        return rng.choice(pool, size=shape).astype(dtype)
    fi = np.finfo(dtype)
    if role == "weights":
        pool = np.array([0.0, 1.0, -1.0, 0.5, 1 / 255, 256 / 255, 2.0 ** 23, 2.0 ** 31 / 255,
                         2.0 ** 31 / 2295, float(fi.max), -float(fi.max)], np.float64)
    else:
        m = float(fi.max)
        pool = np.array([0.0, 1.0, -1.0, m, -m, m / 2, -m / 2, m / 4, -m / 4], np.float64)
        pool = np.concatenate([pool, [np.inf, -np.inf, np.nan]])
        if role == "pixels":
            pool = np.concatenate([pool, [255.0, 254.5, 255.5]])
    return rng.choice(pool, size=shape).astype(dtype)


def _fill_random(rng, shape, dtype, role, special=False):
    if dtype.kind in "ui":
        lo, hi = _int_range(dtype, (-1000, 1000))
        if special:
            raise ValueError(f"fill kind 'special' needs a float dtype, got {dtype}")
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    if role == "weights":
        a = rng.uniform(-2.0, 2.0, size=shape).astype(dtype)
    elif role == "pixels":
        a = rng.uniform(0.0, 255.0, size=shape).astype(dtype)
    else:
        a = rng.standard_normal(size=shape).astype(dtype)
    size = _size(shape)
    if special and size:
        flat = a.reshape(-1)
        n = max(1, size // 8)
        idx = rng.choice(size, size=n, replace=False)
        flat[idx] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dtype), size=n)
    return a


#: fill kind -> ``generate(rng, shape, dtype, role)``
_FILLS = {
    "zero": lambda rng, shape, dtype, role: np.zeros(shape, dtype),
    "one": lambda rng, shape, dtype, role: np.ones(shape, dtype),
    "delta": _fill_delta, "ramp": _fill_ramp, "exact": _fill_exact, "extreme": _fill_extreme,
    "random": _fill_random, "special": lambda rng, shape, dtype, role: _fill_random(rng, shape, dtype, role, True),
    "onehot": _fill_onehot, "ties": _fill_ties, "sparse": _fill_sparse, "edge": _fill_edge,
}


def make_fill(kind: str, seed: int, shape: tuple, dtype: np.dtype, role: str = "data") -> np.ndarray:
    """Deterministic data for one input.  ``role`` is ``"weights"`` for filter/conv weights (signed,
    small) and ``"data"`` otherwise.  See the module docstring for the kinds."""
    if kind not in FILL_KINDS:
        raise ValueError(f"fill kind {kind!r} not accepted; accepted: {FILL_KINDS}")
    return _FILLS[kind](np.random.default_rng(seed), shape, np.dtype(dtype), role)


# ----------------------------------------------------------------------------- layouts

#: how an input may lie in memory (``Problem.layouts``, drawn only for a variant that declares
#: ``layouts=("contiguous", "strided")``); the values are the same whatever the layout:
#:
#: ``pitchK``: each row (last axis) followed by ``K`` unused elements -- the first columns of a
#: wider array, i.e. a row pitch of ``w + K``;  ``stepK``: every ``K``-th element of a ``K``
#: times wider array along the last axis;  ``t``: transposed storage (the axes reversed in
#: memory: Fortran order, the ``.T`` of a C-contiguous array).  No token (``c``): C-contiguous.
LAYOUT_KINDS = ("pitch", "step", "t")
_LAYOUT_RE = re.compile(r"t|pitch[1-9]\d*|step[2-9]\d*")


def _gap_fill(dtype: np.dtype):
    """What the unused elements of a strided layout hold: NaN for floats, the bytes 0xA5 for
    integers, so that a kernel reading them instead of the view's elements gets garbage."""
    if dtype.kind == "f":
        return np.nan
    if dtype.kind in "iu":
        return np.frombuffer(b"\xa5" * dtype.itemsize, dtype)[0]
    return 0


def lay_out(a: np.ndarray, token: str) -> np.ndarray:
    """A read-only view with the values of ``a`` lying in memory as ``token`` says (see
    :data:`LAYOUT_KINDS`; ``"c"``: ``a`` itself)."""
    if token == "c":
        return a
    if not _LAYOUT_RE.fullmatch(token):
        raise ValueError(f"layout {token!r}; accepted: c, t, pitchK (K >= 1), stepK (K >= 2)")
    if token == "t":
        v = np.ascontiguousarray(np.transpose(a)).transpose()
    else:
        k = int(re.sub(r"\D", "", token))
        w = a.shape[-1] if a.ndim else 1
        a2 = a.reshape(a.shape or (1,))
        wide = w + k if token.startswith("pitch") else w * k
        base = np.full(a2.shape[:-1] + (wide,), _gap_fill(a.dtype), a.dtype)
        sl = slice(0, w) if token.startswith("pitch") else slice(0, wide, k)
        base[..., sl] = a2
        v = base[..., sl].reshape(a.shape) if a.ndim else base[..., sl][0]
    v.setflags(write=False)
    return v


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
    ``fills`` (input name -> ``"kind.seed"``) and, optionally, ``layouts`` (input name -> how
    it lies in memory, :data:`LAYOUT_KINDS`; absent: C-contiguous).  ``inputs`` materialises the
    arrays in their layouts, ``logical_inputs`` as C-contiguous arrays (cached; the spec's);
    ``option(name)`` is an option's value or the spec's default.  A variant writes into the ``out``
    buffer the checker passes to ``run(problem, out, **params)`` (plugin API 2); ``output()`` is
    the deprecated API-1 buffer."""

    op: str
    dims: Mapping[str, Any]
    options: Mapping[str, Any] = field(default_factory=dict)
    fills: Mapping[str, str] = field(default_factory=dict)
    layouts: Mapping[str, str] = field(default_factory=dict)

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
        layouts = {k: v for k, v in dict(self.layouts).items() if v != "c"}
        for name, token in layouts.items():
            if name not in fills:
                raise ValueError(f"layout for {name!r}: no such input; accepted: {list(fills)}")
            if not _LAYOUT_RE.fullmatch(token):
                raise ValueError(f"layout for {name!r} is {token!r}; accepted: c, t, pitchK (K >= 1), stepK (K >= 2)")
        object.__setattr__(self, "layouts", layouts)
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
        x, w[, bias]; ``sobel``: image; ``matvec``: m, v; ``kron``: a, b), each in its layout
        (read-only views; C-contiguous unless ``layouts`` names it).  Generated once, then cached."""
        c = self._cache
        if "inputs" not in c:
            logical = self.logical_inputs
            c["inputs"] = {k: lay_out(v, self.layouts.get(k, "c")) for k, v in logical.items()}
        return c["inputs"]

    @property
    def logical_inputs(self) -> dict:
        """The input arrays as C-contiguous arrays (the values of :attr:`inputs`): what the spec sees."""
        c = self._cache
        if "logical" not in c:
            od = self.record
            out = {}
            for name, shape in self.input_shapes().items():
                kind, _, seed = self.fills[name].partition(".")
                out[name] = make_fill(kind, int(seed), shape, od.input_dtype(name, self.dims), od.input_role(name))
                out[name].setflags(write=False)
            c["logical"] = out
        return c["logical"]

    def input_nbytes(self) -> int:
        """Bytes of all inputs, from the dims (the arrays are not materialised)."""
        od = self.record
        return sum(int(np.prod(shape, dtype=np.int64)) * od.input_dtype(name, self.dims).itemsize
                   for name, shape in self.input_shapes().items())

    def with_inputs(self, arrays: Mapping[str, np.ndarray]) -> "Problem":
        """A copy whose inputs are the given arrays (used to replay a saved reproducer)."""
        p = dataclasses.replace(self)
        p._cache["logical"] = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
        return p

    def spec_args(self) -> tuple[list, dict]:
        """Positional inputs and keyword arguments of the op's spec (``self.record.spec``): the
        inputs in order (None for an absent optional one; C-contiguous whatever their layouts),
        the options and the record's ``spec_dims``."""
        return self.record.spec_args(self.logical_inputs, self.options, self.dims)

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
        if self.layouts:      # a fifth field only for a strided draw: other descriptors unchanged
            lays = ",".join(f"{k}={self.layouts[k]}" for k in self.input_shapes() if k in self.layouts)
            return f"{self.op}:{dims}:{opts}:{fills}:{lays}"
        return f"{self.op}:{dims}:{opts}:{fills}"

    @classmethod
    def parse(cls, line: str) -> "Problem":
        """Inverse of :meth:`descriptor`."""
        parts = line.strip().split(":")
        if len(parts) not in (4, 5):
            raise ValueError(f"descriptor {line!r}: expected OP:DIMS:OPTIONS:FILLS[:LAYOUTS] "
                             f"(4 or 5 ':'-separated fields)")
        op, dims_s, opts_s, fills_s = parts[:4]

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
        return cls(op, dims, opts, kv(fills_s, "fills"), kv(parts[4], "layouts") if len(parts) == 5 else {})

    def __eq__(self, other):
        return isinstance(other, Problem) and self.descriptor() == other.descriptor()

    def __hash__(self):
        return hash(self.descriptor())

    def __repr__(self):
        return f"Problem({self.descriptor()!r})"
