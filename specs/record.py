"""One record per op: everything the core knows about an op, declared next to its spec.

A spec module ``specs/<op>.py`` (``refconv.specs.<op>``) defines the spec function and one
:class:`OpRecord` named ``RECORD``; ``refconv.specs.RECORDS`` lists the built-in ones (static
imports) and :mod:`refconv.ops` takes more from :func:`refconv.ops.register_op`.  The core
(problems, strategies, tolerance, checker, profiles, peers, roofline, bench, CLI help) reads an
op only through its record, so adding an op is one spec file.

This module holds plain data and the rules that follow from it: the vocabulary of the records
(:class:`OpRecord`, :class:`Input`, :class:`BenchProblem`, :class:`Directed`, :data:`ROLES`,
:class:`Range`).  It imports only NumPy and ``refconv.specs`` modules (the spec layer is the
ground floor: the core imports it, never the other way round).
"""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from .peer import PeerCall

#: fill roles (see :func:`refconv.problem.make_fill`): how an input's data is generated
ROLES = ("data", "weights", "pixels")


@dataclass(frozen=True)
class Range:
    """An inclusive integer range ``lo..hi`` for a problem dimension a variant supports;
    ``hi=None`` means unbounded above (``lo..``).

    A variant's ``supports`` states what the kernel *implements*: a size is capped only where the
    kernel truly has a limit (a compile-time array, an algorithm that needs ``h >= 3``).  Limits
    that depend on the device (threads per block, shared / constant memory, grid dimensions,
    device memory) belong in the variant's ``constraint``, and what is cheap to draw belongs in
    the profile (:mod:`refconv.profiles`)."""

    lo: int
    hi: int | None = None

    def __post_init__(self):
        if not isinstance(self.lo, int) or (self.hi is not None and not isinstance(self.hi, int)):
            raise TypeError(f"Range({self.lo!r}, {self.hi!r}): bounds must be int (hi may be None)")
        if self.hi is not None and self.hi < self.lo:
            raise ValueError(f"Range({self.lo}, {self.hi}): hi < lo")

    def __contains__(self, x) -> bool:
        return (isinstance(x, int) and not isinstance(x, bool) and self.lo <= x
                and (self.hi is None or x <= self.hi))

    @property
    def bounded(self) -> bool:
        return self.hi is not None

    def cap(self, hi: int | None) -> "Range":
        """This range with its upper end lowered to ``hi`` (never below ``lo``)."""
        if hi is None:
            return self
        top = hi if self.hi is None else min(self.hi, hi)
        return Range(self.lo, max(self.lo, top))

    def __repr__(self):
        return f"{self.lo}..{'' if self.hi is None else self.hi}"


@dataclass(frozen=True)
class Input:
    """One array argument of the spec, in the spec's argument order.  ``role`` picks the fill
    generator's value ranges (``"weights"``: small signed filter taps; ``"pixels"``: image data;
    ``"data"``: anything else); ``optional``: the input may be absent (the spec then gets None),
    e.g. conv2d's ``bias``."""

    name: str
    role: str = "data"
    optional: bool = False

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"Input {self.name!r}: role {self.role!r} not accepted; accepted: {ROLES}")


@dataclass(frozen=True)
class BenchProblem:
    """A benchmark problem of an op: its dims, options and fills.  In ``OpRecord.bench`` (keyed by
    ``refconv bench --scale`` name) only those three matter; in ``OpRecord.presets`` (``refconv
    bench --preset NAME``) also ``name``, ``source`` (where the sizes come from), ``only`` (a
    variant-name glob: the other variants are skipped), ``note`` and ``tags``."""

    dims: Mapping[str, Any]
    options: Mapping[str, Any] = field(default_factory=dict)
    fills: Mapping[str, str] = field(default_factory=dict)
    name: str = ""
    source: str = ""
    only: str | None = None
    note: str = ""
    tags: tuple = ()


