"""pytest plugin (``pytest11`` entry point ``refconv``): the conformance run of ``refconv check``
from pytest, one test per variant, id ``op/backend/name``.

    pytest --refconv --refconv-backend mybackend [--refconv-profile ci] [-n auto]

Every variant becomes a test ``refconv::op/backend/name`` that runs the same Hypothesis check as
the CLI; failures show the minimised case and the reproducer path; the Hypothesis statistics of
each variant are printed in the terminal summary (and attached as the report section
"refconv statistics").  Backend options appear as ``--refconv-<flag>`` (e.g.
``--refconv-opencl oclgrind``).  Works with pytest-xdist: tests are independent.

Selection, backend options and profile go through the same :class:`refconv.session.Session` as
``refconv check`` (:func:`session_of`).
"""
from __future__ import annotations

import pytest


def _bopts():
    from .session import backend_options
    try:
        return backend_options()
    except Exception:  # pragma: no cover - a broken plugin must not break pytest start-up
        return []


def pytest_addoption(parser):
    g = parser.getgroup("refconv", "refconv conformance checks")
    g.addoption("--refconv", action="store_true", help="collect one conformance test per refconv variant")
    g.addoption("--refconv-op", help="op name or glob")
    g.addoption("--refconv-backend", help="backend name or glob")
    g.addoption("--refconv-variant", help="variant name glob (or full-id glob)")
    g.addoption("--refconv-profile", default=None, help="ci | dev | thorough | gpu (default ci)")
    g.addoption("--refconv-examples", type=int, default=None, help="examples per variant")
    g.addoption("--refconv-seed", type=int, default=None, help="Hypothesis seed")
    g.addoption("--refconv-database", default=None, help="Hypothesis example database (dir, redis://, none)")
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


def session_of(config):
    """The :class:`refconv.session.Session` of pytest's ``--refconv-*`` options."""
    from .session import Session
    return Session(op=config.getoption("--refconv-op"), backend=config.getoption("--refconv-backend"),
                   variant=config.getoption("--refconv-variant"),
                   options={o.dest: config.getoption(o.dest, default=None) for _, o in _bopts()},
                   profile_name=config.getoption("--refconv-profile"),
                   examples=config.getoption("--refconv-examples"),
                   tolerance=config.getoption("--refconv-tolerance"))


def pytest_configure(config):
    config.addinivalue_line("markers", "refconv: a refconv variant conformance test")
    config._refconv_stats = []
    config._refconv_bopts = {}
    session = config._refconv_session = session_of(config)
    session.apply_tolerance()  # refconv.tolerance reads REFCONV_TOLERANCE
    if config.getoption("--refconv"):
        config._refconv_bopts = session.configure()


class RefconvItem(pytest.Item):
    def __init__(self, *, variant_id, **kw):
        super().__init__(**kw)
        self.variant_id = variant_id
        self.add_marker("refconv")

    def runtest(self):
        from . import preflight, registry
        from .runner import VariantResult, check_variant
        from .variant import MissingTarget
        cfg = self.config
        v = registry.get(self.variant_id)
        found = preflight.run([v], cfg._refconv_bopts).get(v.id, [])  # e.g. --refconv-compile
        session = cfg._refconv_session
        why = session.availability(v)
        if why:
            r = VariantResult(v.id, "unavailable", reason=why)
            preflight.apply(r, found)
            if r.status == "fail":
                raise RefconvFailure(r)
            if isinstance(why, MissingTarget):   # the user's explicit choice cannot be honoured
                raise pytest.fail.Exception(f"{v.id}: requested target missing: {why}", pytrace=False)
            pytest.skip(f"{v.id} unavailable: {r.reason}")
        r = check_variant(v, session.profile(), seed=cfg.getoption("--refconv-seed"),
                          db=cfg.getoption("--refconv-database"), backend_options=cfg._refconv_bopts)
        preflight.apply(r, found)
        self.add_report_section("call", "refconv statistics", f"{v.id}: {r.statistics}")
        self.user_properties.append(("refconv_statistics", r.statistics))
        cfg._refconv_stats.append(f"{v.id}: {r.statistics}")
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


class RefconvCollector(pytest.Collector):
    def collect(self):
        session = self.config._refconv_session
        for v in session.selected():
            yield RefconvItem.from_parent(self, name=v.id, variant_id=v.id)
        for name, why in session.broken().items():
            yield RefconvBrokenBackendItem.from_parent(self, name=f"*/{name}/*", backend=name, why=why,
                                                      explicit=bool(session.backend))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    if not config.getoption("--refconv"):
        return
    col = RefconvCollector.from_parent(session, name="refconv")
    new = list(col.collect())
    items[:0] = new


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = getattr(config, "_refconv_stats", [])
    if stats:
        terminalreporter.section("refconv Hypothesis statistics")
        for line in stats:
            terminalreporter.write_line(line)
