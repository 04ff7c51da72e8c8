"""pytest plugin (``pytest11`` entry point ``refconv``): the conformance run of ``refconv check``
from pytest, one test item per variant.

    pytest --refconv --refconv-backend mybackend [--refconv-profile ci] [-n auto]
    pytest refconv --refconv-backend mybackend            # only the refconv items
    pytest refconv::matvec/mybackend/rows                 # one variant (a node id pytest printed)

The items are collected like any pytest test: the collector ``refconv`` (node id ``refconv``)
is a child of the session, and each variant is an item ``refconv::op/backend/name`` in it, so the
collected count, ``--collect-only``, ``-k``, ``-m refconv``, ``--deselect``, ``--lf``/``--ff`` and
pytest-xdist (every worker collects the same items) behave as for the user's own tests.  An
argument ``refconv::<id>`` (unless a file named ``refconv`` exists) selects one item, and
``refconv`` (unless a file or folder of that name exists) the whole collector; either turns the
plugin on, so a node id pytest printed can be passed back to it (:func:`_node_arg`).

Every item runs the same Hypothesis check as the CLI (:func:`refconv.runner.check_variant`);
failures show the minimised case and the reproducer path; the Hypothesis statistics of each
variant are printed in the terminal summary (and attached as the report section "refconv
statistics" and the user property ``refconv_statistics``).  Backend options appear as
``--refconv-<flag>`` (e.g. ``--refconv-target sim`` for a backend's ``--target sim``).

Option values that are not accepted (``--refconv-examples 0``, an unknown profile, a selection
that matches no installed backend or variant, a node id of no selected variant, a bad
``REFCONV_*`` environment value) are a ``pytest.UsageError`` (exit 4) raised before anything runs.

Nothing is written into the user's project except under pytest's own cache directory
(``.pytest_cache/d/refconv``: the Hypothesis example database, the reproducers, Hypothesis's
caches), or, with ``-p no:cacheprovider``, under pytest's temporary directory with no example
database; ``--refconv-database`` and ``--refconv-failures-dir`` put them elsewhere.

Selection, backend options and profile go through the same :class:`refconv.session.Session` as
``refconv check`` (:func:`session_of`).
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: the name (and node id) of the collector that holds the items; ``refconv::<variant id>`` are theirs
COLLECTOR = "refconv"


def _bopts():
    from .session import backend_options
    try:
        return backend_options()
    except Exception:  # pragma: no cover - a broken plugin must not break pytest start-up
        return []


def pytest_addoption(parser):
    g = parser.getgroup("refconv", "refconv conformance checks")
    g.addoption("--refconv", action="store_true",
                help="collect one conformance test per refconv variant (node ids refconv::op/backend/name)")
    g.addoption("--refconv-op", help="op name or glob")
    g.addoption("--refconv-backend", help="backend name or glob")
    g.addoption("--refconv-variant", help="variant name glob (or full-id glob)")
    g.addoption("--refconv-profile", default=None,
                help="ci | dev | thorough | gpu (default: env REFCONV_PROFILE, else ci)")
    g.addoption("--refconv-examples", default=None, help="examples per variant (an integer >= 1)")
    g.addoption("--refconv-seed", default=None, help="Hypothesis seed (an integer)")
    g.addoption("--refconv-database", default=None,
                help="Hypothesis example database (dir, redis://, none); default: env REFCONV_DATABASE, else "
                     "pytest's cache (.pytest_cache/d/refconv/examples; none with -p no:cacheprovider)")
    g.addoption("--refconv-failures-dir", default=None,
                help="where reproducers of failures are saved; default: pytest's cache "
                     "(.pytest_cache/d/refconv/failures), else pytest's temporary directory")
    from .session import TOLERANCE_HELP, TOLERANCES
    g.addoption("--refconv-tolerance", choices=TOLERANCES, default=None, help=TOLERANCE_HELP)
    for bname, o in _bopts():
        flag = "--refconv-" + o.flag.lstrip("-")
        if o.is_flag:
            g.addoption(flag, dest=o.dest, action="store_true", default=None, help=f"[{bname}] {o.help}")
            g.addoption("--refconv-no-" + o.flag.lstrip("-"), dest=o.dest, action="store_false", default=None,
                        help=f"[{bname}] turn {flag} off")
        else:
            g.addoption(flag, dest=o.dest, choices=o.choices, default=None, help=f"[{bname}] {o.help}")


# ----------------------------------------------------------------------------- option values

def _integer(config, opt: str, lo: int | None = None) -> int | None:
    """The value of integer option ``opt`` (None when not given); ``pytest.UsageError`` naming the
    option and what it accepts otherwise."""
    raw = config.getoption(opt)
    if raw is None:
        return None
    accepted = "an integer" + (f" >= {lo}" if lo is not None else "")
    try:
        v = int(raw)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"{opt} {raw!r} not accepted; accepted: {accepted}") from None
    if lo is not None and v < lo:
        raise pytest.UsageError(f"{opt} {raw!r} not accepted; accepted: {accepted}")
    return v


def session_of(config):
    """The :class:`refconv.session.Session` of pytest's ``--refconv-*`` options (``pytest.UsageError``
    for an ``--refconv-examples`` that is not an integer >= 1)."""
    from .session import Session
    return Session(op=config.getoption("--refconv-op"), backend=config.getoption("--refconv-backend"),
                   variant=config.getoption("--refconv-variant"),
                   options={o.dest: config.getoption(o.dest, default=None) for _, o in _bopts()},
                   profile_name=config.getoption("--refconv-profile"),
                   examples=_integer(config, "--refconv-examples", 1),
                   tolerance=config.getoption("--refconv-tolerance"))


def _check_profile(config, session):
    """The profile, or ``pytest.UsageError`` naming ``--refconv-profile`` / ``REFCONV_PROFILE``."""
    from .profiles import PROFILES
    name = session.profile_name
    source = f"--refconv-profile {name!r}"
    if name is None:
        name = os.environ.get("REFCONV_PROFILE") or None
        source = f"environment REFCONV_PROFILE={name!r}"
    if name is not None and name not in PROFILES:
        raise pytest.UsageError(f"{source} not accepted; accepted: {', '.join(PROFILES)}")
    try:
        return session.profile()
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None


def _check_tolerance_env():
    from .session import TOLERANCES
    raw = os.environ.get("REFCONV_TOLERANCE")
    if raw and raw not in TOLERANCES:
        raise pytest.UsageError(f"environment REFCONV_TOLERANCE={raw!r} not accepted; "
                                f"accepted: {', '.join(TOLERANCES)}")


def _node_arg(arg: str, invocation_dir: Path) -> str | None:
    """What a command-line argument names in the refconv collector: ``""`` for ``refconv`` (all
    its items), the item name for ``refconv::<name>``, ``None`` for anything else (a path: a file
    named ``refconv`` in the invocation directory, or ``refconv`` when it exists there, stays one)."""
    head, sep, rest = arg.partition("::")
    if head != COLLECTOR:
        return None
    path = invocation_dir / head
    if path.is_file() or (not sep and path.exists()):
        return None
    return rest


def _node_args(config) -> list[str]:
    return [a for a in config.args if _node_arg(a, config.invocation_params.dir) is not None]


def _enabled(config) -> bool:
    """``--refconv`` was given, or an argument names the refconv collector or one of its items."""
    return bool(config.getoption("--refconv") or _node_args(config))


# ----------------------------------------------------------------------------- the run's state

@dataclass
class _State:
    """What the plugin keeps for one pytest run (``config.stash[STATE]``)."""

    session: object                       # refconv.session.Session
    profile: object                       # refconv.profiles.Profile
    bopts: dict                           # backend option values (configured)
    seed: int | None
    variants: list                        # the selected variants
    broken: dict                          # {backend name: why} of the selected backends that cannot load
    names: set | None                     # item names the arguments select (None: all)
    database: str | None                  # --refconv-database as given (None: see database_spec)
    failures_dir: str | None              # --refconv-failures-dir as given (None: see failures)
    stats: list = field(default_factory=list)
    home_dir: Path | None = None

    def home(self, config) -> Path:
        """The folder for what the run keeps (reproducers, Hypothesis's caches, the example
        database): pytest's cache ``d/refconv``, else a ``refconv`` folder in pytest's temporary
        directory (created on first use)."""
        if self.home_dir is None:
            if getattr(config, "cache", None) is not None:
                self.home_dir = Path(config.cache.mkdir("refconv"))
            else:
                factory = getattr(config, "_tmp_path_factory", None)   # pytest's tmp_path_factory
                base = (factory.getbasetemp() if factory is not None
                        else Path(tempfile.mkdtemp(prefix="pytest-refconv-")))
                self.home_dir = base / "refconv"
                self.home_dir.mkdir(parents=True, exist_ok=True)
        return self.home_dir

    def database_spec(self, config) -> str:
        """The example database: ``--refconv-database``, else env ``REFCONV_DATABASE``, else
        ``d/refconv/examples`` in pytest's cache, else ``none`` (no cache: nothing to keep it in).
        A directory database is created here, so that it is where the next run looks even when
        this run saved nothing in it (a failure found by a directed case is found again anyway)."""
        if self.database:
            spec = self.database
        elif os.environ.get("REFCONV_DATABASE"):
            spec = os.environ["REFCONV_DATABASE"]
        elif getattr(config, "cache", None) is not None:
            spec = str(self.home(config) / "examples")
        else:
            return "none"
        if spec != "none" and "://" not in spec:
            os.makedirs(spec, exist_ok=True)
        return spec

    def failures(self, config) -> str:
        return self.failures_dir or str(self.home(config) / "failures")


STATE = pytest.StashKey[_State]()


def _selection_error(session) -> str:
    return session.no_match(prefix="--refconv-")


def pytest_configure(config):
    config.addinivalue_line("markers", "refconv: a refconv variant conformance test")
    session = session_of(config)   # UsageError for a bad --refconv-examples, with or without --refconv
    session.apply_tolerance()      # the process's float verdict (refconv.tolerance.set_mode; the user's tests too)
    seed = _integer(config, "--refconv-seed")
    if not _enabled(config):
        return
    from .session import UsageError
    profile = _check_profile(config, session)
    _check_tolerance_env()
    database = config.getoption("--refconv-database")
    spec = database or os.environ.get("REFCONV_DATABASE")
    if spec:   # one the items could not open (redis:// without the extra ...)
        from .profiles import database as open_database
        source = f"--refconv-database {database!r}" if database else f"environment REFCONV_DATABASE={spec!r}"
        try:
            open_database(spec)
        except ValueError as e:
            raise pytest.UsageError(f"{source} not accepted: {e}") from None
    failures_dir = config.getoption("--refconv-failures-dir")
    if failures_dir:
        from .report import check_output_dir
        try:
            check_output_dir("--refconv-failures-dir", failures_dir)
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None
    try:
        bopts = session.configure()
    except UsageError as e:
        raise pytest.UsageError(str(e)) from None
    variants, broken = session.selected(), session.broken()
    if not variants and not broken:
        raise pytest.UsageError(_selection_error(session))
    names = None
    asked = [_node_arg(a, config.invocation_params.dir) for a in _node_args(config)]
    if asked and "" not in asked:
        known = {v.id for v in variants} | {f"*/{b}/*" for b in broken}
        missing = [n for n in asked if n not in known]
        if missing:
            from .errors import QUOTE_LIMIT, quoted
            shown = missing[0] if len(missing[0]) <= QUOTE_LIMIT else quoted(missing[0])
            raise pytest.UsageError(
                f"not found: {COLLECTOR}::{shown} (no variant selected by the --refconv-* options has "
                f"this id; `pytest --refconv --collect-only -q` lists the node ids)")
        names = set(asked)
    st = config.stash[STATE] = _State(session=session, profile=profile, bopts=bopts, seed=seed, variants=variants,
                                      broken=broken, names=names, database=database, failures_dir=failures_dir)
    config.pluginmanager.register(_StatisticsReporter(st), "refconv-statistics")


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    """The ``refconv`` / ``refconv::<id>`` arguments are not paths: take them out of the arguments
    pytest resolves as paths (the collector is added by :func:`pytest_make_collect_report`)."""
    config = session.config
    if STATE in config.stash:
        names = set(_node_args(config))
        config.args[:] = [a for a in config.args if a not in names]


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """Add the ``refconv`` collector to the session's collected nodes."""
    rep = yield
    if isinstance(collector, pytest.Session) and STATE in collector.config.stash and rep.passed:
        rep.result.append(RefconvCollector.from_parent(collector, name=COLLECTOR, nodeid=COLLECTOR))
    return rep


