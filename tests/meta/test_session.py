"""refconv.session: backend option values (command line, environment, recorded, default), their
command-line form, and the options a reproducer records."""
from __future__ import annotations

import json

import numpy as np
import pytest

from refconv import session as sess
from refconv.case import Case
from refconv.checking import ExampleResult
from refconv.problem import Problem
from refconv.repro import load_reproducer, recorded_options, save_reproducer
from refconv.variant import BackendOption, Variant

OPTS = [("fake", BackendOption(flag="--mode", dest="mode", help="", env="REFCONV_TEST_MODE", choices=("a", "b", "c"),
                               default="a")),
        ("fake", BackendOption(flag="--inst", dest="inst", help="", env="REFCONV_TEST_INST", is_flag=True))]


@pytest.fixture
def fake_options(monkeypatch):
    monkeypatch.setattr(sess, "backend_options", lambda: list(OPTS))
    monkeypatch.delenv("REFCONV_TEST_MODE", raising=False)
    monkeypatch.delenv("REFCONV_TEST_INST", raising=False)
    return monkeypatch


def test_explicit_then_environment_then_recorded_then_default(fake_options):
    S = sess.Session
    assert S().option_values() == {"mode": "a", "inst": False}
    assert S(recorded={"mode": "c", "inst": True}).option_values() == {"mode": "c", "inst": True}
    fake_options.setenv("REFCONV_TEST_MODE", "b")
    fake_options.setenv("REFCONV_TEST_INST", "0")
    assert S(recorded={"mode": "c", "inst": True}).option_values() == {"mode": "b", "inst": False}
    assert S(options={"mode": "a", "inst": True}, recorded={"mode": "c"}).option_values() == {"mode": "a", "inst": True}
    assert S(options={"mode": None, "inst": None}).option_values() == {"mode": "b", "inst": False}


def test_an_environment_value_not_accepted_is_a_usage_error(fake_options):
    fake_options.setenv("REFCONV_TEST_MODE", "z")
    with pytest.raises(sess.UsageError, match=r"REFCONV_TEST_MODE='z' not accepted; accepted: a, b, c"):
        sess.Session().option_values()


def test_option_flags_are_the_non_default_values_as_typed(fake_options):
    assert sess.option_flags({"mode": "a", "inst": False}) == ""
    assert sess.option_flags({"mode": "c", "inst": True}) == "--mode c --inst"
    assert sess.option_flags({"inst": True, "unknown": 3}) == "--inst"


AUTO = [("fake", BackendOption(flag="--san", dest="san", help="", env="REFCONV_TEST_SAN", is_flag=True,
                               default="auto"))]


def test_a_flag_with_a_third_default_keeps_it_until_given(monkeypatch):
    """A flag defaulting to ``"auto"`` ("not given: the backend decides") is ``"auto"`` unless the
    command line (``--san`` / ``--no-san``), the environment or a reproducer says otherwise; its
    command-line form names the ``--no-`` flag for ``False``."""
    monkeypatch.setattr(sess, "backend_options", lambda: list(AUTO))
    monkeypatch.delenv("REFCONV_TEST_SAN", raising=False)
    S = sess.Session
    assert S().option_values() == {"san": "auto"}
    assert S(options={"san": False}).option_values() == {"san": False}
    assert S(recorded={"san": True}).option_values() == {"san": True}
    monkeypatch.setenv("REFCONV_TEST_SAN", "0")
    assert S(recorded={"san": True}).option_values() == {"san": False}
    monkeypatch.setenv("REFCONV_TEST_SAN", "auto")
    assert S(recorded={"san": True}).option_values() == {"san": "auto"}
    assert sess.option_flags({"san": "auto"}) == ""
    assert sess.option_flags({"san": False}) == "--no-san" and sess.option_flags({"san": True}) == "--san"


def test_the_command_line_gives_every_flag_a_no_form():
    from refconv.cli import build_parser
    ns = build_parser().parse_args(["check", "--no-sanitize", "--no-compile"])
    assert ns.sanitize is False and ns.compile is False
    ns = build_parser().parse_args(["check", "--sanitize"])
    assert ns.sanitize is True and ns.compile is None


def _matvec_twice(problem, out, **_):
    out[...] = 2 * (problem.inputs["m"].astype(np.float64) @ problem.inputs["v"].astype(np.float64))


def test_a_reproducer_records_the_backend_options_and_the_tolerance(tmp_path, monkeypatch):
    monkeypatch.setenv("REFCONV_TOLERANCE", "probabilistic")
    v = Variant("matvec", "meta", "twice", run=_matvec_twice, supports={"dtype": ("float64",)})
    p = Problem("matvec", {"dtype": "float64", "rows": 2, "cols": 3}, {}, {"m": "one.0", "v": "one.0"})
    er = ExampleResult("fail", p.descriptor(), {}, message="wrong")
    path = save_reproducer(tmp_path, v, p, {}, er, "ci", backend_options={"cuda": "sim", "sanitize": True})
    doc = load_reproducer(path)
    assert doc["case"] == str(Case(p, {}))
    assert recorded_options(doc) == ({"cuda": "sim", "sanitize": True}, "probabilistic")
    doc["backend_options"] = ["--sanitize"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="'backend_options' is a list, expected a JSON object"):
        load_reproducer(path)
    doc["backend_options"], doc["tolerance"] = {}, "loose"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="tolerance 'loose'"):
        load_reproducer(path)
    del doc["backend_options"], doc["tolerance"]
    path.write_text(json.dumps(doc))
    assert recorded_options(load_reproducer(path)) == ({}, None)


def test_worker_count_and_nothing_checked():
    from refconv.runner import VariantResult
    assert sess.worker_count(0, 0) == 1 and sess.worker_count(3, 10) == 3
    rs = [VariantResult("a/b/c", "unavailable", reason="no card")]
    assert "all 1 selected variant(s) are unavailable here; no card" in sess.nothing_checked(rs, {})
    assert sess.nothing_checked(rs, {"a/b/c": [{"class": "compile-error"}]}) is None
