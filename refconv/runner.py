"""Checking one variant with Hypothesis: draw cases, run examples, shrink failures, save a
reproducer.  Used in-process by the pytest plugin and inside worker processes by ``refconv check``
(see :mod:`refconv.pool`).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from hypothesis import HealthCheck, Phase, Verbosity, given, reject, seed as hyp_seed, settings
from hypothesis.database import ExampleDatabase

from .case import Case
from .checking import ExampleResult, InvalidProblem, check_example
from .directed import directed_cases
from .profiles import Profile, database, get_profile
from .strategies import cases
from .variant import Variant


@dataclass
class VariantResult:
    """The outcome of checking one variant.  ``status``: ``pass``, ``fail``, ``error``
    (raised/timed out), ``unavailable`` (cannot run here; ``reason`` says why) or ``skipped``."""

    variant: str
    status: str
    examples: int = 0
    passed: int = 0
    invalid: int = 0
    seconds: float = 0.0
    worst_abs: float = 0.0
    worst_rel: float = 0.0
    worst_of_bound: float | None = None   # the largest accepted error as a fraction of its bound (None: not checked)
    reason: str = ""
    failure: dict | None = None       # the minimised ExampleResult, as a dict
    largest_case: str = ""            # the passing example with the most input bytes (sizes reached)
    reproducer: str | None = None     # path of the saved reproducer file
    reproducer_error: str = ""        # why the reproducer could not be saved (the failure stays)
    database_error: str = ""          # examples the example database could not save, and why
    shrink_examples: int = 0          # examples run while shrinking, after the first failure
    directed: int = 0                 # directed cases run (refconv.directed), before the random draws
    directed_skipped: list = field(default_factory=list)  # directed table rows outside the support
    failed_case: str = ""             # which directed case failed ("" when a random draw did)
    findings: list = field(default_factory=list)
    statistics: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


class _Reshrink(ExampleDatabase):
    """The example database as a shrinking run sees it: the failures saved under the variant's
    key are offered as its *secondary* corpus, so that Hypothesis replays them and shrinks a
    failing one again.  From the primary corpus Hypothesis would report an exact replay unshrunk
    (it takes those as shrunk already), yet a run with shrinking off, or one stopped while
    shrinking, saved them as found: a large case would then come back large in every later run
    where a fresh database shrinks it to 1×1.  Everything else passes through unchanged."""

    def __init__(self, db: ExampleDatabase, key: bytes):
        super().__init__()
        self._db, self._key, self._secondary = db, key, key + b".secondary"

    def fetch(self, key: bytes):
        if key == self._key:
            return iter(())
        if key == self._secondary:
            saved = list(self._db.fetch(self._key))
            return iter(saved or list(self._db.fetch(key)))
        return self._db.fetch(key)

    def save(self, key: bytes, value: bytes) -> None:
        self._db.save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self._db.delete(key, value)
        if key == self._secondary:        # a replayed failure that passes now: gone from both
            self._db.delete(self._key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self._db.move(src, dest, value)


class _CaseFailed(Exception):
    """Raised inside the Hypothesis test so it shrinks; carries the ExampleResult."""

    def __init__(self, result: ExampleResult):
        super().__init__(result.message)
        self.result = result


def check_variant(variant: Variant, profile: Profile | str = "ci", *, seed: int | None = None,
                  db: str | None = None, failures_dir: str | None = ".refconv/failures",
                  on_example: Callable[[str, ExampleResult | None, str | None], None] | None = None,
                  shrink: bool = True, backend_options: dict | None = None) -> VariantResult:
    """Check ``variant`` against the spec: first its directed cases (:func:`refconv.directed.directed_cases`,
    the same in every run; the first failing one is the failure, unshrunk: it is small already),
    then ``profile.max_examples`` Hypothesis examples.  A failing directed case is shrunk (its sizes,
    integer options and launch parameters: :func:`_shrink_directed`) when ``shrink``.

    ``on_example(event, result, case)`` is called once with ``("plan", None, n)`` (the examples to
    expect: directed cases plus ``max_examples``; shrinking and rejected draws come on top), then with
    ``("start", None, case_line)`` before and ``("done", result, None)`` after every example (progress
    and hang detection).  On failure the minimised case is
    saved under ``failures_dir`` (see :mod:`refconv.repro`), recording ``backend_options`` (the
    option values the backends were configured with) so that its replay re-applies them."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    t0 = time.perf_counter()
    stats = {"examples": 0, "passed": 0, "invalid": 0, "worst_abs": 0.0, "worst_rel": 0.0, "worst_of_bound": 0.0,
             "shrink": 0}
    last_fail: dict = {}
    test = _hypothesis_test(variant, prof, _one_example(variant, stats, last_fail, on_example), seed, db, shrink)
    res = VariantResult(variant.id, "pass")
    _run_directed(variant, prof, res, stats, last_fail, shrink, on_example)
    try:
        if not last_fail:
            test()
    except _CaseFailed:
        pass
    except BaseException as e:  # Hypothesis itself failed (e.g. Unsatisfiable): an error of the run
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        res.status, res.reason = "error", f"{type(e).__name__}: {e}".splitlines()[0][:500]
    res.examples, res.passed, res.invalid = stats["examples"], stats["passed"], stats["invalid"]
    res.shrink_examples = stats["shrink"]
    res.worst_abs, res.worst_rel, res.worst_of_bound = stats["worst_abs"], stats["worst_rel"], stats["worst_of_bound"]
    res.largest_case = stats.get("largest", "")
    res.seconds = time.perf_counter() - t0
    res.database_error = _database_error(test)
    if last_fail:
        r: ExampleResult = last_fail["result"]
        res.status = "error" if r.status == "error" else "fail"
        res.failure = r.to_dict()
        res.findings = r.findings
        res.reason = (f"directed case {res.failed_case}: " if res.failed_case else "") + r.message
        if failures_dir:
            save_or_note(res, failures_dir, variant, last_fail["problem"], last_fail["params"], r, prof.name,
                         backend_options)
    res.statistics = _statistics(res)
    return res