# ----------------------------------------------------------------------------- nodes

class RefconvCollector(pytest.Collector):
    """The collector ``refconv``: one :class:`RefconvItem` per selected variant, then one
    :class:`RefconvBrokenBackendItem` per selected backend that cannot give variants (those the
    ``refconv::<id>`` arguments name, when there are such arguments)."""

    def collect(self):
        st = self.config.stash[STATE]
        for v in st.variants:
            if st.names is None or v.id in st.names:
                yield RefconvItem.from_parent(self, name=v.id, variant_id=v.id)
        for name, why in st.broken.items():
            item = f"*/{name}/*"
            if st.names is None or item in st.names:
                yield RefconvBrokenBackendItem.from_parent(self, name=item, backend=name, why=why,
                                                          explicit=bool(st.session.backend))


@contextlib.contextmanager
def _hypothesis_home(path: Path):
    """Hypothesis writes caches under ``./.hypothesis`` unless told otherwise: while a refconv item
    runs, its home is ``path`` (unless the user set ``HYPOTHESIS_STORAGE_DIRECTORY``); the user's
    own Hypothesis tests keep theirs."""
    from hypothesis import configuration as hc
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") or not hasattr(hc, "set_hypothesis_home_dir"):
        yield
        return
    before = vars(hc).get("__hypothesis_home_directory")   # None: not resolved yet (it is lazily)
    hc.set_hypothesis_home_dir(path)
    try:
        yield
    finally:
        hc.set_hypothesis_home_dir(before)


