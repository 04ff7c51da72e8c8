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

import sys

from ..import_hook import after_import
from ..sim_scheduler import ARM_ORDER as _SCHEDULER_ORDER

_KERNEL_MODULE = "numba.cuda.simulator.kernel"
#: :func:`arm`'s place among the callbacks run at the simulator's import: after the scheduler's
ARM_ORDER = _SCHEDULER_ORDER + 1
_state = {"armed": False}


def _on_import(module) -> None:
    """Run after the simulator's kernel module is executed (after the scheduler's patch):
    :func:`enable` while armed."""
    if _state["armed"]:
        from ._core import enable
        enable()


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
    after_import(_KERNEL_MODULE, _on_import, order=ARM_ORDER)


def disarm() -> None:
    """Do not enable the sanitizer at the simulator's import (an enabled one stays enabled)."""
    _state["armed"] = False


def armed() -> bool:
    """True after :func:`arm` (and before :func:`disarm`)."""
    return _state["armed"]
