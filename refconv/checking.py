"""Checking one example: run a variant on one problem with one set of launch parameters and judge
its output against the spec with the tolerance rules of :mod:`refconv.tolerance`.

* The output buffer handed to the variant is *poisoned* first: floats with a NaN whose payload no
  computation produces (``0x7FC5A5A5`` / ``0x7FF8A5A5A5A5A5A5``), integers with the value least
  frequent in the expected result, so elements a variant forgets to write are caught and counted
  as ``unwritten``.
* A variant declaring ``writes="interior"`` gets a buffer of the input's spatial size; the valid
  interior is compared with the spec (``boundary="valid"``), and every border element must still
  hold the poison (``border`` mismatches).
* Findings reported by backend instrumentation during the run (:mod:`refconv.findings`) fail the
  example whatever the values.
"""
from __future__ import annotations

import contextlib
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .findings import collect
from .problem import Problem
from .variant import Variant

_NAN_POISON = {np.dtype(np.float32): np.uint32(0x7FC5A5A5), np.dtype(np.float64): np.uint64(0x7FF8A5A5A5A5A5A5)}


class InvalidProblem(ValueError):
    """The spec rejects this combination of dims and options (it is outside the spec's domain);
    strategies treat it as an invalid draw, not as a result of the variant."""


@dataclass
class ExampleResult:
    """The outcome of one example.  ``status`` is ``"pass"``, ``"fail"`` (values, unwritten or
    border elements, or findings) or ``"error"`` (the variant raised or timed out)."""

    status: str
    descriptor: str
    params: dict
    message: str = ""
    n_bad: int = 0
    n_unwritten: int = 0
    n_border: int = 0
    first_bad: Any = None
    max_abs: float = 0.0
    max_rel: float = 0.0
    exact: bool = False
    findings: list = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["first_bad"] = list(self.first_bad) if self.first_bad is not None else None
        return d


def acceptance_for(problem: Problem):
    """The spec's acceptance object (expected output + tolerance rule) for ``problem``."""
    from .tolerance import acceptance
    args, kwargs = problem.spec_args()
    names = [n for n in _input_order(problem)]
    inputs = dict(zip(names, args))
    return acceptance(problem.op, inputs, kwargs)


def _input_order(problem: Problem):
    from .problem import OPDEFS
    return OPDEFS[problem.op].inputs


def interior_offset(problem: Problem) -> tuple:
    """(row, col) offset of the valid interior inside a full-size output (the kernel's anchor)."""
    d = problem.dims
    if problem.op == "filter2d":
        return d["kh"] // 2, d["kw"] // 2
    if problem.op == "sobel":
        return 1, 1
    raise ValueError(f"writes='interior' is only meaningful for filter2d and sobel, not {problem.op}")


def expected_output_layout(problem: Problem, writes: str, expected: np.ndarray | None = None):
    """(shape, dtype) of the buffer a variant writes into."""
    if expected is None:
        expected = acceptance_for(problem).expected
    if writes == "all":
        return expected.shape, expected.dtype
    img = problem.inputs["image"]
    spatial = img.shape[:2] if (problem.op == "sobel" and img.ndim == 3) else img.shape[-2:]
    lead = expected.shape[:-2]
    return tuple(lead) + tuple(spatial), expected.dtype


def poison_value(dtype: np.dtype, expected: np.ndarray):
    dtype = np.dtype(dtype)
    if dtype in _NAN_POISON:
        return _NAN_POISON[dtype].view(dtype)
    if dtype.kind in "ui":
        info = np.iinfo(dtype)
        if dtype.itemsize == 1:
            counts = np.bincount((expected.astype(np.int64) - info.min).ravel(), minlength=256)
            return dtype.type(int(np.argmin(counts)) + info.min)
        # wide integers: a value absent from the expected result
        cand = info.max - 0x5A5A
        present = set(np.unique(expected).tolist()) if expected.size < 1 << 16 else set()
        while cand in present:
            cand -= 1
        return dtype.type(cand)
    raise TypeError(f"no poison for output dtype {dtype}")