class RefconvItem(pytest.Item):
    """One variant's conformance check (:func:`refconv.runner.check_variant`); skipped with the
    reason when the variant cannot run here."""

    def __init__(self, *, variant_id, **kw):
        super().__init__(**kw)
        self.variant_id = variant_id
        self.add_marker("refconv")

    def runtest(self):
        from . import preflight, registry
        from .runner import VariantResult, check_variant
        from .variant import MissingTarget
        cfg = self.config
        st = cfg.stash[STATE]
        v = registry.get(self.variant_id)
        found = preflight.run([v], st.bopts).get(v.id, [])  # e.g. --refconv-compile
        why = st.session.availability(v) or registry.simulated_reason(v, st.profile)
        if why:
            r = VariantResult(v.id, "unavailable", reason=why)
            preflight.apply(r, found)
            if r.status == "fail":
                raise RefconvFailure(r)
            if isinstance(why, MissingTarget):   # the user's explicit choice cannot be honoured
                raise pytest.fail.Exception(f"{v.id}: requested target missing: {why}", pytrace=False)
            pytest.skip(f"{v.id} unavailable: {r.reason}")
        home = st.home(cfg)
        with _hypothesis_home(home / "hypothesis"):
            r = check_variant(v, st.profile, seed=st.seed, db=st.database_spec(cfg),
                              failures_dir=st.failures(cfg), backend_options=st.bopts)
        preflight.apply(r, found)
        if r.database_error and r.status == "pass":   # on a failure, its report says it
            self.warn(pytest.PytestWarning(f"{v.id}: {r.database_error}"))
        self.add_report_section("call", "refconv statistics", f"{v.id}: {r.statistics}")
        self.user_properties.append(("refconv_statistics", f"{v.id}: {r.statistics}"))
        if r.status != "pass":
            raise RefconvFailure(r)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, RefconvFailure):
            r = excinfo.value.result
            f = r.failure or {}
            lines = [f"{r.variant}: {r.status}: {r.reason}"]
            if f.get("descriptor"):
                from .case import Case
                lines.append(f"minimised case: {Case.join(f['descriptor'], f.get('params'))}")
            for fd in (r.findings or [])[:10]:
                lines.append(f"finding: {fd}")
            if r.reproducer:
                lines.append(f"replay: refconv repro {r.reproducer}")
            elif getattr(r, "reproducer_error", None):
                lines.append(f"reproducer not saved: {r.reproducer_error}")
            if getattr(r, "database_error", ""):
                lines.append(r.database_error)
            if r.statistics:
                lines.append(r.statistics)
            return "\n".join(lines)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"refconv {self.variant_id}"


