"""Checking one example: run a variant on one problem with one set of launch parameters and judge
its output against the spec with the tolerance rules of :mod:`refconv.tolerance`.

* The output buffer handed to the variant is *poisoned* first: floats with a NaN whose payload no
  computation produces (``0x7FC5A5A5`` / ``0x7FF8A5A5A5A5A5A5``), integers with a value far from
  every expected value, zero and the extremes (confirmed by a second run with a second poison), so
  elements a variant forgets to write are caught and counted as ``unwritten``, and only those.
* A variant declaring ``writes="interior"`` gets a buffer of the input's spatial size; the valid
  interior is compared with the spec (``boundary="valid"``), and every border element must still
  hold the poison (``border`` mismatches).
* Findings reported by backend instrumentation during the run (:mod:`refconv.findings`) fail the
  example whatever the values.
"""
from __future__ import annotations

import contextlib
import os
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from . import ops
from .findings import collect
from .problem import Problem
from .sink import RowSink
from .tolerance import acceptance, exact
from .variant import Variant, _run_api, run_variant

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
    of_bound: float = 0.0     # the largest error as a fraction of its bound (refconv.tolerance.Verdict)
    ulps: float = 0.0         # the largest distance in ULPs over the elements compared exactly

    def to_dict(self) -> dict:
        d = asdict(self)
        d["first_bad"] = list(self.first_bad) if self.first_bad is not None else None
        return d


def acceptance_for(problem: Problem):
    """The spec's acceptance object (expected output + tolerance rule) for ``problem``."""
    args, kwargs = problem.spec_args()
    inputs = {n: a for n, a in zip(problem.record.input_names, args) if a is not None}
    return acceptance(problem.op, inputs, kwargs)


def _interior(problem: Problem):
    rec = problem.record
    if rec.interior is None:
        ops_ = ", ".join(r.name for r in ops.records() if r.interior is not None)
        raise ValueError(f"writes='interior' is only meaningful for ops whose record has an interior "
                         f"({ops_}), not {problem.op}")
    return rec.interior(problem.dims)


def interior_offset(problem: Problem) -> tuple:
    """(row, col) offset of the valid interior inside a full-size output (the kernel's anchor,
    from the op record's ``interior``)."""
    return tuple(_interior(problem)[1])


def expected_output_layout(problem: Problem, writes: str, expected: np.ndarray | None = None):
    """(shape, dtype) of the buffer a variant writes into."""
    if expected is None:
        expected = acceptance_for(problem).expected
    if writes == "all":
        return expected.shape, expected.dtype
    spatial = _interior(problem)[0]
    lead = expected.shape[:-2]
    return tuple(lead) + tuple(spatial), expected.dtype


def _row_spec(problem: Problem):
    """The record's row-block spec of ``problem`` (``(shape, dtype, rows_of)``)."""
    return problem.record.rows(problem.inputs)


def scratch_output(problem: Problem, writes: str = "all", output: str = "array"):
    """A zero-filled output for running a variant outside a check (compile check, timing): an
    array of the layout ``writes`` gives, or for ``output="rows"`` a sink that drops its rows."""
    if problem.record.rows is not None:
        shape, dtype, _ = _row_spec(problem)
    else:
        shape, dtype = expected_output_layout(problem, writes)
    if output == "rows":
        return RowSink(shape, dtype, lambda r0, block: None)
    return np.zeros(shape, dtype)


def call_run(run, problem: Problem, out, params: dict):
    """Call a variant's ``run`` function (API 2 ``run(problem, out, **params)`` or the deprecated
    API 1 ``run(problem, **params)``, which writes into ``problem.output()``)."""
    if _run_api(run) == 2:
        return run(problem, out, **params)
    if isinstance(out, np.ndarray):
        problem.set_output(out)
    return run(problem, **params)


