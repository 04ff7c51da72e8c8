"""What a backend declares: its variants, their supported subspace, their launch parameters.

A *variant* is one implementation of one op (``filter2d``, ``conv2d``, ``sobel``, ``matvec``,
``kron``) by one backend.  Its full id is ``op/backend/name``.  A *backend* is a named bundle of
variants exposed through the ``refconv.backends`` entry-point group; nothing in the core names a
particular backend.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from . import ops as _ops
from .specs.record import Range  # noqa: F401  (refconv.variant.Range: the plugin API's name)

#: The plugin API version.  2: ``run(problem, out, **params)`` writes into the ``out`` it is
#: given (an array, or a :class:`refconv.sink.RowSink` for ``output="rows"``).  1 (deprecated,
#: still accepted for one release with a ``DeprecationWarning``): ``run(problem, **params)``
#: writes into ``problem.output()``.
API_VERSION = 2


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


#: ``output`` values: how a variant delivers its result.  ``"array"``: ``run`` writes into the
#: NumPy buffer it is given.  ``"rows"``: ``run`` is given a :class:`RowSink` and hands it the
#: result in row blocks (``sink.write(row0, block)``), so a result larger than host or device
#: memory (a 125 GiB Kronecker product) is produced and checked block by block.
OUTPUTS = ("array", "rows")

#: ``layouts`` values: how the input arrays a variant's ``run`` is handed may lie in memory.
#: ``"contiguous"``: C-contiguous (the default, and all a variant gets unless it declares more).
#: ``"strided"``: also views with a row pitch, a step along the last axis or transposed storage
#: (drawn per input; :data:`refconv.problem.LAYOUT_KINDS`), as a torch or CuPy caller hands them.
LAYOUTS = ("contiguous", "strided")

#: ``writes`` values: which part of the output buffer a variant writes.
#: ``"all"``: every element of the spec's output.  ``"interior"``: the output buffer has the
#: input's spatial size and only the pixels whose whole window lies inside the image are written
#: (spec with ``boundary="valid"``); the border must be left untouched (it keeps its poison).
WRITES = ("all", "interior")


@dataclass(frozen=True)
class Variant:
    """One implementation of one op.

    * ``supports`` maps a problem field (a *dim* such as ``"h"``, ``"kh"``, ``"dtype"``, a spec
      *option* such as ``"boundary"``, or ``"fill.<input>"``) to the values it accepts: a tuple of
      values or a :class:`Range`.  Fields not named take the op's full default domain (see
      :mod:`refconv.problem`); a key that is none of these (a misspelling such as ``"colz"``)
      is refused with a ``ValueError`` naming the accepted keys (:func:`supports_keys`).  This is the subspace of the spec the variant claims to implement
      exactly; strategies only draw inside it.
    * ``params`` are its launch parameters; ``constraint(problem, params)`` may return a string
      saying why a combination is invalid (e.g. block larger than the device allows); the checker
      then redraws.
    * ``run(problem, out, **params)`` computes on host data and writes its result into ``out``:
      a poisoned NumPy buffer owned by the checker (``output="array"``; returning ``out`` or
      ``None`` are both fine), or a :class:`refconv.sink.RowSink` that takes the result in row
      blocks (``output="rows"``).  Copy ``out`` to the device as it is (not a zeroed buffer), so
      that elements the kernel never writes keep the poison and are caught.  The API-1 form
      ``run(problem, **params)`` writing into ``problem.output()`` still works, with a
      ``DeprecationWarning``.
    * ``available()`` returns ``None`` when it can run here, else the reason why not.
    * ``layouts`` (:data:`LAYOUTS`): ``("contiguous", "strided")`` declares that ``run`` takes
      strided inputs: the strategies then draw each input C-contiguous or as a strided view of the
      same values (``Problem.layouts``); the spec always sees the logical, contiguous arrays.
    * ``cost(problem, params)`` (optional) estimates the simulated work of one example in work
      units (about one simulated thread doing one loop step: threads launched x steps per thread,
      a barrier counted as a step); on a simulator the profile's ``sim_work`` bounds it and the
      strategies draw inside that budget (:mod:`refconv.cost`).  Without it the cost is the
      problem's multiply-adds.  It must not decrease when a size grows.
    """

    op: str
    backend: str
    name: str
    run: Callable[..., Any]
    supports: Mapping[str, Any] = field(default_factory=dict)
    params: Sequence[Param] = ()
    available: Callable[[], str | None] = lambda: None
    writes: str = "all"
    output: str = "array"
    constraint: Callable[..., str | None] | None = None
    cost: Callable[..., float] | None = None
    origin: str = ""
    doc: str = ""
    layouts: tuple = ("contiguous",)

    def __post_init__(self):
        if not _ops.has(self.op):
            raise ValueError(f"Variant {self.name!r}: op {self.op!r} not accepted; accepted: {_ops.names()}")
        if self.writes not in WRITES:
            raise ValueError(f"Variant {self.id}: writes={self.writes!r}, accepted: {WRITES}")
        if self.output not in OUTPUTS:
            raise ValueError(f"Variant {self.id}: output={self.output!r}, accepted: {OUTPUTS}")
        if self.output == "rows" and self.writes != "all":
            raise ValueError(f"Variant {self.id}: output='rows' needs writes='all', got {self.writes!r}")
        object.__setattr__(self, "layouts", tuple(self.layouts))
        if not self.layouts or any(x not in LAYOUTS for x in self.layouts):
            raise ValueError(f"Variant {self.id}: layouts={self.layouts!r}; accepted: a non-empty tuple of {LAYOUTS}")
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "supports", dict(self.supports))
        unknown = [k for k in self.supports if k not in supports_keys(self.op)]
        if unknown:   # a misspelt key would leave its dimension drawn over the op's whole domain
            raise ValueError(f"Variant {self.id}: supports key(s) {', '.join(map(repr, unknown))} not accepted; "
                             f"accepted for {self.op}: {', '.join(supports_keys(self.op))}")
        object.__setattr__(self, "_api", _run_api(self.run))
        if self._api == 1 and self.output == "rows":
            raise ValueError(f"Variant {self.id}: output='rows' needs run(problem, out, **params)")

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


def supports_keys(op: str) -> tuple:
    """The keys a variant of ``op`` may name in ``supports``: the op's dims (``h``, ``dtype`` ...),
    its spec options (``boundary`` ...) and ``fill.<input>`` (the fill kinds drawn for an input)."""
    rec = _ops.get(op)
    return (*rec.dims, *rec.options, *(f"fill.{n}" for n in rec.input_names))


def _run_api(run) -> int:
    """2 when ``run`` takes ``out`` as its second positional parameter, else 1 (the old form)."""
    import inspect
    try:
        ps = [p for p in inspect.signature(run).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return 2
    return 2 if len(ps) >= 2 and ps[1].name == "out" else 1


_warned: set = set()


def run_variant(variant: "Variant", problem, out, params: Mapping[str, Any]):
    """Call ``variant.run`` with the output ``out`` in whichever API form it was written for;
    returns what it returns (``None`` means: the result is in ``out``)."""
    if variant._api == 2:
        return variant.run(problem, out, **params)
    if variant.id not in _warned:
        _warned.add(variant.id)
        import warnings
        warnings.warn(f"{variant.id}: run(problem, **params) writing into problem.output() is plugin API 1, "
                      f"deprecated; write run(problem, out, **params) (refconv plugin API {API_VERSION}, "
                      f"see docs/plugins.md)", DeprecationWarning, stacklevel=2)
    problem.set_output(out)
    return variant.run(problem, **params)


class MissingTarget(str):
    """An ``available()`` reason (a ``str``) saying that the target the user *explicitly* asked
    for (an option or environment variable such as a GPU target) is not here, or cannot be used in
    this process.  A plain reason means "cannot run here" and the variants are skipped as
    unavailable; this one is a usage / environment error: ``refconv check`` prints it on stderr
    and exits 2 before checking anything, and the pytest plugin fails the items instead of
    skipping them.  The core knows no backend: a backend returns ``MissingTarget(reason)`` from
    its ``available()`` (or a variant's) when the choice came from the user."""

    __slots__ = ()


@dataclass(frozen=True)
class BackendOption:
    """A command-line / environment option a backend adds to ``refconv check`` (and to the pytest
    plugin as ``--refconv-<flag>``), e.g. the device a backend targets.  ``choices=None`` with
    ``is_flag=True`` makes it an on/off switch: ``--flag`` gives ``True``, ``--no-flag``
    (``--refconv-no-flag``) and a false environment value (``0``, ``false``, ``no``, ``off``, any
    case) give ``False``, a true one (``1``, ``true``, ``yes``, ``on``) ``True``, any other a usage
    error; when neither is given the value is ``default`` (``None``: ``False``),
    which may be a third value such as ``"auto"`` for "not given: the backend decides"."""

    flag: str               # e.g. "--target"
    dest: str               # e.g. "target"
    help: str
    env: str | None = None  # e.g. "REFCONV_TARGET"
    choices: tuple | None = None
    default: Any = None
    is_flag: bool = False


@dataclass(frozen=True)
class Target:
    """Where a backend's variants run now, for ``refconv list`` and the profiles.

    ``simulated``: the kernels run on a simulator or an instrumented interpreter, where
    seed-scale problems would take days; the ``gpu`` profile refuses
    such targets.  ``limits``: the device limits the variants' ``constraint`` functions use
    (``max_threads_per_block``, ``max_shared_bytes``, ``max_const_bytes``, ``max_grid`` (x, y, z),
    ``mem_bytes``, ...), as the device (or the simulator) reports them."""

    name: str
    simulated: bool = False
    limits: Mapping[str, Any] = field(default_factory=dict)


def _runs_anywhere():
    return None


def _no_configure(options):
    return None


def _no_description():
    return ""


#: the defaults of the ``Backend`` fields that hold a callable (identity: a kit completes a field
#: only where the backend left it at one of these)
_DEFAULTS = {"available": (_runs_anywhere,), "configure": (_no_configure,), "describe": (_no_description,),
             "preflight": (None,), "target": (None,), "bench": (None,)}

#: the attribute a kit's hook functions carry: a zero-argument callable returning the kit's
#: ``backend_fields()`` (see :class:`Backend`)
KIT_FIELDS_ATTR = "refconv_kit_fields"


@dataclass
class Backend:
    """A named bundle of variants.  ``variants()`` is called lazily (importing a GPU toolchain can
    be slow); ``configure(options)`` receives the values of this backend's ``options`` before a
    run; ``preflight(variants, options)`` may run a per-variant step before checking (e.g. a
    compile check) and returns ``{variant_id: [finding dicts]}``; ``describe()`` returns a short
    line about where it runs (e.g. "simulator" or the GPU name) for ``refconv list``.
    ``available()`` returns ``None`` or a reason the whole backend cannot run here.
    ``target()`` (optional) returns the :class:`Target` it runs on now (after ``configure``).
    ``bench`` (optional, a :class:`refconv.timing.BenchHooks`) gives ``refconv bench`` a device
    copy for the bandwidth roofline and says when the device is simulated.

    What the engine needs to know about a backend's toolchain, so that it names none itself:
    ``env_prefixes``, the prefixes of the environment variables its worker processes must inherit
    from the parent (besides ``REFCONV_``, always inherited; e.g. a toolchain's own settings);
    ``versions``, the importable modules whose ``__version__`` ``refconv bench`` records;
    ``real_target``, how a user selects a real (not simulated) target for it (e.g. an option and
    its value), quoted where a profile refuses a simulator or the bench has no kernel time.  The
    defaults (nothing) keep plugins written before these fields working.

    A kernel kit's options belong to the kit (the public ``refconv.<language>`` modules,
    docs/plugins.md): a backend built on one passes ``**kit.backend_fields()`` and so owns them as
    the built-in backend does.  A backend that passes only some of a kit's hooks (its
    ``available`` and ``preflight`` functions, say, as plugins were once told to) is completed
    here: the kit's options are added to its own (by ``dest``) and every other field it left at
    its default takes the kit's value (:data:`KIT_FIELDS_ATTR`)."""

    name: str
    variants: Callable[[], Sequence[Variant]]
    available: Callable[[], str | None] = _runs_anywhere
    options: Sequence[BackendOption] = ()
    configure: Callable[[Mapping[str, Any]], None] = _no_configure
    preflight: Callable[..., Mapping[str, list]] | None = None
    describe: Callable[[], str] = _no_description
    target: Callable[[], Target] | None = None
    bench: Any = None
    env_prefixes: Sequence[str] = ()
    versions: Sequence[str] = ()
    real_target: str = ""

    def __post_init__(self):
        self.options = tuple(self.options)
        for hook in (self.available, self.preflight, self.configure, self.describe, self.target):
            fields_of = getattr(hook, KIT_FIELDS_ATTR, None)
            if callable(fields_of):
                self._complete_from(fields_of())

    def _complete_from(self, kit: Mapping[str, Any]) -> None:
        """Add a kit's options to this backend's own and take the kit's value for every field left
        at its default (see the class docstring)."""
        own = {o.dest for o in self.options}
        self.options = self.options + tuple(o for o in kit.get("options", ()) if o.dest not in own)
        for name, value in kit.items():
            if name != "options" and getattr(self, name) in _DEFAULTS.get(name, ((), "", None)):
                setattr(self, name, value)
