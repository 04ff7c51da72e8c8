"""refconv: a simulator-backed, cross-backend reference framework for GPU convolution kernels.

``from refconv import specs`` gives the pure-NumPy specifications; :class:`Variant`,
:class:`Param`, :class:`Range`, :class:`Backend` and :class:`BackendOption` are what a backend
plugin declares (plugin API :data:`API_VERSION`: ``run(problem, out, **params)``; a
``output="rows"`` variant gets a :class:`RowSink`; :class:`Target` says where a backend runs);
:class:`Problem` is one problem instance with a one-line descriptor.
"""
from .variant import API_VERSION, Backend, BackendOption, MissingTarget, Param, Range, Target, Variant
from .problem import Problem
from .sink import RowSink

__all__ = ["API_VERSION", "Backend", "BackendOption", "MissingTarget", "Param", "Range", "Target",
           "Variant", "Problem", "RowSink", "specs"]
__version__ = "0.1.0"


def __getattr__(name):
    if name == "specs":
        import importlib
        return importlib.import_module("refconv.specs")
    raise AttributeError(f"module 'refconv' has no attribute {name!r}")