def poison_value(dtype: np.dtype, expected: np.ndarray, avoid=()):
    """The value the output buffer is filled with before a variant runs.

    * float32 / float64: a quiet NaN whose payload (``0x7FC5A5A5`` / ``0x7FF8A5A5A5A5A5A5``) no
      arithmetic produces, so an element holding it was never written.
    * integers: a value *far from every plausible result*.  The plausible results are the expected
      values, the dtype's extremes and zero (saturation, wrap-around and a forgotten store give
      those), plus ``avoid`` (the first poison, when a second one is chosen).  Among the values
      absent from the expected result, the one whose distance to the nearest plausible value is
      largest wins (ties: the smallest); so an off-by-one (expected all zeros, a kernel writing 1)
      is never the poison.  When every value of the dtype occurs in the expected result, the
      least frequent one is used.  An integer poison alone is still a value some wrong kernel
      could write, so :func:`check_example` confirms "never written" with a second run and a
      second poison (see there).
    """
    dtype = np.dtype(dtype)
    if dtype in _NAN_POISON:
        return _NAN_POISON[dtype].view(dtype)
    if dtype.kind not in "ui":
        raise TypeError(f"no poison for output dtype {dtype}; accepted: float32, float64 or an integer dtype")
    info = np.iinfo(dtype)
    extra = [info.min, info.max, 0] + [int(a) for a in avoid]
    if dtype.itemsize <= 2:
        values = np.arange(info.min, info.max + 1, dtype=np.int64)
        counts = np.bincount((np.asarray(expected).astype(np.int64) - info.min).ravel(),
                             minlength=values.size)
        plausible = np.zeros(values.size, bool)
        plausible[counts > 0] = True
        plausible[np.asarray(extra, np.int64) - info.min] = True
        # distance of every value to the nearest plausible one (two sweeps over the value line)
        idx = np.arange(values.size)
        left = np.maximum.accumulate(np.where(plausible, idx, -values.size * 2))
        right = np.minimum.accumulate(np.where(plausible, idx, values.size * 3)[::-1])[::-1]
        dist = np.minimum(idx - left, right - idx)
        free = (counts == 0) & ~np.isin(values, extra[3:])
        if free.any():
            return dtype.type(int(values[np.argmax(np.where(free, dist, -1))]))
        ranked = np.where(np.isin(values, extra[3:]), np.iinfo(np.int64).max, counts)
        return dtype.type(int(values[np.argmin(ranked)]))
    # wide integers: a value absent from the expected result, far from zero and the extremes
    present = set(np.unique(expected).tolist()) if expected.size < 1 << 16 else set()
    present.update(int(a) for a in avoid)
    cand = info.max // 2 + 0x5A5A
    while cand in present:
        cand -= 1
    return dtype.type(cand)


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


#: said of a variant whose ``run`` returned an array of the right layout that is not ``out``
RETURNED_NEW = ("run returned a new array instead of writing into out; the checker judges out, the "
                "poisoned buffer it passed (docs/plugins.md)")


def _result(got, out, shape, dtype):
    """What the checker judges after ``run`` returned ``got`` into ``out``: ``(array, returned_new)``.
    ``None``, ``out`` or a view of it is ``out``; an array of another layout is itself (reported as
    a wrong shape or dtype); a new array of the right layout is ignored: ``out`` is judged, so
    that elements the kernel never wrote keep their poison and are caught (``returned_new``)."""
    if got is None or got is out:
        return out, False
    got = np.asarray(got)
    if got.shape != tuple(shape) or got.dtype != dtype:
        return got, False
    return out, not np.may_share_memory(got, out)


def _run_once(variant: Variant, problem: Problem, params: dict, shape, dtype, poison):
    """Run ``variant`` into a fresh buffer filled with ``poison``: ``(got, findings, error,
    returned_new)`` where ``error`` is the one-line message of what it raised (``got`` is then
    None) and ``returned_new`` says that ``run`` returned a new array, not ``out`` (:func:`_result`)."""
    buf = np.full(shape, poison, dtype=dtype)
    with collect() as findings, _quiet_fp_warnings():
        try:
            got = run_variant(variant, problem, buf, params)
        except Exception as e:  # the variant's error, reported not raised
            tb = traceback.format_exception_only(type(e), e)[-1].strip()
            return None, list(findings), f"raised {tb}", False
    judged, returned_new = _result(got, buf, shape, dtype)
    return judged, list(findings), None, returned_new