def _database_error(test) -> str:
    """What the example database of ``test`` could not save (:mod:`refconv.exampledb`), or ``""``."""
    line = getattr(getattr(test, "_refconv_database", None), "error_line", None)
    return line() if line is not None else ""


def _statistics(res: VariantResult) -> str:
    """The one-line account of a variant's run: directed cases, examples, shrinking, rejections,
    time and the worst accepted error."""
    return (f"{res.directed} directed cases" +
            (f" ({len(res.directed_skipped)} outside the support skipped)" if res.directed_skipped else "") +
            f" + {res.examples} examples" + (f" (+{res.shrink_examples} while shrinking)"
                                             if res.shrink_examples else "") +
            f" ({res.passed} passed, {res.invalid} outside the spec's domain "
            f"rejected) in {res.seconds:.2f}s; "
            f"worst accepted error abs={res.worst_abs:.3g} rel={res.worst_rel:.3g}, {res.worst_of_bound:.2g} of the bound")


def _one_example(variant: Variant, stats: dict, last_fail: dict, on_example):
    """The body of the Hypothesis test: check one drawn ``(problem, params)``; a case outside the
    spec's domain is rejected, a pass updates ``stats`` (the largest case, the worst error), a
    failure is kept in ``last_fail`` and raised as :class:`_CaseFailed` so that Hypothesis shrinks
    it (candidates after the first failure count as shrinking)."""
    def one(case):
        problem, params = case
        if on_example:
            on_example("start", None, str(Case(problem, params)))
        try:
            r = check_example(variant, problem, params)
        except InvalidProblem:
            stats["invalid"] += 1
            reject()
        stats["shrink" if last_fail else "examples"] += 1   # after the first failure: shrinking
        if on_example:
            on_example("done", r, None)
        if r.status == "pass":
            if last_fail:   # a shrink candidate that passed
                return
            nbytes = problem.input_nbytes()
            if nbytes >= stats.get("largest_bytes", -1):
                stats["largest_bytes"], stats["largest"] = nbytes, str(Case(problem, params))
            stats["passed"] += 1
            stats["worst_abs"] = max(stats["worst_abs"], r.max_abs)
            stats["worst_rel"] = max(stats["worst_rel"], r.max_rel)
            stats["worst_of_bound"] = max(stats["worst_of_bound"], r.of_bound)
            return
        last_fail["problem"], last_fail["params"], last_fail["result"] = problem, params, r
        raise _CaseFailed(r)
    return one


