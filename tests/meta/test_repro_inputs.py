"""What ``refconv repro`` does with a reproducer that does not fit its variant (issue 43): a case of
another op, a launch parameter of the wrong type, an undeclared one in the case line: exit 2 with
one line naming it, before anything runs.  And its diff table: for a variant that writes only the
interior, what the variant writes (the interior, and any border element it should have left
alone), not the border poison it rightly left."""
from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import refconv_cli

from refconv import Param, Problem, Variant
from refconv.checking import acceptance_for, expected_output_layout, interior_offset, poison_value
from refconv.errors import UsageError
from refconv.repro import FORMAT, _enc, check_params, diff_rows

MATVEC = "matvec:dtype=float64,rows=3,cols=2::m=zero.0,v=zero.0"


def _reproducer(path, variant_id: str, desc: str, params: dict | None = None, case: str | None = None):
    from refconv.case import Case
    p = Problem.parse(desc)
    doc = {"format": FORMAT, "variant": variant_id, "case": case or str(Case(p, params or {})),
           "descriptor": desc, "params": params or {}, "status": "fail", "message": "", "findings": [],
           "inputs": {k: _enc(v) for k, v in p.inputs.items()}}
    path.write_text(json.dumps(doc))
    return path


def _one_line_usage_error(p) -> str:
    out = (p.stdout + p.stderr).strip()
    assert p.returncode == 2 and "Traceback" not in out and len(out.splitlines()) == 1, out
    return out


def test_a_case_of_another_op_than_the_variants_is_a_usage_error_naming_both_ops(tmp_path):
    f = _reproducer(tmp_path / "r.json", "kron/example/outer_reshape", MATVEC, {"method": "outer"})
    out = _one_line_usage_error(refconv_cli("repro", str(f), cwd=tmp_path, timeout=300))
    assert "r.json" in out and "'matvec'" in out and "'kron'" in out and "KeyError" not in out, out


def test_a_launch_parameter_of_the_wrong_type_is_refused_naming_it():
    v = Variant(op="matvec", backend="t", name="v", run=lambda problem, out, threads=4: None,
                params=(Param("threads", (1, 2, 4), 4), Param("fast", (False, True), False)))
    check_params(v, {"threads": 2, "fast": True})
    with pytest.raises(UsageError, match=r"saved params: threads=2\.0 is a float; matvec/t/v takes an int: "
                                         r"one of 1, 2, 4"):
        check_params(v, {"threads": 2.0}, what="saved params")
    with pytest.raises(UsageError, match=r"threads=True is a bool; matvec/t/v takes an int"):
        check_params(v, {"threads": True})
    with pytest.raises(UsageError, match=r"fast=1 is an int; matvec/t/v takes a bool"):
        check_params(v, {"fast": 1})


def test_a_float_launch_parameter_in_a_reproducer_exits_2_before_reaching_the_kernel(tmp_path):
    f = _reproducer(tmp_path / "r.json", "matvec/numba_cpu/row_loop", MATVEC, {"row_block": 8.0, "lanes": 1},
                    case=MATVEC + " @ row_block=8 lanes=1")
    out = _one_line_usage_error(refconv_cli("repro", str(f), cwd=tmp_path, timeout=300))
    assert "row_block=8.0 is a float" in out and "one of 1, 3, 8" in out, out


def test_an_undeclared_launch_parameter_in_the_case_line_exits_2_naming_it_and_the_accepted_ones(tmp_path):
    f = _reproducer(tmp_path / "r.json", "kron/example/outer_reshape", "kron:dtype=float64,m=1,n=1,p=1,q=1::a=zero.0,b=zero.0",
                    {"method": "outer"}, case="kron:dtype=float64,m=1,n=1,p=1,q=1::a=zero.0,b=zero.0 @ method=outer nosuch=1")
    out = _one_line_usage_error(refconv_cli("repro", str(f), cwd=tmp_path, timeout=300))
    assert "case line" in out and "'nosuch'" in out and "accepted: method" in out, out


def test_a_case_line_whose_parameters_differ_from_the_saved_params_exits_2(tmp_path):
    f = _reproducer(tmp_path / "r.json", "kron/example/outer_reshape", "kron:dtype=float64,m=1,n=1,p=1,q=1::a=zero.0,b=zero.0",
                    {"method": "outer"}, case="kron:dtype=float64,m=1,n=1,p=1,q=1::a=zero.0,b=zero.0 @ method=einsum")
    out = _one_line_usage_error(refconv_cli("repro", str(f), cwd=tmp_path, timeout=300))
    assert "method=einsum" in out and "'params'" in out, out


SOBEL = "sobel:dtype=uint8,channels=0,h=6,w=7:magnitude=l1,boundary=valid:image=random.0"
INTERIOR = Variant(op="sobel", backend="t", name="interior", run=lambda problem, out: None, writes="interior")


def _interior_output(problem: Problem, border_write=None):
    """The buffer an interior-only variant leaves: the poison on the border, the spec's result inside
    (and ``border_write`` = (index, value) written on the border, a bug)."""
    exp = np.asarray(acceptance_for(problem).expected)
    shape, dtype = expected_output_layout(problem, "interior", exp)
    got = np.full(shape, poison_value(dtype, exp), dtype)
    r0, c0 = interior_offset(problem)
    got[..., r0:r0 + exp.shape[-2], c0:c0 + exp.shape[-1]] = exp
    if border_write:
        got[border_write[0]] = border_write[1]
    return got


def test_the_diff_of_an_interior_only_variant_omits_the_border_it_left_alone():
    problem = Problem.parse(SOBEL)
    assert diff_rows(problem, INTERIOR, _interior_output(problem)) == ([], 0)


def test_the_diff_of_an_interior_only_variant_shows_a_border_element_it_wrote():
    problem = Problem.parse(SOBEL)
    got = _interior_output(problem, border_write=((0, 0), 7))
    r0, c0 = interior_offset(problem)
    got[r0, c0] ^= 1                                  # and one wrong interior element
    rows, n = diff_rows(problem, INTERIOR, got)
    assert n == 2 and [ix for ix, _, _ in rows] == [(0, 0), (r0, c0)], rows
    assert rows[0][1] == 7 and rows[0][2] == "untouched (the border keeps its poison)"


@pytest.mark.parametrize("value", ["1e-9", "0.05"])
def test_a_replay_timeout_below_the_least_a_hang_can_be_judged_by_exits_2(tmp_path, value):
    f = _reproducer(tmp_path / "r.json", "kron/example/outer_reshape", "kron:dtype=float64,m=1,n=1,p=1,q=1::a=zero.0,b=zero.0",
                    {"method": "outer"})
    out = _one_line_usage_error(refconv_cli("repro", str(f), "--timeout", value, cwd=tmp_path, timeout=300))
    assert "--timeout" in out and ">= 0.1" in out, out