def check_example(variant: Variant, problem: Problem, params: dict, acceptance=None,
                  keep: dict | None = None) -> ExampleResult:
    """Run ``variant`` once on ``problem`` with launch ``params`` and judge the result
    (``acceptance``: :func:`acceptance_for` of this problem when the caller already has it;
    ``keep``: a dict that receives the variant's output as ``keep["out"]`` -- the array, or for
    ``output="rows"`` a factory of fresh, discarding sinks -- for a replay's diff or a bench).

    An element is reported ``never written`` only when it provably kept the poison: for floats
    the NaN payload says so; for integers (where the poison is a value a wrong kernel could
    write) the variant runs a second time into a buffer filled with a second, different poison
    (:func:`poison_value` with ``avoid``), and only elements holding the first poison after the
    first run *and* the second poison after the second run count.  An element that held the
    first poison only was written with that value: it is judged as a wrong value like any other.
    The second run happens only when the first left suspect elements, so passing examples cost
    one run."""
    desc = problem.descriptor()
    t0 = time.perf_counter()
    if problem.record.rows is not None:
        return _check_by_rows(variant, problem, params, desc, t0, keep)
    if variant.output == "rows":
        raise InvalidProblem(f"{variant.id}: output='rows' is only checked for ops with a row-block spec "
                             f"({', '.join(r.name for r in ops.records() if r.rows is not None)}), "
                             f"not {problem.op}")
    try:
        with np.errstate(all="ignore"):
            acc = acceptance if acceptance is not None else acceptance_for(problem)
    except (ValueError, TypeError) as e:
        raise InvalidProblem(f"{desc}: {e}") from e
    expected = np.asarray(acc.expected)
    shape, dtype = expected_output_layout(problem, variant.writes, expected)
    poison = poison_value(dtype, expected)
    got, findings, err, returned_new = _run_once(variant, problem, params, shape, dtype, poison)
    if keep is not None:
        keep["out"] = got
    if err is not None:
        return ExampleResult("error", desc, dict(params), message=err, findings=findings,
                             seconds=time.perf_counter() - t0)
    seconds = time.perf_counter() - t0
    if got.shape != tuple(shape) or got.dtype != dtype:
        return ExampleResult("fail", desc, dict(params), seconds=seconds, findings=findings,
                             message=f"returned shape {got.shape} dtype {got.dtype}; expected shape "
                                     f"{tuple(shape)} dtype {dtype}")
    kept = _same_bits(got, poison)          # elements holding the poison after the run
    n_border = 0
    if variant.writes == "interior":
        r0, c0 = interior_offset(problem)
        ho, wo = expected.shape[-2:]
        inner = (..., slice(r0, r0 + ho), slice(c0, c0 + wo))
        border = np.ones(got.shape, bool)
        border[inner] = False
        n_border = int((border & ~kept).sum())
        got, kept = got[inner], kept[inner]
    else:
        inner = (...,)
    if dtype.kind in "ui" and kept.any():   # confirm with a second poison (see the docstring)
        poison2 = poison_value(dtype, expected, avoid=(int(poison),))
        got2, findings2, err2, _ = _run_once(variant, problem, params, shape, dtype, poison2)
        findings += findings2
        if err2 is not None:
            return ExampleResult("error", desc, dict(params), findings=findings,
                                 seconds=time.perf_counter() - t0,
                                 message=f"{err2} (on the second run, which confirms unwritten elements)")
        unwritten = kept & _same_bits(got2, poison2)[inner] if got2.shape == tuple(shape) else kept
    else:
        unwritten = kept & ~_same_bits(expected, poison)
    n_unwritten = int(unwritten.sum())
    with np.errstate(all="ignore"):
        v = acc.check(got)
    res = ExampleResult(
        "pass", desc, dict(params), n_bad=int(v.n_bad), n_unwritten=n_unwritten, n_border=n_border,
        first_bad=v.first_bad, max_abs=float(v.max_abs), max_rel=float(v.max_rel), exact=bool(v.exact),
        findings=list(findings), seconds=seconds, message=v.message if not v.ok else "",
        of_bound=float(v.of_bound), ulps=float(v.ulps))
    return _said_returned_new(_conclude(res, v.ok, v.message, n_unwritten, unwritten_at=(
        tuple(int(i) for i in np.argwhere(unwritten)[0]) if n_unwritten else None), n_border=n_border,
        findings=findings), returned_new)


