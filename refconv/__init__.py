"""refconv: a simulator-backed, cross-backend reference framework for GPU convolution kernels.

``from refconv import specs`` gives the pure-NumPy specifications; :class:`Variant`,
:class:`Param`, :class:`Range`, :class:`Backend` and :class:`BackendOption` are what a backend
plugin declares; :class:`Problem` is one problem instance with a one-line descriptor.
"""
from .variant import OPS, Backend, BackendOption, MissingTarget, Param, Range, Variant
from .problem import Problem

__all__ = ["OPS", "Backend", "BackendOption", "MissingTarget", "Param", "Range", "Variant", "Problem", "specs"]
__version__ = "0.1.0"


def __getattr__(name):
    if name == "specs":
        import importlib
        return importlib.import_module("refconv.specs")
    raise AttributeError(f"module 'refconv' has no attribute {name!r}")
