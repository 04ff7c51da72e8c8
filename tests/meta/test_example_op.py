"""The worked example of docs/plugins.md, "A new op": examples/refconv-boxsum-op brings its own op
(``boxsum2d``, float32 window sums with a float acceptance) and two variants.  Its variants pass,
wrong ones fail, the command line checks it as an installed plugin, and the docs quote the file as
it is (so neither can drift from the other)."""
from __future__ import annotations

import importlib.util
import json
import re

import numpy as np
import pytest

from helpers import ROOT, plugin_env, refconv_cli
from refconv import Variant, ops
from refconv.runner import check_variant

EXAMPLE = ROOT / "examples" / "refconv-boxsum-op" / "src" / "refconv_boxsum" / "__init__.py"
DOC = ROOT / "docs" / "plugins.md"


@pytest.fixture
def boxsum():
    """The example module, imported from its file (which registers the op); unregistered after."""
    spec = importlib.util.spec_from_file_location("refconv_boxsum_under_test", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    try:
        yield mod
    finally:
        ops.unregister_op("boxsum2d")


def _wrong(name, run):
    return Variant("boxsum2d", "boxsum", name, run=run)


def _in_float16(problem, out):
    """Sums in float16: too few bits for the float32 result."""
    x, k = problem.inputs["image"].astype(np.float16), problem.option("k")
    ho, wo = out.shape
    acc = np.zeros((ho, wo), np.float16)
    with np.errstate(all="ignore"):
        for a in range(k):
            for b in range(k):
                acc += x[a:a + ho, b:b + wo]
    out[...] = acc


def _skips_last_column_tap(problem, out):
    """Each window without its last column (an off-by-one in the tap loop)."""
    x, k = problem.inputs["image"], problem.option("k")
    ho, wo = out.shape
    acc = np.zeros((ho, wo), np.float32)
    with np.errstate(all="ignore"):
        for a in range(k):
            for b in range(k - 1):
                acc += x[a:a + ho, b:b + wo]
    out[...] = acc


def test_the_example_op_s_variants_pass(boxsum):
    for v in boxsum.backend.variants():
        res = check_variant(v, "ci", seed=1, db="none", failures_dir=None)
        assert res.status == "pass" and res.examples > 0 and res.directed > 0, (v.id, res.reason)


@pytest.mark.parametrize("run", [_in_float16, _skips_last_column_tap], ids=lambda f: f.__name__)
def test_the_example_op_s_float_acceptance_rejects_a_wrong_kernel(boxsum, run):
    res = check_variant(_wrong(run.__name__.strip("_"), run), "ci", seed=1, db="none", failures_dir=None)
    assert res.status == "fail", res


def test_the_example_op_s_spec_is_inside_its_own_acceptance(boxsum):
    from refconv.checking import acceptance_for
    from refconv.problem import Problem
    for k in (1, 3, 5):
        p = Problem("boxsum2d", {"dtype": "float32", "h": 7, "w": 9}, {"k": k}, {"image": "random.3"})
        acc = acceptance_for(p)
        assert acc.check(np.asarray(acc.expected)).ok


def _quoted(name: str) -> str:
    src = EXAMPLE.read_text()
    m = re.search(rf"# --8<-- \[start:{name}\]\n(.*?)# --8<-- \[end:{name}\]\n", src, re.S)
    assert m, f"marker {name} missing from {EXAMPLE}"
    return m.group(1).rstrip("\n")


@pytest.mark.parametrize("name", ["spec", "accept", "record", "backend"])
def test_docs_quote_the_example_file_as_it_is(name):
    section = DOC.read_text().split("### A new op\n", 1)[1].split("\n### ", 1)[0]
    assert f"```python\n{_quoted(name)}\n```" in section, f"docs/plugins.md no longer quotes the {name} block"


def test_the_command_line_checks_the_example_plugin(tmp_path):
    env = plugin_env(tmp_path / "site", {"boxsum": EXAMPLE.read_text()})
    p = refconv_cli("check", "--backend", "boxsum", "--examples", "5", "--quiet", "--no-save", "--json", "r.json",
                    env=env, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = {r["variant"]: r["status"] for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    assert rows == {"boxsum2d/boxsum/direct": "pass", "boxsum2d/boxsum/separable": "pass"}
    p = refconv_cli("list", "--op", "boxsum2d", env={**env, "COLUMNS": "300"}, timeout=300)
    assert p.returncode == 0 and "boxsum2d" in p.stdout and "separable" in p.stdout, p.stdout