@dataclass(frozen=True)
class Directed:
    """One row of an op's table of directed cases (:mod:`refconv.directed`): an input pattern
    aimed at a bug class, run on every variant whose support admits it before the random draws.

    ``name``: a short label (it appears in the case's progress and reproducer); ``bug``: the bug
    class the row is there for (docs/specs.md lists them).  ``fills``: input -> fill kind, or a
    tuple of kinds where the first that the input's dtype and the variant's ``fill.<input>``
    support admit is used (``special`` has no integer form, so ``("special", "edge")`` falls back
    to saturation values on uint8).  ``pins``: dim or option -> the values the bug class needs,
    in order of preference: the case takes the first the variant admits and holds one of them
    (an option the record's rules leave out, as rounding for a float image, does not apply);
    a row with a pin the variant admits no value of is outside its support and skipped.
    ``seed``: the fills' seed (fixed: every run checks the same data)."""

    name: str
    bug: str
    fills: Mapping[str, Any]
    pins: Mapping[str, tuple] = field(default_factory=dict)
    seed: int = 1

    def fill_kinds(self, name: str) -> tuple:
        """The fill kinds to try for input ``name``, in order (empty: the input is not named)."""
        k = self.fills.get(name, ())
        return (k,) if isinstance(k, str) else tuple(k)


def _default_dtype(name: str, dims: Mapping[str, Any]):
    return dims["dtype"]


