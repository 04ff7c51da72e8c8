"""The registry of op records (:class:`refconv.specs.record.OpRecord`).

The built-in records are ``refconv.specs.RECORDS`` (imported statically: the spec layer is the
ground floor and imports nothing of the core); an op defined elsewhere (a plugin, a test) is
added with :func:`register_op`.  Every lookup of an op in the core goes through :func:`get`.
"""
from __future__ import annotations

import threading

from . import specs
from .specs.record import OpRecord

_lock = threading.RLock()
_RECORDS: dict[str, OpRecord] = {r.name: r for r in specs.RECORDS}


def register_op(record: OpRecord, *, replace: bool = False) -> OpRecord:
    """Add ``record`` to the registry (``replace=True`` to redefine an op of that name)."""
    if not isinstance(record, OpRecord):
        raise TypeError(f"register_op: expected an OpRecord, got {type(record).__name__}")
    with _lock:
        if record.name in _RECORDS and _RECORDS[record.name] is not record and not replace:
            raise ValueError(f"register_op: op {record.name!r} is already registered")
        _RECORDS[record.name] = record
    return record


def unregister_op(name: str) -> None:
    """Remove op ``name`` (a no-op when absent)."""
    with _lock:
        _RECORDS.pop(name, None)


def records() -> tuple[OpRecord, ...]:
    """Every registered record, in listing order (``order``, then name)."""
    with _lock:
        return tuple(sorted(_RECORDS.values(), key=lambda r: (r.order, r.name)))


def names() -> tuple[str, ...]:
    return tuple(r.name for r in records())


def get(op: str) -> OpRecord:
    """The record of ``op``; ``ValueError`` naming the accepted ops when there is none."""
    rec = _RECORDS.get(op)
    if rec is None:
        raise ValueError(f"op {op!r} not accepted; accepted: {names()}")
    return rec


def has(op: str) -> bool:
    return op in _RECORDS
