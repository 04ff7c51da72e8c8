"""What a plugin's backend and variants must do, and what refconv says when they do not (issue 43):
one id per variant; ``run`` writes into ``out`` (a new array returned instead is not judged, ``out``
is); a backend that cannot give variants is shown only where the filters could have selected it."""
from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import HEADER, plugin_env, refconv_cli
from refconv import Problem, Variant
from refconv.checking import RETURNED_NEW, acceptance_for, check_example
from refconv.session import Session, could_select

# a float32 filter2d (checked whole) and a float64 kron (checked by row blocks)
F2D = Problem("filter2d", {"dtype": "float32", "c": 0, "h": 5, "w": 6, "kh": 3, "kw": 3},
              {"boundary": "zero", "flip": False}, {"image": "random.1", "weights": "random.2"})
KRON = Problem("kron", {"dtype": "float64", "m": 2, "n": 3, "p": 3, "q": 2}, {}, {"a": "random.1", "b": "random.2"})


def _variant(op, how):
    """A correct variant that hands back its result as ``how`` says: ``new`` returns a new array and
    leaves ``out`` alone; ``both`` writes ``out`` and returns a copy; ``view`` writes ``out`` and
    returns a view of it; ``none`` writes ``out`` and returns None."""
    def run(problem, out, **_):
        result = np.asarray(acceptance_for(problem).expected, dtype=out.dtype).reshape(out.shape)
        if how == "new":
            return result.copy()
        out[...] = result
        return {"both": out.copy(), "view": out.reshape(-1).reshape(out.shape), "none": None}[how]
    return Variant(op, "meta", f"returns_{how}", run)


@pytest.mark.parametrize("problem", [F2D, KRON], ids=["whole", "row_blocks"])
def test_a_variant_that_returns_a_new_array_and_never_writes_out_fails_saying_so(problem):
    r = check_example(_variant(problem.op, "new"), problem, {})
    assert r.status == "fail", r
    assert r.message.startswith(RETURNED_NEW) and "never written" in r.message, r.message
    assert "run returned a new array instead of writing into out" in RETURNED_NEW


@pytest.mark.parametrize("problem", [F2D, KRON], ids=["whole", "row_blocks"])
@pytest.mark.parametrize("how", ["both", "view", "none"])
def test_a_variant_that_writes_out_passes_whatever_it_returns(problem, how):
    r = check_example(_variant(problem.op, how), problem, {})
    assert r.status == "pass" and RETURNED_NEW not in r.message, r


DUPLICATE = HEADER + """
def run(problem, out, **_):
    out[...] = 0
backend = Backend(name="dup", variants=lambda: [
    Variant(op="kron", backend="dup", name="twice", run=run),
    Variant(op="kron", backend="dup", name="once", run=run),
    Variant(op="kron", backend="dup", name="twice", run=run)])
"""
BROKEN_IMPORT = """
raise ImportError("no libfoo.so here")
"""


def test_duplicate_variant_ids_make_the_backend_unusable_naming_the_id(tmp_path):
    env = plugin_env(tmp_path / "site", {"dup": DUPLICATE})
    p = refconv_cli("check", "--backend", "dup", "--quiet", "--no-save", env=env, cwd=tmp_path, timeout=300)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "backend 'dup' returned the variant id(s) kron/dup/twice more than once" in p.stderr, p.stderr
    p = refconv_cli("list", "--backend", "dup", env={**env, "COLUMNS": "300"}, timeout=300)
    assert "kron/dup/twice more than once" in p.stdout and p.stdout.count("kron/dup/once") == 0, p.stdout


@pytest.mark.parametrize("glob, could", [
    ("outer_reshape", True),             # a name glob: the broken backend's variants are unknown
    ("kron/example/outer_reshape", False),
    ("kron/broken*/x", True),
    ("*/*/x", True),
    ("*/x", True),                       # two parts: '*' may stand for op/backend
    ("a/b/c/d", False),                  # four parts match no op/backend/name
])
def test_could_select_says_whether_a_variant_glob_could_match_a_backends_variants(glob, could):
    assert could_select(glob, "brokenimp") is could


def test_a_broken_plugin_is_listed_only_where_the_filters_could_select_it(tmp_path, monkeypatch):
    from refconv import registry
    monkeypatch.setattr(registry, "broken", lambda backend=None: {"brokenimp": "failed to load: ImportError"})
    assert Session(variant="kron/example/outer_reshape").broken() == {}
    assert Session(variant=["kron/example/outer_reshape", "*/brokenimp/*"]).broken() == {
        "brokenimp": "failed to load: ImportError"}
    assert Session(variant="outer_reshape").broken() and Session().broken()


def test_check_of_a_full_variant_id_shows_no_broken_plugin_row(tmp_path):
    env = plugin_env(tmp_path / "site", {"brokenimp": BROKEN_IMPORT})
    p = refconv_cli("check", "--variant", "kron/example/outer_reshape", "--examples", "2", "--quiet", "--no-save",
                    "--json", "r.json", env=env, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = [r["variant"] for r in json.loads((tmp_path / "r.json").read_text())["results"]]
    assert rows == ["kron/example/outer_reshape"] and "brokenimp" not in p.stdout
    p = refconv_cli("list", "--variant", "kron/brokenimp/*", env={**env, "COLUMNS": "300"}, timeout=300)
    assert "brokenimp: no: failed to load: ImportError: no libfoo.so here" in p.stdout, p.stdout
