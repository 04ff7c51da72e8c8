"""What a user met in round three (issue 43), each behaviour proven: environment values are
checked (exit 2 naming the variable, its value and what is accepted), ``check`` honours
``REFCONV_PROFILE`` as the pytest plugin does, filters that select nothing are a usage error in
``list`` too, and a long glob is not echoed whole."""
from __future__ import annotations

import json
import os

import pytest
from helpers import refconv_cli

from refconv.errors import QUOTE_LIMIT, UsageError, quoted
from refconv.session import _from_env
from refconv.variant import BackendOption


def _env(**kw) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REFCONV_")}
    env.update(REFCONV_DATABASE="none", **kw)
    return env


def _one_line(p) -> str:
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and len(lines) == 1, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    return lines[0]


# ----------------------------------------------------------------------------- environment values

FLAG = BackendOption(flag="--check", dest="check", help="", env="RC_TEST_FLAG", is_flag=True, default="auto")


@pytest.mark.parametrize("raw, value", [("1", True), ("TRUE", True), ("yes", True), ("On", True), ("0", False),
                                        ("false", False), ("NO", False), ("off", False), ("auto", "auto"),
                                        ("", None)])
def test_flag_environment_values_accepted(monkeypatch, raw, value):
    monkeypatch.setenv("RC_TEST_FLAG", raw)
    assert _from_env(FLAG) == value


@pytest.mark.parametrize("raw", ["maybe", "2", "enabled"])
def test_flag_environment_value_not_accepted_is_a_usage_error(monkeypatch, raw):
    monkeypatch.setenv("RC_TEST_FLAG", raw)
    with pytest.raises(UsageError, match=rf"environment RC_TEST_FLAG={raw!r} not accepted; accepted: 1, true, yes, "
                                         rf"on, 0, false, no, off, auto"):
        _from_env(FLAG)


@pytest.mark.slow   # refconv subprocesses
@pytest.mark.parametrize("cmd", ["check", "list"])
@pytest.mark.parametrize("var, value, accepted", [
    ("REFCONV_SANITIZE", "maybe", "accepted: 1, true, yes, on, 0, false, no, off, auto"),
    ("REFCONV_SIM_SCHEDULER", "bogus", "accepted: event, numba")])
def test_environment_value_not_accepted_exits_2_naming_it(cmd, var, value, accepted):
    p = refconv_cli(cmd, "--backend", "example", env=_env(**{var: value}))
    line = _one_line(p)
    assert f"{var}={value!r} not accepted" in line and accepted in line, line


def test_sim_scheduler_default_and_numba_accepted(monkeypatch):
    from refconv.tooling.cuda.sim_scheduler import scheduler
    monkeypatch.delenv("REFCONV_SIM_SCHEDULER", raising=False)
    assert scheduler() == "event"
    monkeypatch.setenv("REFCONV_SIM_SCHEDULER", "numba")
    assert scheduler() == "numba"


def _profile_of_run(tmp_path, *args, **env) -> str:
    out = tmp_path / "r.json"
    p = refconv_cli("check", "--backend", "example", "--examples", "1", "--json", str(out), "-q", *args,
                    env=_env(**env))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return json.loads(out.read_text())["profile"]


@pytest.mark.slow   # refconv subprocesses
def test_check_honours_refconv_profile_and_profile_option_wins(tmp_path):
    assert _profile_of_run(tmp_path) == "ci"
    assert _profile_of_run(tmp_path, REFCONV_PROFILE="dev") == "dev"
    assert _profile_of_run(tmp_path, "--profile", "ci", REFCONV_PROFILE="dev") == "ci"


@pytest.mark.slow   # refconv subprocesses
def test_check_refconv_profile_not_accepted_exits_2():
    line = _one_line(refconv_cli("check", "--backend", "example", env=_env(REFCONV_PROFILE="fast")))
    assert "REFCONV_PROFILE" in line and "'fast' not accepted" in line and "ci, dev, thorough, gpu" in line, line


# ----------------------------------------------------------------------------- filters

@pytest.mark.slow   # refconv subprocesses
@pytest.mark.parametrize("args, expected", [
    (["--backend", "nosuch"], "--backend 'nosuch' matches no installed backend; installed backends: "),
    (["--op", "nosuch"], "--op 'nosuch' matches no op; installed ops: "),
    (["--backend", "example", "--variant", "nosuch"], "no variant matches --backend 'example' --variant 'nosuch'")])
def test_list_filter_matching_nothing_exits_2_naming_it(args, expected):
    line = _one_line(refconv_cli("list", *args, env=_env()))
    assert expected in line, line
    if "--op" in args:
        assert "matvec" in line and "filter2d" in line
    else:
        assert "example" in line


@pytest.mark.slow   # refconv subprocesses
@pytest.mark.parametrize("cmd", ["list", "check"])
def test_a_long_glob_matching_nothing_is_not_echoed_whole(cmd):
    glob = "x" * 40_000
    line = _one_line(refconv_cli(cmd, "--variant", glob, env=_env()))
    assert len(line) < 400 and "(40000 characters)" in line, line[:500]


def test_quoted_keeps_short_values_and_cuts_long_ones():
    assert quoted("abc") == "'abc'"
    long = quoted("y" * 1000)
    assert long.startswith("'yyy") and long.endswith("…' (1000 characters)") and len(long) < QUOTE_LIMIT + 30
