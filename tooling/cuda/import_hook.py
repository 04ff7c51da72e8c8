"""Code run right after a module is imported, by whoever imports it, without importing it here.

The simulator scheduler and the sanitizer both change ``numba.cuda.simulator.kernel`` as soon
as it exists: :func:`after_import` registers such a callback.  One finder at the front of
``sys.meta_path`` wraps the module's loader (found by the other finders) so that, after the
module's code has run, every callback registered for it runs in ascending ``order`` (then in
the order registered): the scheduler (``order=0``) patches the simulator's block manager before
the sanitizer (``order=1``) instruments launches.
"""
from __future__ import annotations

import importlib.abc
import sys
import threading
from typing import Callable

#: module name -> [(order, sequence number, callback)]
_callbacks: dict[str, list] = {}
_busy = threading.local()


def after_import(name: str, callback: Callable, order: int = 0) -> bool:
    """Run ``callback(module)`` right after module ``name`` is executed, at every import of it.
    Returns ``False`` (and registers nothing) when ``name`` is already imported: the caller acts
    on ``sys.modules[name]`` itself.  Registering the same callback again changes nothing."""
    if name in sys.modules:
        return False
    entries = _callbacks.setdefault(name, [])
    if not any(cb is callback for _, _, cb in entries):
        entries.append((order, len(entries), callback))
        entries.sort(key=lambda e: e[:2])
    if not any(isinstance(f, _AfterImportFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImportFinder())
    return True


def pending(name: str) -> list[Callable]:
    """The callbacks registered for ``name``, in the order they will run."""
    return [cb for _, _, cb in _callbacks.get(name, [])]


class _AfterImportFinder(importlib.abc.MetaPathFinder):
    """Finds a module with a registered callback through the other finders and wraps its loader;
    a thread-local guard keeps it from asking itself (or a finder that asks back) again."""

    def find_spec(self, name, path, target=None):
        if name not in _callbacks or getattr(_busy, "on", False):
            return None
        _busy.on = True
        try:
            spec = next((s for f in sys.meta_path if f is not self and hasattr(f, "find_spec")
                         for s in [f.find_spec(name, path, target)] if s is not None), None)
        finally:
            _busy.on = False
        exec_module = getattr(getattr(spec, "loader", None), "exec_module", None)
        if exec_module is None:
            return None
        spec.loader = _Loader(spec.loader, name)
        return spec


class _Loader(importlib.abc.Loader):
    """The found loader, then the callbacks registered for the module."""

    def __init__(self, loader, name: str):
        self.loader, self.name = loader, name

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        for cb in pending(self.name):
            cb(module)
