"""Supports state what a kernel implements, profiles decide what is cheap to draw, device limits
act through constraints, and results larger than memory are streamed and checked by rows."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import find, settings

from refconv import Problem, Range, Variant, specs
from refconv.checking import check_example
from refconv.profiles import get_profile
from refconv.sink import RowSink
from refconv.strategies import cases, domain

KRON = Problem("kron", {"dtype": "float64", "m": 7, "n": 5, "p": 6, "q": 4}, {}, {"a": "special.1", "b": "random.2"})


def _rows_variant(fn, name="rows"):
    return Variant("kron", "t", name, run=fn, output="rows")


def test_range_without_upper_bound_admits_seed_scale_sizes():
    r = Range(3)
    assert 3 in r and 131073 in r and 2 not in r and True not in r
    assert repr(r) == "3.." and repr(Range(1, 8)) == "1..8"
    assert r.cap(64) == Range(3, 64) and Range(3, 10).cap(64) == Range(3, 10) and Range(5).cap(2) == Range(5, 5)


def test_a_profile_without_a_cap_for_an_unbounded_size_is_named():
    v = Variant("matvec", "t", "x", run=lambda problem, out: None)
    prof = dataclasses.replace(get_profile("ci"), name="mine")      # no op record caps a profile "mine"
    with pytest.raises(ValueError, match="does not cap matvec dim 'rows'"):
        domain(v, "rows", prof)
    assert domain(v, "rows", get_profile("ci")) == Range(1, 40)
    assert domain(v, "rows", dataclasses.replace(prof, caps={"rows": 7})) == Range(1, 7)
    assert domain(v, "rows", dataclasses.replace(get_profile("ci"), caps={"matvec.rows": 9, "rows": 7})) == Range(1, 9)


def test_thorough_draws_the_former_toy_ranges_and_ci_stays_within_them():
    v = Variant("conv2d", "t", "x", run=lambda problem, out: None)
    assert domain(v, "c", get_profile("thorough")) == Range(1, 8)
    assert domain(v, "c", get_profile("ci")) == Range(1, 2)
    f = Variant("filter2d", "t", "x", run=lambda problem, out: None)
    assert domain(f, "c", get_profile("thorough")) == Range(0, 3)


def test_the_gpu_profile_draws_the_seed_studies_configurations():
    v = Variant("filter2d", "t", "x", run=lambda problem, out: None,
                supports={"dtype": ("uint8",), "kh": (3,), "kw": (3,), "c": (0,)})
    found = find(cases(v, "gpu"), lambda pp: pp[0].dims["h"] == 3072 and pp[0].dims["w"] == 3072,
                 settings=settings(max_examples=200, database=None))
    assert found[0].dims["kh"] == 3


def test_row_sink_refuses_a_row_twice_a_wrong_width_and_rows_outside():
    got = []
    s = RowSink((4, 3), np.float32, lambda r0, b: got.append(r0))
    s.write(0, np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="row 1 written twice"):
        s.write(1, np.zeros((1, 3), np.float32))
    with pytest.raises(ValueError, match=r"accepted: \(rows, 3\)"):
        s.write(2, np.zeros((1, 4), np.float32))
    with pytest.raises(ValueError, match="outside 0..3"):
        s.write(3, np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="accepted: float32"):
        s.write(2, np.zeros((1, 3), np.float64))
    assert got == [0] and list(s.missing_rows()) == [2, 3]


def _stream(problem, out, rows=5, skip=None, poke=None):
    a, b = problem.inputs["a"], problem.inputs["b"]
    for r0 in range(0, out.shape[0], rows):
        if r0 == skip:
            continue
        blk = specs.kron_rows(a, b, r0, min(r0 + rows, out.shape[0])).copy()
        if poke is not None and r0 <= poke[0] < r0 + rows:
            blk[poke[0] - r0, poke[1]] += 1
        out.write(r0, blk)


def test_a_streamed_result_is_checked_block_by_block():
    assert check_example(_rows_variant(_stream), KRON, {}).status == "pass"
    r = check_example(_rows_variant(lambda p, out: _stream(p, out, poke=(23, 9))), KRON, {})
    assert r.status == "fail" and r.n_bad == 1 and r.first_bad == (23, 9)


def test_rows_a_streamed_variant_never_writes_are_reported_unwritten():
    r = check_example(_rows_variant(lambda p, out: _stream(p, out, skip=10)), KRON, {})
    assert r.status == "fail" and r.n_unwritten == 5 * 20 and "never written" in r.message


def test_kron_array_results_are_checked_without_forming_the_whole_expected_product(monkeypatch):
    def whole(*a, **k):
        raise AssertionError("the checker formed the whole product")
    mod = sys.modules["refconv.specs.kron"]
    monkeypatch.setattr(specs, "kron", whole)
    monkeypatch.setattr(mod, "kron", whole)

    def run(problem, out):
        out[...] = np.kron(problem.inputs["a"], problem.inputs["b"])
    assert check_example(Variant("kron", "t", "arr", run=run), KRON, {}).status == "pass"


@pytest.mark.filterwarnings("default:.*plugin API 1:DeprecationWarning")  # on purpose (see tests/conftest.py)
def test_plugin_api_1_still_runs_with_a_deprecation_warning():
    def old(problem):
        out = problem.output()
        out[...] = np.kron(problem.inputs["a"], problem.inputs["b"])
        return out
    v = Variant("kron", "t", "api1", run=old)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert check_example(v, KRON, {}).status == "pass"
    assert any(issubclass(x.category, DeprecationWarning) and "API 1" in str(x.message) for x in w)
    with pytest.raises(ValueError, match="output='rows' needs run"):
        Variant("kron", "t", "bad", run=old, output="rows")


def test_device_grid_limit_is_a_constraint_under_the_simulator_too():
    from refconv import registry
    from refconv.pool import configure_backends
    configure_backends({"cuda": "sim"})
    (v,) = registry.variants(op="filter2d", backend="numba_cuda", name="GM")
    tall = Problem("filter2d", {"dtype": "uint8", "c": 0, "h": 2 * 65535 + 1, "w": 5, "kh": 3, "kw": 3},
                   {"boundary": "valid", "accumulator": "int", "cast": "wrap"})
    assert "gridDim.y = 65536 > 65535" in v.constraint(tall, {"bx": 32, "by": 2})
    assert v.constraint(tall, {"bx": 32, "by": 4}) is None


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "refconv", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_gpu_profile_is_refused_on_the_simulator_with_exit_2():
    r = _cli("check", "--backend", "numba_cuda", "--cuda", "sim", "--op", "kron", "--profile", "gpu")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "simulator" in r.stderr and "--profile ci" in r.stderr


@pytest.mark.slow
def test_list_shows_each_variants_real_domain_and_the_device_limits():
    r = _cli("list", "--backend", "numba_cuda", "--cuda", "sim", "--op", "sobel")
    assert r.returncode == 0, r.stderr
    assert "max_grid=2147483647x65535x65535" in r.stdout and "h=3.." in r.stdout
