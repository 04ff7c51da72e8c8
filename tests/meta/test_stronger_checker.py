"""Issue 17: wrong implementations the old checker accepted are rejected in ci runs, through the
checker's own draws (``refconv.runner.check_variant``, profile ``ci``, no database).  The wrong
implementations are in ``wrong_impls.py``; ``lab/sweeps/catch_rates.py`` measures their catch rates."""
import json
import os
import sys

import numpy as np
import pytest

from .wrong_impls import BUGS, tf32, tf32_inputs

from refconv import Range, Variant  # noqa: E402
from refconv.problem import Problem, make_fill  # noqa: E402
from refconv.runner import check_variant  # noqa: E402
from refconv.tolerance import acceptance  # noqa: E402


def _caught(v, seeds):
    out = []
    for s in seeds:
        r = check_variant(v, "ci", seed=s, db="none", failures_dir=None, shrink=False)
        out.append(r.status == "fail")
    return out


# ---------------------------------------------------------------- item 1: the integer path

def test_ci_run_still_rejects_x86_int_conversion_in_most_seeds():
    # (the old checker caught it too, through "extreme" weights; the unit tests in
    # tests/test_tolerance_int.py are the ones that failed before)
    assert sum(_caught(BUGS["x86_int_conversion"], range(4))) >= 3


# ---------------------------------------------------------------- item 2: fills that expose bugs

def test_ci_run_rejects_sobel_rounding_half_up():
    # the old fills never made a .5 tie: 0 of 8 seeded runs caught it
    assert any(_caught(BUGS["sobel_half_up"], range(8)))


@pytest.mark.parametrize("bug", ["skip_zero_weight_taps", "skip_tiny_weight_taps"])
def test_ci_runs_reject_skipped_zero_and_tiny_weight_taps(bug):
    # the old fills caught each in about half the seeded runs (4 of 8)
    assert sum(_caught(BUGS[bug], range(6))) >= 5, bug


def test_sparse_weights_meet_nonfinite_pixels():
    img = make_fill("edge", 5, (8, 8), np.dtype("float32"), "pixels")
    w = make_fill("sparse", 5, (3, 3), np.dtype("float32"), "weights")
    assert (~np.isfinite(img)).any() and (w == 0).any() and ((w != 0) & (np.abs(w) < 1e-6)).any()
    p = Problem("filter2d", {"dtype": "float32", "c": 0, "h": 8, "w": 8, "kh": 3, "kw": 3}, {},
                {"image": "edge.5", "weights": "sparse.5"})
    acc = acceptance("filter2d", p.inputs, {})
    from .wrong_impls import skip_zero_weight_taps
    assert not acc.check(skip_zero_weight_taps(p)).ok


def test_ties_fill_makes_half_way_sobel_magnitudes():
    img = make_fill("ties", 3, (10, 10), np.dtype("float32"), "pixels")
    from refconv import specs
    mag = specs.sobel(img, out_dtype="float64")
    assert np.any(mag % 1 == 0.5)


# ---------------------------------------------------------------- item 3: precision loss at any n

def test_ci_run_rejects_tf32_matvec_at_n_1000_in_every_seed():
    # before: 2 of 8 seeded runs passed it (the float bound is ~gamma_1000)
    assert all(_caught(BUGS["tf32_matvec_n1000"], range(8)))


def test_ci_run_rejects_tf32_conv2d_at_n_968():
    assert all(_caught(BUGS["tf32_conv2d_n1000"], range(2)))


def test_onehot_times_full_significand_is_bitwise_at_n_1000():
    m = make_fill("random", 1, (20, 1000), np.dtype("float32"))
    v = make_fill("onehot", 2, (1000,), np.dtype("float32"))
    acc = acceptance("matvec", {"m": m, "v": v}, {})
    assert acc.exact                                    # one exact product per output
    got = (tf32(m).astype(np.float64) @ tf32(v).astype(np.float64)).astype(np.float32)
    assert acc.check(got).n_bad > 10