def _same_bits(a: np.ndarray, v) -> np.ndarray:
    a = np.ascontiguousarray(a)
    u = np.dtype(f"u{a.dtype.itemsize}")
    return a.view(u) == np.asarray(v, dtype=a.dtype).view(u)


@contextlib.contextmanager
def _quiet_fp_warnings():
    """The checker feeds extremes, Inf and NaN on purpose, so NumPy's floating-point warnings
    ("overflow encountered in ...") raised while a variant runs are noise.  ``np.errstate`` is
    per thread and does not reach a simulator's kernel threads; the warnings filter is process
    wide, so it does.  Only those messages are silenced; any other warning still shows."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".* encountered in ", category=RuntimeWarning)
        with np.errstate(all="ignore"):
            yield


def check_example(variant: Variant, problem: Problem, params: dict, acceptance=None) -> ExampleResult:
    """Run ``variant`` once on ``problem`` with launch ``params`` and judge the result
    (``acceptance``: :func:`acceptance_for` of this problem when the caller already has it)."""
    desc = problem.descriptor()
    t0 = time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            acc = acceptance if acceptance is not None else acceptance_for(problem)
    except (ValueError, TypeError) as e:
        raise InvalidProblem(f"{desc}: {e}") from e
    expected = np.asarray(acc.expected)
    shape, dtype = expected_output_layout(problem, variant.writes, expected)
    poison = poison_value(dtype, expected)
    buf = np.full(shape, poison, dtype=dtype)
    problem.set_output(buf)
    with collect() as findings, _quiet_fp_warnings():
        try:
            got = variant.run(problem, **params)
        except Exception as e:  # the variant's error, reported not raised
            tb = traceback.format_exception_only(type(e), e)[-1].strip()
            return ExampleResult("error", desc, dict(params), message=f"raised {tb}",
                                 findings=list(findings), seconds=time.perf_counter() - t0)
    seconds = time.perf_counter() - t0
    if got is None:
        got = buf
    got = np.asarray(got)
    if got.shape != tuple(shape) or got.dtype != dtype:
        return ExampleResult("fail", desc, dict(params), seconds=seconds, findings=list(findings),
                             message=f"returned shape {got.shape} dtype {got.dtype}; expected shape "
                                     f"{tuple(shape)} dtype {dtype}")
    n_border = 0
    if variant.writes == "interior":
        r0, c0 = interior_offset(problem)
        ho, wo = expected.shape[-2:]
        border = np.ones(got.shape, bool)
        border[..., r0:r0 + ho, c0:c0 + wo] = False
        n_border = int((border & ~_same_bits(got, poison)).sum())
        got = got[..., r0:r0 + ho, c0:c0 + wo]
    unwritten = _same_bits(got, poison) & ~_same_bits(expected, poison)
    n_unwritten = int(unwritten.sum())
    with np.errstate(all="ignore"):
        v = acc.check(got)
    res = ExampleResult(
        "pass", desc, dict(params), n_bad=int(v.n_bad), n_unwritten=n_unwritten, n_border=n_border,
        first_bad=v.first_bad, max_abs=float(v.max_abs), max_rel=float(v.max_rel), exact=bool(v.exact),
        findings=list(findings), seconds=seconds, message=v.message if not v.ok else "")
    problems = []
    if not v.ok:
        problems.append(v.message)
    if n_unwritten:
        first = tuple(int(i) for i in np.argwhere(unwritten)[0])
        problems.append(f"{n_unwritten} output element(s) never written (still poison), first at {first}")
        if res.first_bad is None:
            res.first_bad = first
    if n_border:
        problems.append(f"{n_border} element(s) outside the declared interior were written")
    if findings:
        f0 = findings[0]
        problems.append(f"{len(findings)} finding(s), first: [{f0.get('class')}] {f0.get('message')}")
    if problems:
        res.status = "fail"
        res.message = "; ".join(problems)
    return res
