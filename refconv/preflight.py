"""Backend preflight steps (``Backend.preflight``, e.g. a compile check) and how
their findings change a variant's verdict, shared by ``refconv check`` and the pytest plugin.

A preflight returns ``{variant_id: [finding dicts]}``.  Findings of class ``*-info`` (e.g.
``compile-info``: registers, shared memory, spills) are reports; any other class is an error that
fails the variant.  The preflight also sees variants that cannot *run* here while their backend
can (a GPU-only kernel under a simulator): a kernel that does not compile for its target is
wrong wherever it is checked, so such a variant turns from ``unavailable`` into ``fail``.
"""
from __future__ import annotations

from typing import Callable, Iterable, Mapping

from . import registry
from .variant import Backend, Variant


def is_error(finding: Mapping) -> bool:
    return not str(finding.get("class", "")).endswith("-info")


def run(variants: Iterable[Variant], options: Mapping,
        on_backend: Callable[[str, int], object] | None = None) -> dict[str, list]:
    """Run each involved backend's preflight over its variants in ``variants``; ``on_backend(name,
    n)`` is called before each (progress).  Backends that cannot run here are skipped."""
    variants = list(variants)
    out: dict[str, list] = {}
    for name in sorted({v.backend for v in variants}):
        b = registry.backends().get(name)
        if not isinstance(b, Backend) or b.preflight is None or _unavailable(name):
            continue
        mine = [v for v in variants if v.backend == name]
        if on_backend is not None:
            on_backend(name, len(mine))
        out.update(b.preflight(mine, options) or {})
    return out


def _unavailable(name: str) -> str | None:
    try:
        return registry.backend_reason(name)
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def apply(result, findings: list) -> None:
    """Attach preflight ``findings`` to a ``VariantResult``; an error finding fails a variant that
    passed or could not run here (a failure or error found by the check itself is kept)."""
    if not findings:
        return
    result.findings = list(findings) + list(result.findings or [])
    errs = [f for f in findings if is_error(f)]
    if not errs and result.status == "unavailable":
        result.reason += f"; its preflight passed ({len(findings)} reports)"
    if errs and result.status in ("pass", "unavailable"):
        e = errs[0]
        classes = list(dict.fromkeys(str(f.get("class")) for f in errs))
        more = (f" (+{len(errs) - 1} more; classes: {', '.join(classes)})" if len(errs) > 1 else "")
        result.status, result.reason = "fail", f"preflight: [{e.get('class')}] {e.get('message')}{more}"
