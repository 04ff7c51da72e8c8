"""The registry of op records (:class:`refconv.oprecord.OpRecord`).

The built-in records are found by iterating the modules of :mod:`refconv.specs` (each spec module
that defines ``RECORD``), on first use; an op defined elsewhere (a plugin, a test) is added with
:func:`register_op`.  Every lookup of an op in the core goes through :func:`get`.
"""
from __future__ import annotations

import importlib
import pkgutil
import threading

from .oprecord import OpRecord

_RECORDS: dict[str, OpRecord] = {}
_lock = threading.RLock()
_loaded = False


def _load() -> None:
    """Import every module of ``refconv.specs`` once and register the ``RECORD`` it defines.
    (A dynamic import, as for the backends' entry points: the specs import the core, never the
    other way round at module level.)"""
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        pkg = importlib.import_module("refconv.specs")
        found = []
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name.startswith("_"):
                continue
            mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
            rec = getattr(mod, "RECORD", None)
            if isinstance(rec, OpRecord):
                found.append(rec)
        for rec in found:
            _RECORDS.setdefault(rec.name, rec)
        _loaded = True


def register_op(record: OpRecord, *, replace: bool = False) -> OpRecord:
    """Add ``record`` to the registry (``replace=True`` to redefine an op of that name)."""
    if not isinstance(record, OpRecord):
        raise TypeError(f"register_op: expected an OpRecord, got {type(record).__name__}")
    _load()
    with _lock:
        if record.name in _RECORDS and _RECORDS[record.name] is not record and not replace:
            raise ValueError(f"register_op: op {record.name!r} is already registered")
        _RECORDS[record.name] = record
    return record


def unregister_op(name: str) -> None:
    """Remove op ``name`` (a no-op when absent)."""
    _load()
    with _lock:
        _RECORDS.pop(name, None)


def records() -> tuple[OpRecord, ...]:
    """Every registered record, in listing order (``order``, then name)."""
    _load()
    return tuple(sorted(_RECORDS.values(), key=lambda r: (r.order, r.name)))


def names() -> tuple[str, ...]:
    return tuple(r.name for r in records())


def get(op: str) -> OpRecord:
    """The record of ``op``; ``ValueError`` naming the accepted ops when there is none."""
    _load()
    rec = _RECORDS.get(op)
    if rec is None:
        raise ValueError(f"op {op!r} not accepted; accepted: {names()}")
    return rec


def has(op: str) -> bool:
    _load()
    return op in _RECORDS
