"""What a backend declares: its variants, their supported subspace, their launch parameters.

A *variant* is one implementation of one op (``filter2d``, ``conv2d``, ``sobel``, ``matvec``,
``kron``) by one backend.  Its full id is ``op/backend/name``.  A *backend* is a named bundle of
variants exposed through the ``refconv.backends`` entry-point group; nothing in the core names a
particular backend.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

OPS = ("filter2d", "conv2d", "sobel", "matvec", "kron")


@dataclass(frozen=True)
class Param:
    """A launch / tuning parameter: ``name`` takes one of ``values``; ``default`` is what a run
    without the checker uses (what a GPU wants), the checker draws from ``values``."""

    name: str
    values: tuple
    default: Any = None

    def __post_init__(self):
        if not self.values:
            raise ValueError(f"Param {self.name!r}: values must be a non-empty tuple")
        object.__setattr__(self, "values", tuple(self.values))
        if self.default is None:
            object.__setattr__(self, "default", self.values[0])
        elif self.default not in self.values:
            raise ValueError(
                f"Param {self.name!r}: default {self.default!r} is not one of values {self.values!r}")


@dataclass(frozen=True)
class Range:
    """An inclusive integer range ``lo..hi`` for a problem dimension a variant supports."""

    lo: int
    hi: int

    def __contains__(self, x) -> bool:
        return isinstance(x, (int,)) and self.lo <= x <= self.hi

    def __repr__(self):
        return f"{self.lo}..{self.hi}"


#: ``writes`` values: which part of the output buffer a variant writes.
#: ``"all"``: every element of the spec's output.  ``"interior"``: the output buffer has the
#: input's spatial size and only the pixels whose whole window lies inside the image are written
#: (spec with ``boundary="valid"``); the border must be left untouched (it keeps its poison).
WRITES = ("all", "interior")


@dataclass(frozen=True)
class Variant:
    """One implementation of one op.

    * ``supports`` maps a problem field (a *dim* such as ``"h"``, ``"kh"``, ``"dtype"`` or a spec
      *option* such as ``"boundary"``) to the values it accepts: a tuple of values or a
      :class:`Range`.  Fields not named take the op's full default domain (see
      :mod:`refconv.problem`).  This is the subspace of the spec the variant claims to implement
      exactly; strategies only draw inside it.
    * ``params`` are its launch parameters; ``constraint(problem, params)`` may return a string
      saying why a combination is invalid (e.g. block larger than the device allows); the checker
      then redraws.
    * ``run(problem, **params)`` computes on host data and returns a NumPy array.  It must write
      its result into ``problem.output()`` (a poisoned buffer owned by the checker) or a copy of
      it, so that unwritten elements are caught.
    * ``available()`` returns ``None`` when it can run here, else the reason why not.
    """

    op: str
    backend: str
    name: str
    run: Callable[..., Any]
    supports: Mapping[str, Any] = field(default_factory=dict)
    params: Sequence[Param] = ()
    available: Callable[[], str | None] = lambda: None
    writes: str = "all"
    constraint: Callable[..., str | None] | None = None
    origin: str = ""
    doc: str = ""

    def __post_init__(self):
        if self.op not in OPS:
            raise ValueError(f"Variant {self.name!r}: op {self.op!r} is not one of {OPS}")
        if self.writes not in WRITES:
            raise ValueError(f"Variant {self.id}: writes={self.writes!r}, accepted: {WRITES}")
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "supports", dict(self.supports))

    @property
    def id(self) -> str:
        return f"{self.op}/{self.backend}/{self.name}"

    def default_params(self) -> dict:
        return {p.name: p.default for p in self.params}

    def check_params(self, params: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` naming the parameter if ``params`` is outside the declared values."""
        known = {p.name: p for p in self.params}
        for k, v in params.items():
            if k not in known:
                raise ValueError(f"{self.id}: unknown launch parameter {k!r}; accepted: {sorted(known)}")
            if v not in known[k].values:
                raise ValueError(f"{self.id}: {k}={v!r} not allowed; accepted: {known[k].values}")


@dataclass(frozen=True)
class BackendOption:
    """A command-line / environment option a backend adds to ``refconv check`` (and to the pytest
    plugin as ``--refconv-<flag>``), e.g. the OpenCL target.  ``choices=None`` with
    ``is_flag=True`` makes it an on/off switch."""

    flag: str               # e.g. "--opencl"
    dest: str               # e.g. "opencl"
    help: str
    env: str | None = None  # e.g. "REFCONV_OPENCL"
    choices: tuple | None = None
    default: Any = None
    is_flag: bool = False


@dataclass
class Backend:
    """A named bundle of variants.  ``variants()`` is called lazily (importing a GPU toolchain can
    be slow); ``configure(options)`` receives the values of this backend's ``options`` before a
    run; ``preflight(variants, options)`` may run a per-variant step before checking (e.g. a
    compile check) and returns ``{variant_id: [finding dicts]}``; ``describe()`` returns a short
    line about where it runs (e.g. "CUDA simulator" or the GPU name) for ``refconv list``.
    ``available()`` returns ``None`` or a reason the whole backend cannot run here.
    ``bench`` (optional, a :class:`refconv.timing.BenchHooks`) gives ``refconv bench`` a device
    copy for the bandwidth roofline and says when the device is simulated."""

    name: str
    variants: Callable[[], Sequence[Variant]]
    available: Callable[[], str | None] = lambda: None
    options: Sequence[BackendOption] = ()
    configure: Callable[[Mapping[str, Any]], None] = lambda options: None
    preflight: Callable[..., Mapping[str, list]] | None = None
    describe: Callable[[], str] = lambda: ""
    bench: Any = None