def _said_returned_new(res: ExampleResult, returned_new: bool) -> ExampleResult:
    """``res``, its failure led by :data:`RETURNED_NEW` when ``run`` returned a new array."""
    if returned_new and res.status == "fail":
        res.message = f"{RETURNED_NEW}; {res.message}"
    return res


def findings_summary(findings) -> str:
    """One line naming every class among ``findings`` (in order of first appearance) and the
    first finding, e.g. ``3 finding(s) [shared-race, uninitialized-read], first: [shared-race] ...``."""
    classes = list(dict.fromkeys(str(f.get("class")) for f in findings))
    f0 = findings[0]
    return f"{len(findings)} finding(s) [{', '.join(classes)}], first: [{f0.get('class')}] {f0.get('message')}"


def _conclude(res: ExampleResult, ok: bool, message: str, n_unwritten: int, unwritten_at, n_border: int,
              findings, unwritten_what: str = "never written (still poison)") -> ExampleResult:
    problems = []
    if findings:   # first: the instrumentation names the cause, wrong values are its consequence
        problems.append(findings_summary(findings))
    if not ok:
        problems.append(message)
    if n_unwritten:
        problems.append(f"{n_unwritten} output element(s) {unwritten_what}, first at {unwritten_at}")
        if res.first_bad is None:
            res.first_bad = unwritten_at
    if n_border:
        problems.append(f"{n_border} element(s) outside the declared interior were written")
    if problems:
        res.status = "fail"
        res.message = "; ".join(problems)
    return res


# ----------------------------------------------------------------------------- row-block checking
#
# Ops whose spec can produce any row range of the result on its own are checked block by block:
# the expected result is never formed whole, so the checker holds at most the variant's output
# (an "array" variant) or nothing but one block (an output="rows" variant, see refconv.sink).

# The record's ``rows(inputs)`` gives ``(shape, dtype, rows_of)``: ``rows_of(r0, r1)`` are the
# spec's rows r0 .. r1-1.
#: elements per block when an array result is verified block by block
_CHECK_BLOCK_ELEMENTS = 1 << 22


def _threads() -> int:
    return min(8, os.cpu_count() or 1)


def _row_poison(dtype: np.dtype):
    dtype = np.dtype(dtype)
    if dtype in _NAN_POISON:
        return _NAN_POISON[dtype].view(dtype)
    info = np.iinfo(dtype)
    return dtype.type(info.max - (0x5A if dtype.itemsize == 1 else 0x5A5A))