@dataclass(frozen=True, eq=False)
class OpRecord:
    """Everything the core needs about one op.

    The callables taking ``options`` get them complete (the spec's defaults filled in).

    * ``name``; ``spec``: the spec function, ``spec(*inputs, **options, **spec_dims)``.
    * ``inputs``: the spec's array arguments (:class:`Input`), in order.
    * ``dims``: dim -> full domain (a tuple of values, or a :class:`Range`); a
      problem's shapes and dtype.  ``spec_dims``: dims that are also spec keyword arguments
      (conv2d's ``groups``).
    * ``options``: spec keyword option -> full domain.  Their defaults are *read from the spec's
      signature* (:attr:`defaults`), never restated.
    * ``shapes(dims)``: input name -> shape, for the inputs present.  ``input_dtypes(name, dims)``:
      an input's dtype (default ``dims["dtype"]``).
    * ``layout(dims, options)``: ``(shape, dtype)`` of the spec's result from the dims and
      options alone (no spec run); read it through :meth:`output_layout`.
    * ``validity(dims, options)``: the one validity rule across dims and options that the domains
      do not express (a reason string, or None); the strategies never draw outside it.
    * ``interior(dims)``: for ops a ``writes="interior"`` variant may implement:
      ``((H, W), (row, col))``, the spatial size of the full buffer and the offset of the valid
      interior in it (the kernel's anchor).
    * ``draw(d)``: how to draw ``(dims, options)`` with a :class:`refconv.strategies.Drawer`
      (None: every dim then every option from its domain, then ``validity``);
      ``fill_combos``: pairings of fill kinds drawn together (one per bug class).
    * ``accept(inputs, options)``: the acceptance engine: the per-element accepted set
      (:mod:`refconv.specs.intervals`) of the result for these inputs (by name) and options (defaults
      filled in); None: the spec's result is the only accepted value (exact ops).
    * ``rows(inputs)``: for ops checked by row blocks (never forming the whole expected result):
      ``(shape, dtype, rows_of)`` with ``rows_of(r0, r1)`` the spec's rows ``r0 .. r1-1``.
    * ``flops(dims, options, n_out)``: the roofline's arithmetic (``n_out`` output elements).
    * ``bench``: ``refconv bench --scale`` name -> :class:`BenchProblem`; ``presets``: the named
      benchmark problems (``--preset``).
    * ``caps``: profile name (:mod:`refconv.profiles`: ``ci``, ``dev``, ``thorough``, ``gpu``)
      -> dim or option -> upper cap of its drawn values (a profile caps every size it draws; a
      cap the profile itself names wins).
    * ``profile_shapes``: profile name -> whole size configurations (dicts of the size dims)
      that the profile draws instead of independent sizes with its ``shape_weight`` (the seed
      studies' own configurations and a GPU's boundaries, for the ``gpu`` profile).
    * ``peers``: the library calls ``refconv bench`` times beside the variants
      (:class:`refconv.specs.peer.PeerCall`); ``baseline``: peer names in the order the bench
      picks its ratio column's peer (the first available one).
    * ``compile_dims``: preferred small sizes for ahead-of-time compile checks (dim -> value; a
      compile check uses the domain's lower end for dims not named).
    * ``directed``: the op's table of directed cases (:class:`Directed`), crossed pairwise
      with the option values and launch geometry a variant admits (:mod:`refconv.directed`);
      ``grid``: size dim -> launch axis (``"x"``: the first integer launch parameter,
      ``"y"``: the second), the dims whose directed sizes are derived from the launch
      parameters (one element, one partial block at each edge, several blocks).
    * ``order``: listing order among ops.
    """

    name: str
    spec: Callable[..., Any]
    inputs: tuple
    dims: Mapping[str, Any]
    shapes: Callable[[Mapping[str, Any]], dict]
    layout: Callable[[Mapping[str, Any], Mapping[str, Any]], tuple]
    options: Mapping[str, Any] = field(default_factory=dict)
    input_dtypes: Callable[[str, Mapping[str, Any]], Any] = _default_dtype
    spec_dims: tuple = ()
    validity: Callable[[Mapping[str, Any], Mapping[str, Any]], str | None] | None = None
    interior: Callable[[Mapping[str, Any]], tuple] | None = None
    draw: Callable[[Any], tuple] | None = None
    fill_combos: tuple = ()
    accept: Callable[[dict, dict], Any] | None = None
    rows: Callable[[dict], tuple] | None = None
    flops: Callable[[Mapping[str, Any], Mapping[str, Any], int], int] | None = None
    bench: Mapping[str, BenchProblem] = field(default_factory=dict)
    presets: tuple = ()
    caps: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    profile_shapes: Mapping[str, tuple] = field(default_factory=dict)
    peers: tuple = ()
    baseline: tuple = ()
    compile_dims: Mapping[str, int] = field(default_factory=dict)
    directed: tuple = ()
    grid: Mapping[str, str] = field(default_factory=dict)
    order: int = 1000

    def __post_init__(self):
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "dims", dict(self.dims))
        object.__setattr__(self, "options", dict(self.options))
        if not all(isinstance(i, Input) for i in self.inputs) or not self.inputs:
            raise TypeError(f"OpRecord {self.name!r}: inputs must be a non-empty tuple of Input")
        params = inspect.signature(self.spec).parameters
        names = list(params)
        want = [i.name for i in self.inputs]
        if names[:len(want)] != want:
            raise ValueError(f"OpRecord {self.name!r}: inputs {want} are not the first arguments of "
                             f"{self.spec.__name__}{inspect.signature(self.spec)}")
        for k in tuple(self.options) + tuple(self.spec_dims):
            p = params.get(k)
            if p is None or p.default is inspect.Parameter.empty:
                raise ValueError(f"OpRecord {self.name!r}: {k!r} is not a keyword argument with a default of "
                                 f"{self.spec.__name__}{inspect.signature(self.spec)}")
        for k in self.spec_dims:
            if k not in self.dims:
                raise ValueError(f"OpRecord {self.name!r}: spec dim {k!r} is not one of dims {list(self.dims)}")
        object.__setattr__(self, "directed", tuple(self.directed))
        if not all(isinstance(r, Directed) for r in self.directed):
            raise TypeError(f"OpRecord {self.name!r}: directed must be a tuple of Directed")
        for k, axis in dict(self.grid).items():
            if k not in self.dims or axis not in ("x", "y"):
                raise ValueError(f"OpRecord {self.name!r}: grid {k!r}: {axis!r}; accepted: a dim of "
                                 f"{list(self.dims)} mapped to 'x' or 'y'")
        self._check_peers()
        clash = set(self.dims) & set(self.options)
        if clash:
            raise ValueError(f"OpRecord {self.name!r}: {sorted(clash)} both dims and options")

    def _check_peers(self) -> None:
        """``peers`` is a tuple of :class:`PeerCall` with distinct names, and ``baseline`` names
        only them; every ``profile_shapes`` configuration names only dims."""
        object.__setattr__(self, "peers", tuple(self.peers))
        object.__setattr__(self, "baseline", tuple(self.baseline))
        if not all(isinstance(p, PeerCall) for p in self.peers):
            raise TypeError(f"OpRecord {self.name!r}: peers must be a tuple of PeerCall")
        names = [p.name for p in self.peers]
        if len(set(names)) != len(names):
            raise ValueError(f"OpRecord {self.name!r}: peer names {names} are not distinct")
        unknown = [b for b in self.baseline if b not in names]
        if unknown:
            raise ValueError(f"OpRecord {self.name!r}: baseline {unknown} not accepted; accepted: peer names {names}")
        shapes = {k: tuple(dict(c) for c in v) for k, v in dict(self.profile_shapes).items()}
        object.__setattr__(self, "profile_shapes", shapes)
        for prof, configs in shapes.items():
            for c in configs:
                if not set(c) <= set(self.dims):
                    raise ValueError(f"OpRecord {self.name!r}: profile_shapes[{prof!r}] {c} names "
                                     f"{sorted(set(c) - set(self.dims))}; accepted: dims {list(self.dims)}")

    # -- derived from the spec's signature
    @functools.cached_property
    def defaults(self) -> dict:
        """The spec's keyword arguments and their defaults, read from its signature (the options,
        and the ``spec_dims``)."""
        ins = set(self.input_names)
        return {n: p.default for n, p in inspect.signature(self.spec).parameters.items()
                if n not in ins and p.default is not inspect.Parameter.empty}

    def default(self, option: str):
        """The spec's default for ``option`` (``KeyError`` if the spec has no such keyword)."""
        return self.defaults[option]

    @property
    def input_names(self) -> tuple:
        return tuple(i.name for i in self.inputs)

    @functools.cached_property
    def bool_options(self) -> frozenset:
        """Options whose domain is booleans (a descriptor writes them as 0/1)."""
        return frozenset(k for k, dom in self.options.items()
                         if isinstance(dom, tuple) and dom and all(isinstance(v, bool) for v in dom))

    def complete(self, options: Mapping[str, Any]) -> dict:
        """``options`` with the spec's defaults filled in."""
        return {**self.defaults, **options}

    # -- problems
    def output_layout(self, dims: Mapping[str, Any], options: Mapping[str, Any]) -> tuple:
        """``(shape, dtype)`` of the spec's result, from the dims and options alone."""
        shape, dtype = self.layout(dims, self.complete(options))
        return tuple(int(n) for n in shape), np.dtype(dtype)

    def why_invalid(self, dims: Mapping[str, Any], options: Mapping[str, Any]) -> str | None:
        """Why ``(dims, options)`` breaks the op's validity rule (None: it does not)."""
        return None if self.validity is None else self.validity(dims, self.complete(options))

    def count_flops(self, dims: Mapping[str, Any], options: Mapping[str, Any], n_out: int) -> int:
        if self.flops is None:
            raise ValueError(f"op {self.name!r} declares no flops count")
        return int(self.flops(dims, self.complete(options), n_out))

    def input_shapes(self, dims: Mapping[str, Any]) -> dict:
        return self.shapes(dims)

    def input_dtype(self, name: str, dims: Mapping[str, Any]) -> np.dtype:
        return np.dtype(self.input_dtypes(name, dims))

    def input_role(self, name: str) -> str:
        for i in self.inputs:
            if i.name == name:
                return i.role
        raise KeyError(f"{self.name}: no input {name!r}; inputs: {list(self.input_names)}")

    def spec_args(self, inputs: Mapping[str, Any], options: Mapping[str, Any], dims: Mapping[str, Any]):
        """``(args, kwargs)`` of the spec call: the inputs in order (None for an absent optional
        one), the options, and the ``spec_dims``."""
        args = []
        for i in self.inputs:
            if i.name in inputs:
                args.append(inputs[i.name])
            elif i.optional:
                args.append(None)
            else:
                raise ValueError(f"{self.name}: missing input {i.name!r}; required: "
                                 f"{[j.name for j in self.inputs if not j.optional]}")
        kwargs = dict(options)
        kwargs.update({k: dims[k] for k in self.spec_dims})
        return args, kwargs

    def __repr__(self):
        return f"OpRecord({self.name!r})"
