"""Faster scalar casts for simulated kernels: ``float32(x)``, ``uint8(x)``, ``int32(x)`` ...

Inside a simulated kernel a numba type called on a value is ``Type.__call__``, which imports
``numba.core.typing`` and runs an ``ABCMeta`` instance check on every call before it reaches
``cast_python_value`` (``getattr(np, name)(value)``), and kernels cast in their innermost loops.
:func:`install` gives ``Integer`` and ``Float`` a ``__call__`` that casts a plain Python or
NumPy scalar with the same NumPy constructor directly and hands everything else (a signature
such as ``float32(int32, int32)``, an array) to the original: the results are the same objects,
errors and warnings included.
"""
from __future__ import annotations

import numpy as np

_state: dict = {}


def _scalar_types() -> frozenset:
    return frozenset({int, float, bool, complex} | {t for t in np.sctypeDict.values()
                                                     if isinstance(t, type) and issubclass(t, np.generic)})


def install() -> None:
    """Put the fast ``__call__`` on numba's ``Integer`` and ``Float`` types.  Idempotent."""
    if _state:
        return
    from numba.core.types import abstract, scalars
    original = abstract.Type.__call__
    scalar_types = _scalar_types()
    ctors: dict = {}

    def __call__(self, *args):
        if len(args) == 1 and type(args[0]) in scalar_types:
            ctor = ctors.get(self.name)
            if ctor is None:
                ctor = ctors[self.name] = getattr(np, self.name)
            return ctor(args[0])
        return original(self, *args)

    __call__.__doc__ = original.__doc__
    for cls in (scalars.Integer, scalars.Float):
        _state[cls] = cls.__dict__.get("__call__")
        cls.__call__ = __call__


def uninstall() -> None:
    for cls, f in _state.items():
        if f is None:
            del cls.__call__
        else:
            cls.__call__ = f
    _state.clear()
