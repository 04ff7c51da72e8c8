"""One run's selection and configuration: :class:`Session`.

``refconv check``/``list``/``bench``/``repro`` (:mod:`refconv.cli`, :mod:`refconv.bench`) and the
pytest plugin (:mod:`refconv.pytest_plugin`) build a ``Session`` from their own options and ask it
the same questions:

* which backend options exist (:func:`backend_options`: the :class:`refconv.variant.BackendOption`
  of every installed backend, e.g. a ``--target NAME`` choice, a kernel kit's options declared
  once per ``dest`` by every backend built on that kit; the core names none) and their values
  (:meth:`Session.option_values`: the command line, else the environment variable, else the
  value recorded in a reproducer, else the default);
* configuring the backends with them (:meth:`Session.configure`: the target each backend runs
  on; workers do the same with :func:`configure_backends`);
* the selected variants (:meth:`Session.variants`: ``--op``/``--backend``/``--variant`` globs),
  the backends that failed to load (:meth:`Session.broken`), why a variant cannot run here
  (:meth:`Session.availability`) and what makes a run a usage error before it starts
  (:meth:`Session.blocking_problems`);
* the Hypothesis profile (:meth:`Session.profile`) and the float verdict (``tolerance``).
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from typing import Mapping

from . import registry
from .errors import UsageError  # noqa: F401  (re-exported: refconv.session.UsageError)
from .variant import Backend, BackendOption, MissingTarget, Variant

TOLERANCE_HELP = ("float verdict: 'proven' (default; worst-case gamma_n bound, never a false alarm) or "
                  "'probabilistic' (Higham & Mary 2019: lambda*sqrt(n)*u, tighter on large n; a correct "
                  "result is rejected with probability <= 1e-9 per element when rounding errors behave as "
                  "independent mean-zero variables, more on adversarial data). Env REFCONV_TOLERANCE")
TOLERANCES = ("proven", "probabilistic")


def env_tolerance() -> str | None:
    """The float verdict ``REFCONV_TOLERANCE`` asks for (``None`` when unset or empty);
    ``UsageError`` naming the variable when its value is not one of :data:`TOLERANCES`."""
    raw = os.environ.get("REFCONV_TOLERANCE")
    if not raw:
        return None
    if raw not in TOLERANCES:
        raise UsageError(f"environment REFCONV_TOLERANCE={raw!r} not accepted; accepted: {', '.join(TOLERANCES)}")
    return raw


def backend_options() -> list[tuple[str, BackendOption]]:
    """``(backend names, option)`` for every option an installed backend declares, the first
    declaration of each ``dest`` winning; the names are those of every backend declaring it,
    comma-separated (a kernel kit's option: the built-in backend and the plugins on that kit)."""
    seen: dict[str, BackendOption] = {}
    names: dict[str, list[str]] = {}
    for name, b in registry.backends().items():
        if isinstance(b, Backend):
            for o in b.options:
                seen.setdefault(o.dest, o)
                names.setdefault(o.dest, []).append(name)
    return [(", ".join(names[dest]), o) for dest, o in seen.items()]


#: the values a flag option's environment variable accepts (any case), on and off
FLAG_ON, FLAG_OFF = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _from_env(o: BackendOption):
    raw = os.environ.get(o.env) if o.env else None
    if raw in (None, ""):
        return None
    if o.is_flag:
        if isinstance(o.default, str) and raw.lower() == o.default.lower():
            return o.default
        if raw.lower() in FLAG_ON + FLAG_OFF:
            return raw.lower() in FLAG_ON
        accepted = FLAG_ON + FLAG_OFF + ((o.default,) if isinstance(o.default, str) else ())
        raise UsageError(f"environment {o.env}={raw!r} not accepted; accepted: {', '.join(accepted)}")
    if o.choices and raw not in o.choices:
        raise UsageError(f"environment {o.env}={raw!r} not accepted; accepted: {', '.join(map(str, o.choices))}")
    return raw


def flag_default(o: BackendOption):
    """The value of a flag option given neither on the command line nor in the environment:
    ``True``/``False`` (``None`` counts as ``False``), or a declared third value such as
    ``"auto"`` -- "not given: the backend decides"."""
    return o.default if isinstance(o.default, str) else bool(o.default)


def negated_flag(o: BackendOption) -> str:
    """The ``--no-`` form of a flag option (``--check`` -> ``--no-check``)."""
    return "--no-" + o.flag.lstrip("-")


def configure_backends(values: Mapping) -> None:
    """Give every backend its options' values (missing ones: the option's default).  Called in
    the process that runs variants: the parent, each worker, a replay worker."""
    for _, b in registry.backends().items():
        if isinstance(b, Backend):
            b.configure({o.dest: values.get(o.dest, o.default) for o in b.options})


def option_flags(values: Mapping) -> str:
    """The command-line form of option values that differ from the defaults, e.g.
    ``--target sim --check`` (for messages: how to run again with the same options)."""
    words = []
    for _, o in backend_options():
        if o.dest not in values:
            continue
        v = values[o.dest]
        default = flag_default(o) if o.is_flag else o.default
        if v is None or v == default:
            continue
        if o.is_flag:
            words.append(o.flag if v is True else negated_flag(o) if v is False else f"{o.flag}={v}")
        else:
            words.append(f"{o.flag} {v}")
    return " ".join(words)


@dataclass
class Session:
    """The selection and configuration of one run (see the module docstring).

    ``options``: backend option values given explicitly (``dest -> value``; ``None`` or absent:
    not given); ``recorded``: values recorded by the run that saved a reproducer, used for the
    options given neither explicitly nor in the environment."""

    op: str | None = None
    backend: str | None = None
    variant: str | list | None = None     # a glob, or a list of globs (``--variant`` given more than once)
    options: Mapping = field(default_factory=dict)
    recorded: Mapping = field(default_factory=dict)
    profile_name: str | None = None
    examples: int | None = None
    timeout: float | None = None
    tolerance: str | None = None

    # ------------------------------------------------------------------ backend options

    def option_values(self) -> dict:
        """Value of each backend option: explicit, else its environment variable, else the
        recorded one, else the default (``UsageError`` for an environment value not accepted)."""
        vals = {}
        for _, o in backend_options():
            v = self.options.get(o.dest)
            if v is None:
                v = _from_env(o)
            if v is None:
                v = self.recorded.get(o.dest)
            if v is None:
                v = flag_default(o) if o.is_flag else o.default
            vals[o.dest] = v
        return vals

    def configure(self) -> dict:
        """Configure every backend (the targets they run on) with :meth:`option_values`; returns
        the values (they travel to the workers and into the reports)."""
        vals = self.option_values()
        configure_backends(vals)
        return vals

    def apply_tolerance(self) -> None:
        """Make ``tolerance`` the float verdict of this process (:func:`refconv.tolerance.set_mode`);
        no change when it is ``None``.  Worker processes get it explicitly (their job or arguments),
        not through the environment."""
        if self.tolerance:
            from .tolerance import set_mode
            set_mode(self.tolerance)

    def profile(self):
        """The Hypothesis profile: ``profile_name`` (default: env ``REFCONV_PROFILE``, else ci),
        with ``examples``/``timeout`` overriding it; ``UsageError`` naming what is not accepted."""
        from .profiles import get_profile
        name = self.profile_name or os.environ.get("REFCONV_PROFILE") or "ci"
        try:
            return get_profile(name, self.examples, self.timeout)
        except ValueError as e:   # a user's name or override (REFCONV_PROFILE=bogus ...)
            source = "" if self.profile_name or not os.environ.get("REFCONV_PROFILE") else "environment REFCONV_PROFILE: "
            raise UsageError(f"{source}{e}") from None

    # ------------------------------------------------------------------ selection

    def selected(self, backend: str | None = None) -> list[Variant]:
        """The variants the filters select (``backend``: one backend's only); may be empty."""
        return registry.variants(op=self.op, backend=self.backend if backend is None else backend, name=self.variant)

    def variants(self) -> list[Variant]:
        """The selected variants; ``UsageError`` when nothing matches the filters and no backend
        that failed to load could account for it."""
        vs = self.selected()
        if not vs and not self.broken():
            raise UsageError(self.no_match())
        return vs

    def no_match(self, prefix: str = "--") -> str:
        """Why the filters select nothing, naming the filter (``prefix``: ``--`` for the CLI,
        ``--refconv-`` for pytest) and what is installed; a long glob is cut (:func:`quoted`)."""
        from .errors import quoted
        backends = ", ".join(sorted(registry.backends())) or "none"
        if self.backend and not self.backends():
            return f"{prefix}backend {quoted(self.backend)} matches no installed backend; installed backends: {backends}"
        if self.op:
            from . import ops
            known = sorted(set(ops.names()) | {v.op for v in registry.variants(backend=self.backend)})
            if not any(fnmatch.fnmatchcase(o, self.op) for o in known):
                return f"{prefix}op {quoted(self.op)} matches no op; installed ops: {', '.join(known) or 'none'}"
        globs = [self.variant] if isinstance(self.variant, str) else list(self.variant or [])
        given = " ".join([f"{prefix}{k} {quoted(v)}" for k, v in (("op", self.op), ("backend", self.backend)) if v]
                         + [f"{prefix}variant {quoted(g)}" for g in globs])
        return (f"no variant matches {given or 'the selection'}; installed backends: {backends} "
                f"(refconv list shows their variants)")

    def unused_options(self, variants) -> list[str]:
        """One line for every backend option given explicitly (``options``) while none of the
        ``variants`` belongs to a backend that declares it: the option has no effect in this run (a
        warning, not an error: a CI script may pass the same options to every job).  A kernel kit's
        options are declared by every backend built on the kit (``backend_fields()``), so any one
        of those backends selected, a plugin's alone included, uses them."""
        selected = {v.backend for v in variants}
        given = {dest for dest, val in self.options.items() if val is not None and val is not False}
        owners: dict[str, list[str]] = {}    # a kit's option is declared by every backend built on the kit
        for name, b in registry.backends().items():
            if isinstance(b, Backend):
                for o in b.options:
                    owners.setdefault(o.dest, []).append(name)
        out = []
        for _, o in backend_options():
            names = owners.get(o.dest, [])
            if o.dest in given and not selected & set(names):
                which = " or ".join(names)
                out.append(f"{o.flag} is an option of backend {which}, and no {which} variant is selected: "
                           f"it has no effect in this run")
        return out

    def backends(self) -> dict:
        """The installed backends ``--backend`` selects (name -> backend), in registry order."""
        return {name: b for name, b in registry.backends().items()
                if not self.backend or fnmatch.fnmatchcase(name, self.backend)}

    def broken(self) -> dict[str, str]:
        """The selected backends that cannot give variants: ``{name: why}``: those ``--backend``
        matches, and when ``--variant`` globs are given, only those whose variants one of the globs
        could select (:func:`could_select`), so ``--variant op/other/name`` shows no broken plugin."""
        globs = [self.variant] if isinstance(self.variant, str) else list(self.variant or [])
        return {name: why for name, why in registry.broken(self.backend).items()
                if not globs or any(could_select(g, name) for g in globs)}

    @staticmethod
    def availability(v: Variant) -> str | None:
        """Why ``v`` cannot run here (its backend's reason first), or ``None``."""
        try:
            return registry.backend_reason(v.backend) or v.available()
        except Exception as e:  # availability probing must never crash the listing
            return f"availability check failed: {type(e).__name__}: {e}"

    def blocking_problems(self, variants) -> list[str]:
        """What makes a ``check`` a usage / environment error before anything runs (exit 2):

        * a target the user explicitly asked for is missing (an availability reason that is a
          :class:`refconv.variant.MissingTarget`: a GPU asked for where there is none ...);
        * a backend named by ``--backend`` (a name or a glob that matches it) that failed to load
          or whose ``variants()`` raised.  Without ``--backend`` such a backend is shown as
          unavailable and does not change the exit status."""
        out = []
        seen = set()
        for v in variants:
            why = self.availability(v)
            if isinstance(why, MissingTarget) and (v.backend, str(why)) not in seen:
                seen.add((v.backend, str(why)))
                out.append(f"{v.backend}: requested target missing: {why}")
        if self.backend:
            for name, why in self.broken().items():
                out.append(f"backend {name} selected by --backend {self.backend!r} cannot be used: {why}")
        return out


def could_select(glob: str, backend: str) -> bool:
    """Whether the ``--variant`` glob ``glob`` could select a variant of ``backend``, whose variants
    are unknown (it failed to load).  A glob without ``/`` matches variant names: any backend's.  A
    glob of a full id, ``op/backend/name`` (three parts: each ``/`` of the glob must meet one of the
    id's two), could only where its middle part matches ``backend``; more parts match no id; two
    parts (``*/CM_*``) might match any backend's."""
    parts = glob.split("/")
    if len(parts) == 3:
        return fnmatch.fnmatchcase(backend, parts[1])
    return len(parts) < 3


# ----------------------------------------------------------------------------- after a check run

def worker_count(requested: int, n_jobs: int) -> int:
    """Worker processes for ``n_jobs`` variants: ``--jobs`` (0: the number of CPUs), never more
    than the variants to check (each worker is a process that imports every backend), at least 1."""
    return max(1, min(requested or os.cpu_count() or 1, n_jobs))


def nothing_checked(ordered, pre) -> str | None:
    """The reason when no selected variant was checked at all (all unavailable, no preflight)."""
    if any(r.status not in ("unavailable", "skipped") for r in ordered) or any(pre.values()):
        return None
    if not ordered:
        return "nothing was checked: no variant of a usable backend matches the filters"
    reasons = sorted({r.reason for r in ordered})
    return (f"nothing was checked: all {len(ordered)} selected variant(s) are unavailable here; "
            + "; ".join(reasons[:3]) + (f" (+{len(reasons) - 3} more reasons)" if len(reasons) > 3 else ""))
