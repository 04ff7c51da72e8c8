"""Shrinking a hang, or a crash, from outside the process that hangs or dies.

Hypothesis shrinks a case by running smaller ones in the same process, which is impossible once
an example never returns: the worker is killed by the parent (:mod:`refconv.pool`) and only the
hanging case is known.  :func:`shrink_hang` shrinks it greedily, from outside:

* each integer size (a ``Range`` dim) is lowered towards the smallest value its domain allows:
  first an ascending probe ``lo, lo+1, lo+2, lo+4, lo+8, …`` (the first value that still hangs is
  taken), then a bisection between the largest value seen to return and the current one;
* each input fill is set to ``zero.0``;
* each launch parameter is set to its default.

The same search shrinks a *crash* (the worker died: a signal, ``os._exit``, or ``SystemExit`` /
``KeyboardInterrupt`` raised by the variant, see :mod:`refconv.pool`) with ``target=CRASH``: a
candidate is kept when its worker dies, whatever the signal or exit status.

Each candidate runs once (:func:`refconv.checking.check_example`) in a worker process
(:mod:`refconv.worker`) under a time limit.  A candidate *hangs* when it is still running at the
limit, judged as the check judges an example (on the worker's CPU time; one blocked without using
CPU at about 2 × the limit of wall time: :class:`refconv.procs.ExampleClock`); one that returns,
fails or raises does not, and is rejected.  The limit counts only the candidate itself: the worker
first imports everything and computes the spec's result for the original case (a warm-up), says
``ready``, and acknowledges each candidate before running it; start-up has its own generous
limit (``start_timeout``), so a loaded machine cannot make a slow start look like a hang.
Passes over all dims, fills and parameters repeat until a whole pass changes nothing or the
time budget is spent.  A candidate is proposed only inside the variant's declared support
(:func:`refconv.strategies.outside_support`).

The limit per candidate is ``min(timeout, max(10 s, 10 × the slowest example that returned in
the check))``.  When that is below ``timeout``, a smaller hanging case found is run once more
with the full ``timeout``; if it returns then, the original case is kept.  The worker process
is reused while candidates return and replaced after each hang or crash (its runaway threads
and the processes it started die with it: the worker is killed with its process group).

The ``budget`` counts the candidates' own time, not the starting of workers
(``startup_seconds``): on a loaded machine a fresh worker may take many seconds to import its
backends, and one is started after every hang, so counting start-ups would let the load, not
the search, decide where shrinking stops.  Wall time is therefore at most ``budget`` plus one
worker start per hanging or crashing candidate, each bounded by ``start_timeout``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable

from .case import Case
from .problem import Problem
from .strategies import domain, outside_support
from .variant import Range, Variant

HANG, RETURNED, CRASH = "hang", "returned", "crash"


@dataclass
class ShrinkResult:
    """``problem``/``params``: the smallest case found that still hangs (the original one when
    nothing smaller did); ``attempts``: candidates run; ``complete``: ``False`` when the time
    budget ran out first; ``confirmed``: the final case was seen to hang under the full timeout."""

    problem: Problem
    params: dict
    attempts: int = 0
    seconds: float = 0.0
    complete: bool = True
    confirmed: bool = True
    startup_seconds: float = 0.0
    log: list = field(default_factory=list)

    @property
    def case(self) -> str:
        return str(Case(self.problem, self.params))


def _attempter(send, variant_id: str, warm_case: str | None):
    """The worker's ``setup`` (:mod:`refconv.worker`): a candidate ``(descriptor, params)`` is
    acknowledged with ``("started",)``, run once, and answered with ``(RETURNED, status)`` (a
    return, a failure or an exception: not a hang) or ``("invalid", why)``."""
    from .checking import InvalidProblem, check_example
    from .worker import warm_variant
    v = warm_variant(variant_id, warm_case)

    def attempt(task):
        desc, params = task
        send(("started",))
        try:
            return (RETURNED, check_example(v, Problem.parse(desc), params).status)
        except InvalidProblem as e:
            return ("invalid", str(e))
        except Exception as e:  # noqa: BLE001 - any return is "not a hang"
            return (RETURNED, f"raised {type(e).__name__}")
    return attempt


class _Runner:
    """One worker process at a time (:class:`refconv.worker.Worker`); replaced after a hang or a
    crash."""

    def __init__(self, variant_id, backend_options, env, start_timeout=300.0, warm_case=None, tolerance=None):
        self.variant_id, self.warm_case = variant_id, warm_case
        self.options = dict(backend_options=backend_options, env=env, tolerance=tolerance)
        self.start_timeout = start_timeout
        self.worker = None
        self.startup_seconds = 0.0  # time spent starting workers (not charged to the budget)

    def _start(self):
        from .worker import Ended, Worker
        t0 = time.monotonic()
        try:
            w = Worker(_attempter, self.variant_id, self.warm_case, **self.options, start_limit=self.start_timeout,
                       start_says=f"hang shrink: the worker for {self.variant_id} did not start in "
                                  f"{self.start_timeout:g}s")
            got = w.wait()
            if isinstance(got, Ended):
                raise RuntimeError(got.reason if got.kind == HANG else f"hang shrink: the worker for "
                                   f"{self.variant_id} died while starting (exit code {got.exitcode})")
            self.worker = w
        finally:
            self.startup_seconds += time.monotonic() - t0

    def run(self, problem: Problem, params: dict, limit: float) -> str:
        """Run one candidate: ``HANG`` (still running after ``limit`` seconds, counted from the worker's
        acknowledgement and judged as the check judges an example: :class:`refconv.procs.ExampleClock`),
        ``CRASH`` (the worker died), ``RETURNED`` or ``"invalid"``."""
        from .worker import Ended
        if self.worker is None or not self.worker.proc.is_alive():
            self._start()
        w = self.worker
        w.idle(self.start_timeout, "hang: the candidate was not acknowledged")   # then it starts
        w.send((problem.descriptor(), params))
        got = w.wait()
        if not isinstance(got, Ended):
            w.example(limit)                   # judged on CPU time, as in the check (refconv.pool)
            got = w.wait()
        if isinstance(got, Ended):            # killed: a hang, or it died: a crash
            self.worker = None
            return HANG if got.kind == "hang" else CRASH
        return got[0]

    def close(self):
        if self.worker is not None:
            self.worker.kill()
        self.worker = None


def _ladder(lo: int, cur: int) -> list[int]:
    """Ascending probe values below ``cur``: lo, lo+1, lo+2, lo+4, lo+8, …"""
    vals = {lo, lo + 1, lo + 2} | {lo + (1 << i) for i in range(2, 62) if lo + (1 << i) < cur}
    return sorted(x for x in vals if x < cur)


def shrink_hang(variant: Variant, problem: Problem, params: dict, *, timeout: float, budget: float,
                backend_options: dict, slowest_example: float = 0.0, env: dict | None = None,
                on_attempt: Callable[[int, str, str], None] | None = None, target: str = HANG,
                tolerance: str | None = None) -> ShrinkResult:
    """Shrink the hanging (``target=HANG``) or crashing (``target=CRASH``) case ``(problem, params)``
    of ``variant`` (see the module docstring).

    ``budget``: seconds the search may take (a candidate already running is let finish);
    ``on_attempt(n, case, outcome)`` is called after each candidate (progress); ``tolerance``: the
    float verdict of the candidates' workers (the run's; ``None``: their default)."""
    if budget <= 0:
        raise ValueError(f"budget must be > 0 seconds, got {budget}")
    if timeout <= 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
    if target not in (HANG, CRASH):
        raise ValueError(f"target must be {HANG!r} or {CRASH!r}, got {target!r}")
    from .procs import worker_env
    limit = min(timeout, max(10.0, 10.0 * slowest_example))
    runner = _Runner(variant.id, backend_options, env if env is not None else worker_env(),
                     warm_case=problem.descriptor(), tolerance=tolerance)
    res = ShrinkResult(problem, dict(params))
    search = _Search(variant, runner, res, target, limit, budget, on_attempt)
    try:
        changed = True
        while changed and not search.out_of_time():
            changed = search.one_pass()
        res.complete = not search.out_of_time()
        if target == HANG and limit < timeout and (res.problem != problem or res.params != params):
            res.confirmed = runner.run(res.problem, res.params, timeout) == HANG
            if not res.confirmed:
                res.problem, res.params = problem, dict(params)
    finally:
        runner.close()
        res.seconds = time.monotonic() - search.t0
        res.startup_seconds = runner.startup_seconds
    return res


class _Search:
    """The greedy search of :func:`shrink_hang` over ``res`` (the smallest case seen to reach
    ``target`` so far): each candidate runs once (``seen``), under ``limit`` seconds, while the
    ``budget`` (start-ups not counted) lasts."""

    def __init__(self, variant: Variant, runner: _Runner, res: ShrinkResult, target: str, limit: float,
                 budget: float, on_attempt):
        self.variant, self.runner, self.res, self.target = variant, runner, res, target
        self.limit, self.budget, self.on_attempt = limit, budget, on_attempt
        self.seen: dict[str, str] = {}
        self.t0 = time.monotonic()

    def out_of_time(self) -> bool:
        return time.monotonic() - self.t0 - self.runner.startup_seconds >= self.budget

    def one_pass(self) -> bool:
        """Every size dim, then every fill, then every launch param once; whether any changed."""
        res, changed = self.res, False
        for k in list(res.problem.dims):
            changed |= self.shrink_size(k)
        for name in list(res.problem.fills):
            changed |= not self.out_of_time() and self.simplify_fill(name)
        for p in self.variant.params:
            changed |= not self.out_of_time() and self.default_param(p.name, p.default)
        return changed

    def attempt(self, p: Problem, ps: dict) -> str:
        """The outcome of the candidate ``(p, ps)``: ``invalid`` outside the variant's support,
        else what its run did (each case is run at most once)."""
        key = str(Case(p, ps))
        if key in self.seen:
            return self.seen[key]
        if outside_support(self.variant, p, ps) is not None:
            self.seen[key] = "invalid"
            return "invalid"
        outcome = self.runner.run(p, ps, self.limit)
        self.res.attempts += 1
        self.seen[key] = outcome
        self.res.log.append((key, outcome))
        if self.on_attempt:
            self.on_attempt(self.res.attempts, key, outcome)
        return outcome

    def _with_dim(self, k, val) -> Problem:
        return replace(self.res.problem, dims={**self.res.problem.dims, k: val})

    def shrink_size(self, k) -> bool:
        """Size dim ``k`` down the ladder from its lower end to the first size that still reaches
        the target, then bisect between the largest size that returned and it."""
        res, target = self.res, self.target
        dom = domain(self.variant, k)
        cur = res.problem.dims[k]
        if not isinstance(dom, Range) or not isinstance(cur, int) or cur <= dom.lo:
            return False
        start, best_returned = cur, None
        for x in _ladder(dom.lo, cur):
            if self.out_of_time():
                break
            o = self.attempt(self._with_dim(k, x), res.params)
            if o == target:
                res.problem, cur = self._with_dim(k, x), x
                break
            if o == RETURNED:
                best_returned = x
        while best_returned is not None and cur - best_returned > 1 and not self.out_of_time():
            mid = (best_returned + cur) // 2
            o = self.attempt(self._with_dim(k, mid), res.params)
            if o == target:
                res.problem, cur = self._with_dim(k, mid), mid
            elif o == RETURNED:
                best_returned = mid
            else:
                break
        return cur < start

    def simplify_fill(self, name) -> bool:
        """Input ``name`` all zeros, kept when the case still reaches the target."""
        res = self.res
        if res.problem.fills[name] == "zero.0":
            return False
        cand = replace(res.problem, fills={**res.problem.fills, name: "zero.0"})
        if self.attempt(cand, res.params) == self.target:
            res.problem = cand
            return True
        return False

    def default_param(self, name, default) -> bool:
        """Launch param ``name`` at its default, kept when the case still reaches the target."""
        res = self.res
        if res.params.get(name) == default:
            return False
        ps = {**res.params, name: default}
        if self.attempt(res.problem, ps) == self.target:
            res.params = ps
            return True
        return False


def hang_cases(results):
    """``(result, Case, target)`` for every hanging or crashing variant whose case was seen."""
    for r in results.values():
        f = r.failure or {}
        if r.status == "error" and r.reason.startswith(("hang", "crash")) and f.get("case"):
            yield r, Case.parse(f["case"]), (CRASH if r.reason.startswith("crash") else HANG)