class RefconvFailure(Exception):
    def __init__(self, result):
        super().__init__(result.reason)
        self.result = result


class RefconvBrokenBackendItem(pytest.Item):
    """Stands for a backend that cannot give variants (its import failed or its ``variants()``
    raised): skipped with the error, or failed when ``--refconv-backend`` selected it (the same
    rule as ``refconv check``'s exit status)."""

    def __init__(self, *, backend, why, explicit, **kw):
        super().__init__(**kw)
        self.backend, self.why, self.explicit = backend, why, explicit
        self.add_marker("refconv")

    def runtest(self):
        msg = f"backend {self.backend} unavailable: {self.why}"
        if self.explicit:
            raise pytest.fail.Exception(msg, pytrace=False)
        pytest.skip(msg)

    def reportinfo(self):
        return self.path, None, f"refconv backend {self.backend}"


# ----------------------------------------------------------------------------- statistics

class _StatisticsReporter:
    """Registered (as ``refconv-statistics``) when the plugin is on: keeps each variant's
    statistics line from its report (so that pytest-xdist's workers' lines reach the controller
    too) and prints them in the terminal summary."""

    def __init__(self, state: _State):
        self.state = state

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            self.state.stats.extend(v for k, v in getattr(report, "user_properties", ()) if k == "refconv_statistics")

    def pytest_terminal_summary(self, terminalreporter):
        if self.state.stats:
            terminalreporter.section("refconv Hypothesis statistics")
            for line in self.state.stats:
                terminalreporter.write_line(line)