def _hypothesis_test(variant: Variant, prof: Profile, one, seed: int | None, db: str | None, shrink: bool):
    """``one`` as a Hypothesis test over :func:`refconv.strategies.cases`, with the profile's
    examples, the example database (failures offered again for shrinking: :class:`_Reshrink`) and
    the seed; Hypothesis prints nothing (refconv reports)."""
    phases = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target] + ([Phase.shrink] if shrink else [])
    test = given(cases(variant, prof))(one)
    if seed is not None:
        # ``@seed`` also sets ``database=None`` (Hypothesis's rule: a seeded run is for reproducing, so it
        # neither reads nor writes the database).  refconv's ``--seed`` is for reproducible CI runs that share
        # counterexamples through the database, so the ``settings`` below are applied *after* ``@seed`` and
        # put the database back: a seeded run replays saved failures first and saves the ones it finds.
        test = hyp_seed(seed)(test)
    key = f"refconv:{variant.id}".encode()
    store = raw_store = database(db)
    if store is not None and shrink:
        store = _Reshrink(store, key)
    test = settings(max_examples=prof.max_examples, deadline=None, database=store,
                    suppress_health_check=list(HealthCheck), phases=phases, derandomize=False,
                    print_blob=False, report_multiple_bugs=False,
                    verbosity=Verbosity.quiet)(test)  # refconv reports; no "Falsifying example" or "@seed" advice
    test._hypothesis_internal_database_key = key
    test._refconv_database = raw_store        # its failed saves are reported (_database_error)
    return test


def _run_directed(variant: Variant, prof: Profile, res: VariantResult, stats: dict, last_fail: dict,
                  shrink: bool, on_example) -> None:
    """Run the directed cases in order until one fails (kept in ``last_fail``, shrunk when
    ``shrink``, named in ``res.failed_case``); cases outside the spec's domain are skipped."""
    table = directed_cases(variant, prof)
    res.directed_skipped = list(table.skipped)
    if on_example:   # how many examples to expect: the directed cases, then the drawn ones
        on_example("plan", None, len(table.cases) + prof.max_examples)
    for dc in table.cases:                    # the directed cases first: deterministic verdicts
        if on_example:
            on_example("start", None, str(Case(dc.problem, dc.params)))
        try:
            r = check_example(variant, dc.problem, dc.params)
        except InvalidProblem:               # outside the spec's domain: skipped, not failed
            res.directed_skipped.append(dc.label)
            continue
        res.directed += 1
        if on_example:
            on_example("done", r, None)
        if r.status != "pass":
            problem, params, r = (_shrink_directed(variant, dc.problem, dc.params, r, stats, on_example)
                                  if shrink else (dc.problem, dc.params, r))
            last_fail["problem"], last_fail["params"], last_fail["result"] = problem, params, r
            res.failed_case = dc.label
            return
        stats["worst_abs"] = max(stats["worst_abs"], r.max_abs)
        stats["worst_rel"] = max(stats["worst_rel"], r.max_rel)
        stats["worst_of_bound"] = max(stats["worst_of_bound"], r.of_bound)


def _shrink_directed(variant: Variant, problem, params: dict, result: ExampleResult, stats: dict,
                     on_example=None):
    """A smaller case near a failing directed one that still fails the same way: its sizes, integer
    options and launch parameters moved toward their simplest values, together and one by one
    (:func:`refconv.directed_shrink.shrink_case`); each candidate is counted as shrinking.
    Returns ``(problem, params, result)``."""
    from .directed_shrink import shrink_case

    def run(p, prm):
        if on_example:
            on_example("start", None, str(Case(p, prm)))
        try:
            r = check_example(variant, p, prm)
        except InvalidProblem:
            return None
        stats["shrink"] += 1
        if on_example:
            on_example("done", r, None)
        return r
    p, prm, r = shrink_case(variant, problem, params, result.status, run)
    return (p, prm, r) if r is not None else (problem, params, result)


def save_or_note(res: VariantResult, failures_dir: str, variant: Variant, problem, params: dict,
                 example: ExampleResult, profile: str, backend_options: dict | None = None) -> None:
    """Save the reproducer of ``res``'s minimised case; when that fails (an unwritable or full
    directory) record why in ``res.reproducer_error``.  Never raises: a failure stays a failure,
    and its minimised case stays in ``res.failure`` (matrix, JSON, JUnit)."""
    from .repro import save_reproducer
    try:
        res.reproducer = str(save_reproducer(failures_dir, variant, problem, params, example, profile,
                                             backend_options=backend_options))
    except Exception as e:
        res.reproducer, res.reproducer_error = None, f"{failures_dir}: {type(e).__name__}: {e}"