def _random_matvec(n, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((64, n)).astype(np.float32), rng.standard_normal(n).astype(np.float32)


def test_probabilistic_mode_rejects_tf32_on_random_data_that_the_proven_bound_accepts():
    m, v = _random_matvec(1000, 0)
    got = (tf32(m).astype(np.float64) @ tf32(v).astype(np.float64)).astype(np.float32)
    assert acceptance("matvec", {"m": m, "v": v}, {}, mode="proven").check(got).ok
    assert acceptance("matvec", {"m": m, "v": v}, {}, mode="probabilistic").check(got).n_bad > 0


@pytest.mark.parametrize("n", [10, 300, 1000])
def test_probabilistic_mode_accepts_other_summation_orders(n):
    for seed in range(3):
        m, v = _random_matvec(n, seed)
        acc = acceptance("matvec", {"m": m, "v": v}, {}, mode="probabilistic")
        prods = m * v                                   # rounded products, float32
        rev = np.zeros(64, np.float32)
        for k in range(n - 1, -1, -1):
            rev = rev + prods[:, k]
        fwd = np.zeros(64, np.float32)
        for k in range(n):
            fwd = (fwd.astype(np.float64) + m[:, k].astype(np.float64) * v[k]).astype(np.float32)  # FMA
        for got in (rev, fwd, np.float32(m @ v)):
            assert acc.check(np.asarray(got, np.float32)).ok


def test_tolerance_mode_reaches_the_cli_and_the_json_report(tmp_path):
    from helpers import refconv_cli
    env = dict(os.environ, REFCONV_DATABASE="none")
    p = refconv_cli("check", "--op", "matvec", "--backend", "example", "--examples", "2", "--jobs", "1",
                    "--tolerance", "probabilistic", "--json", "r.json", "--quiet", "--no-save", env=env,
                    cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads((tmp_path / "r.json").read_text())["tolerance"] == "probabilistic"
    p = refconv_cli("check", "--tolerance", "loose", env=env, cwd=tmp_path, timeout=120)
    assert p.returncode != 0 and "loose" in p.stderr and "probabilistic" in p.stderr


def test_tolerance_mode_reaches_the_pytest_plugin(tmp_path):
    import subprocess
    (tmp_path / "test_mode.py").write_text(
        "from refconv.tolerance import default_mode\n"
        "def test_mode():\n    assert default_mode() == 'probabilistic'\n")
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                        "--refconv-tolerance", "probabilistic", "test_mode.py"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300,
                       env={k: v for k, v in os.environ.items() if k != "REFCONV_TOLERANCE"})
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]


def test_unknown_tolerance_mode_names_the_argument():
    with pytest.raises(ValueError, match=r"mode is 'loose'; accepted: proven, probabilistic"):
        acceptance("matvec", {"m": np.ones((1, 1)), "v": np.ones(1)}, {}, mode="loose")


# ---------------------------------------------------------------- item 4: options never drawn

@pytest.mark.parametrize("bug", ["filter2d_uint8_saturation", "sobel_uint8_saturation",
                                 "int8_symmetric_saturation", "float64_accumulator_in_float32"])
def test_ci_runs_reject_bugs_in_options_that_were_never_drawn(bug):
    # the old strategies never drew out_dtype for filter2d, sobel out_dtype beyond uint8/float32,
    # nor accumulator="float64": 0 of 8 seeded runs caught any of these
    assert any(_caught(BUGS[bug], range(8))), bug


_COLLECT_DRAWN_OPTIONS = """
import json
from hypothesis import HealthCheck, given, settings
from refconv import Variant
from refconv.strategies import cases
seen = {"filter2d": {"accumulator": set(), "out_dtype": set()}, "sobel": {"out_dtype": set()}}
def collect_for(op):
    v = Variant(op, "meta", "all", run=lambda p, out, **k: None)

    @settings(max_examples=400, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(cases(v, "ci"))
    def collect(case):
        for k in seen[op]:
            seen[op][k].add(case[0].options.get(k))

    collect()


for op in seen:
    collect_for(op)
print(json.dumps({op: {k: sorted(map(str, vs)) for k, vs in d.items()} for op, d in seen.items()}))
"""


def test_every_supported_option_value_is_drawn():
    """400 derandomized ci draws of each op reach every option value.  Drawn in a fresh
    interpreter: Hypothesis (6.170) mixes constants scanned from every module loaded in the
    process (``hypothesis.internal.constants_ast``, ``sys.modules``) into its draws, so the same
    derandomized run draws other examples after earlier tests have imported other modules
    (2026-11-27, one xdist worker's 203 earlier tests: no ``uint16`` out_dtype).  What this
    measures is the strategies, not which modules a test process happens to hold."""
    import subprocess
    r = subprocess.run([sys.executable, "-c", _COLLECT_DRAWN_OPTIONS], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    seen = {op: {k: set(vs) for k, vs in d.items()} for op, d in json.loads(r.stdout.splitlines()[-1]).items()}
    assert {"float32", "int", "float64"} <= seen["filter2d"]["accumulator"]
    assert {"int8", "uint16", "int16", "int32", "float32", "float64"} <= seen["filter2d"]["out_dtype"]
    assert {"uint8", "int8", "uint16", "int16", "int32", "float32", "float64"} <= seen["sobel"]["out_dtype"]