class _RowChecker:
    """Accumulates the verdict over row blocks of a result (exact ops: every element has one
    accepted value)."""

    def __init__(self, op: str, rows_of, poison):
        self.op, self.rows_of, self.poison = op, rows_of, poison
        self.n_bad = self.n_unwritten = self.n_checked = 0
        self.first_bad = self.first_unwritten = None
        self.first_message = ""
        self.max_abs = self.max_rel = self.ulps = 0.0

    def consume(self, row0: int, block: np.ndarray) -> None:
        """Check rows ``row0 ..`` of the result.  Bitwise equality (NaN for NaN) is the fast path;
        only rows holding a mismatch go through the full verdict.  Large blocks are split over
        threads (NumPy releases the GIL), so the host keeps up with a GPU streaming gigabytes."""
        n = block.shape[0]
        step = max(1, _CHECK_BLOCK_ELEMENTS // max(block.shape[1], 1))
        if n > step and _threads() > 1:
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(_threads()) as ex:
                parts = list(ex.map(lambda r: (r, self._mismatched_rows(row0 + r, block[r:r + step])),
                                    range(0, n, step)))
        else:
            parts = [(r, self._mismatched_rows(row0 + r, block[r:r + step])) for r in range(0, n, step)]
        self.n_checked += block.size
        for r, rows in parts:
            for i in rows:
                self._full(row0 + r + int(i), block[r + i:r + i + 1])

    def _mismatched_rows(self, row0: int, block: np.ndarray) -> np.ndarray:
        exp = self.rows_of(row0, row0 + block.shape[0])
        same = _same_bits(block, exp)
        if block.dtype.kind == "f":
            same |= np.isnan(block) & np.isnan(exp)
        return np.flatnonzero(~same.all(axis=1))

    def _full(self, row: int, block: np.ndarray) -> None:
        exp = self.rows_of(row, row + 1)
        unwritten = _same_bits(block, self.poison) & ~_same_bits(exp, self.poison)
        nu = int(unwritten.sum())
        if nu:
            if self.first_unwritten is None:
                self.first_unwritten = (int(row), int(np.argwhere(unwritten)[0][1]))
            self.n_unwritten += nu
        with np.errstate(all="ignore"):
            v = exact(self.op, exp).check(block)
        self.max_abs, self.max_rel = max(self.max_abs, v.max_abs), max(self.max_rel, v.max_rel)
        self.ulps = max(self.ulps, v.ulps)
        if v.n_bad:
            if self.first_bad is None:
                self.first_bad = (int(row), int(v.first_bad[1]))
                self.first_message = v.message.replace(f"first at {v.first_bad}", f"first at {self.first_bad}")
            self.n_bad += v.n_bad

    def message(self, total: int) -> str:
        if not self.n_bad:
            return ""
        head = self.first_message.split(" elements not accepted")[1] if " elements not accepted" in \
            self.first_message else ": " + self.first_message
        return f"{self.n_bad} of {total} elements not accepted{head}"


def _check_by_rows(variant: Variant, problem: Problem, params: dict, desc: str, t0: float,
                   keep: dict | None = None) -> ExampleResult:
    try:
        shape, dtype, rows_of = _row_spec(problem)
    except (ValueError, TypeError) as e:
        raise InvalidProblem(f"{desc}: {e}") from e
    poison = _row_poison(dtype)
    rc = _RowChecker(problem.op, rows_of, poison)
    if variant.output == "rows":
        out = RowSink(shape, dtype, rc.consume, poison)
        if keep is not None:
            keep["out"] = lambda: RowSink(shape, dtype, lambda r0, block: None, poison)
    else:
        out = np.full(shape, poison, dtype=dtype)
        if keep is not None:
            keep["out"] = out
    returned_new = False
    with collect() as findings, _quiet_fp_warnings():
        try:
            got = run_variant(variant, problem, out, params)
            if variant.output == "array":
                got, returned_new = _result(got, out, shape, dtype)
                if got.shape != tuple(shape) or got.dtype != dtype:
                    return ExampleResult("fail", desc, dict(params), seconds=time.perf_counter() - t0,
                                         findings=list(findings),
                                         message=f"returned shape {got.shape} dtype {got.dtype}; expected shape "
                                                 f"{tuple(shape)} dtype {dtype}")
                step = max(1, _CHECK_BLOCK_ELEMENTS // max(shape[1], 1))
                for r0 in range(0, shape[0], step):
                    rc.consume(r0, got[r0:r0 + step])
        except Exception as e:  # the variant's error (a RowSink misuse included), reported not raised
            tb = traceback.format_exception_only(type(e), e)[-1].strip()
            return ExampleResult("error", desc, dict(params), message=f"raised {tb}",
                                 findings=list(findings), seconds=time.perf_counter() - t0)
    seconds = time.perf_counter() - t0
    n_unwritten, unwritten_at = rc.n_unwritten, rc.first_unwritten
    if variant.output == "rows":
        missing = out.missing_rows()
        if missing.size:
            n_unwritten += int(missing.size) * shape[1]
            unwritten_at = unwritten_at or (int(missing[0]), 0)
    total = shape[0] * shape[1]
    res = ExampleResult("pass", desc, dict(params), n_bad=rc.n_bad, n_unwritten=n_unwritten,
                        first_bad=rc.first_bad, max_abs=rc.max_abs, max_rel=rc.max_rel, exact=True,
                        findings=list(findings), seconds=seconds, ulps=rc.ulps)
    # a float poison is a NaN payload no arithmetic makes; an integer one is a value a wrong kernel
    # could write, and row blocks are checked once (no second poison), so say only what is known
    what = "never written (still poison)" if dtype.kind == "f" else \
        f"hold the poison value {poison} (never written, or written with that wrong value)"
    return _said_returned_new(_conclude(res, rc.n_bad == 0, rc.message(total), n_unwritten, unwritten_at, 0,
                                        findings, what), returned_new)
