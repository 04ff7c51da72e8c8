"""Findings: problems a backend's own instrumentation notices while a variant runs.

A backend (e.g. a sanitizer wrapped around a simulator, or a checking device platform) calls
:func:`report` during ``Variant.run``; the checker collects the findings of each example and
treats any finding as a failure of that example, whatever the output values.  Each finding is a
plain dict with at least ``class`` (e.g. ``"shared-race"``) and ``message``; further keys say where
(``kernel``, ``block``, ``thread``, ``array``, ``index``, ``line`` ...).
"""
from __future__ import annotations

import contextlib
import threading

_local = threading.local()


def report(cls: str, message: str, **where) -> None:
    """Record one finding for the example being checked (ignored outside a collection)."""
    stack = getattr(_local, "stack", None)
    if stack:
        stack[-1].append({"class": cls, "message": message, **where})


def collecting() -> bool:
    """True inside a :func:`collect` on this thread (a check is collecting findings): instrumentation
    that also warns or logs outside a check (e.g. a simulator's sanitizer) asks this instead of
    looking at the collection stack."""
    return bool(getattr(_local, "stack", None))


@contextlib.contextmanager
def collect():
    """Collect the findings reported inside the ``with`` block into the yielded list."""
    if not hasattr(_local, "stack"):
        _local.stack = []
    found: list = []
    _local.stack.append(found)
    try:
        yield found
    finally:
        _local.stack.pop()
