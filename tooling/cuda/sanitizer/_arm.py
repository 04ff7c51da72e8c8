"""Arming the sanitizer: :func:`enable` as soon as numba-cuda's simulator is imported, by whoever
imports it, without importing it here.

The sanitizer is on by default under the simulator (docs/sanitizer.md), so every ``refconv``
process that configures the ``numba_cuda`` backend asks for it -- also a run that checks only
OpenCL or numba CPU variants, which never imports ``numba.cuda``.  Arming costs nothing there:
the instrumentation is installed when ``numba.cuda.simulator.kernel`` is first imported (the
built-in backend, a plugin importing ``numba.cuda`` itself, a test), or at once when it is
already imported.
"""
from __future__ import annotations

import importlib.abc
import sys
import threading

_KERNEL_MODULE = "numba.cuda.simulator.kernel"
_state = {"armed": False}
_busy = threading.local()


class _ArmFinder(importlib.abc.MetaPathFinder):
    """Wraps the loader of ``numba.cuda.simulator.kernel`` so that :func:`enable` runs right
    after the module is executed.  Other finders that wrap the same module (the simulator
    scheduler's) are asked first and keep their wrapping; a guard stops them from asking this
    finder back."""

    def find_spec(self, name, path, target=None):
        if name != _KERNEL_MODULE or getattr(_busy, "on", False):
            return None
        _busy.on = True
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            _busy.on = False
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:  # pragma: no cover
            return None

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                exec_module(module)
                if _state["armed"]:
                    from ._core import enable
                    enable()

        spec.loader = _Loader()
        return spec


def arm() -> None:
    """Enable the sanitizer now if the simulator is imported, else as soon as it is.  Idempotent;
    :func:`disarm` undoes it."""
    _state["armed"] = True
    if _KERNEL_MODULE in sys.modules:
        from numba.cuda.core import config
        if config.ENABLE_CUDASIM:        # numba.cuda already imported in GPU mode (a plugin did it):
            from ._core import enable    # nothing to arm; the backend's reason() reports the conflict
            enable()
        return
    if not any(isinstance(f, _ArmFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _ArmFinder())


def disarm() -> None:
    """Do not enable the sanitizer at the simulator's import (an enabled one stays enabled)."""
    _state["armed"] = False


def armed() -> bool:
    """True after :func:`arm` (and before :func:`disarm`)."""
    return _state["armed"]
