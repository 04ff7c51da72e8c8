"""``refconv specs``: the reference spec of every op, with the first line of its docstring."""
from __future__ import annotations

from ..console import console


def cmd_specs(ns) -> int:
    """Print ``module.function — summary`` for each op's spec."""
    from .. import ops
    for rec in ops.records():
        fn = rec.spec
        doc = (fn.__doc__ or "").strip().splitlines()
        where = "refconv.specs" if fn.__module__.startswith("refconv.specs.") else fn.__module__
        console.print(f"[bold]{where}.{fn.__name__}[/] — {doc[0] if doc else ''}")
    return 0
