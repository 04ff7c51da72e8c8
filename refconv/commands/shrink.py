"""The hang and crash shrinking step of ``refconv check``: each hanging or crashing case is
shrunk from outside the worker (:mod:`refconv.hang_shrink`) and the smaller case replaces the
one found in its result."""
from __future__ import annotations

from .. import registry
from ..console import console
from ..render import esc


def shrink_hangs(results, timeout, budget, bopts, quiet=False, tolerance=None) -> None:
    """Shrink each hanging or crashing case of ``results`` within ``budget`` seconds each and put
    the smaller case (with how it was found) in its result; a shrink that fails keeps the case as
    found and says why in the reason.  ``tolerance``: the run's float verdict, for the workers."""
    from ..hang_shrink import hang_cases, shrink_hang
    for r, c, target in list(hang_cases(results)):
        f = r.failure
        v = registry.get(r.variant)
        with console.status(f"shrinking the {target} of {esc(r.variant)}") as st:
            def on_attempt(n, case, outcome, _st=st, _v=r.variant, _t=target):
                if not quiet:
                    _st.update(f"shrinking the {_t} of {esc(_v)}: attempt {n} ({esc(outcome)}) {esc(case)}")
            try:
                s = shrink_hang(v, c.problem, c.params, timeout=timeout, budget=budget,
                                backend_options=bopts, slowest_example=f.get("slowest_example_s", 0.0),
                                on_attempt=on_attempt, target=target, tolerance=tolerance)
            except Exception as e:  # the hang stays reported as found
                r.reason = f"{r.reason}; not shrunk ({type(e).__name__}: {e})"
                continue
        _record(r, s, target)
        console.print(f"[magenta]{target}[/] {esc(r.variant)}: {esc(r.reason)}", soft_wrap=True)


def _record(r, s, target: str) -> None:
    """Put the shrink ``s`` of ``r``'s case into ``r``: the smaller case (the original kept as
    ``original_case``), how it was found in the reason, and the shrink's numbers."""
    from ..hang_shrink import HANG
    f = r.failure
    how = (f"{s.attempts} attempts in {s.seconds:.0f}s" + ("" if s.complete else ", budget spent")
           + ("" if s.confirmed else "; the smaller case returned under the full timeout, kept the original"))
    if s.case != f["case"]:
        f.update(original_case=f["case"], case=s.case, descriptor=s.problem.descriptor(), params=s.params)
        r.reason = f"{r.reason}; shrunk to {s.case} ({how})"
    else:
        r.reason = f"{r.reason}; no smaller case {'hangs' if target == HANG else 'crashes'} ({how})"
    f["shrink"] = {"attempts": s.attempts, "seconds": round(s.seconds, 2), "complete": s.complete,
                   "confirmed": s.confirmed, "startup_seconds": round(s.startup_seconds, 2)}
