"""What a numba-cuda kernel compiles from, as a hashable fingerprint, computed before compiling.

Two launches whose kernels have equal fingerprints (and equal argument types and options) compile
to the same code, so the compile check compiles one of them (and a later run finds the result in
its disk cache, :mod:`._cache`).  The fingerprint covers everything ``compile_ptx`` reads:

* the kernel's code object: bytecode, names, constants (nested code objects recursively; a
  frozenset's members sorted, so the fingerprint does not depend on the hash seed); not its file
  name or line numbers (those only place messages);
* the values of its closure cells and of every global name its code (nested code included)
  reads: numbers, strings, NumPy and numba types and scalars, arrays (their bytes), tuples,
  other kernels and device functions (their own fingerprints), ``@intrinsic`` functions (their
  definition's fingerprint), functions (their code), classes and modules (by qualified name;
  a module outside numba, NumPy and the standard library also by the values of the attributes
  the code names).

A value of any other kind makes the kernel *unfingerprintable* (:class:`Unfingerprintable`): it is
then compiled for each launch and never cached, so an unknown value can cost time but never hide a
compile."""
from __future__ import annotations

import hashlib
import sys
import types

#: modules whose contents are fixed by the installed versions (part of the cache key): named only
_FIXED_ROOTS = ("numba", "numpy", "math", "cmath", "operator", "builtins", "llvmlite", "cuda")
_MAX_DEPTH = 12


class Unfingerprintable(Exception):
    """A kernel reads a value the fingerprint cannot describe."""


def _code_names(code) -> set:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _const(c, depth):
    if isinstance(c, types.CodeType):
        return _code(c, depth)
    if isinstance(c, frozenset):
        return ("frozenset", sorted(repr(_const(x, depth)) for x in c))
    if isinstance(c, tuple):
        return ("tuple", [_const(x, depth) for x in c])
    return (type(c).__name__, repr(c))


def _code(code, depth=0):
    return ("code", code.co_code.hex(), list(code.co_names), list(code.co_varnames), list(code.co_freevars),
            list(code.co_cellvars), code.co_argcount, code.co_kwonlyargcount, code.co_flags,
            [_const(c, depth) for c in code.co_consts])


def _is_fixed_module(name: str) -> bool:
    root = name.split(".")[0]
    return root in _FIXED_ROOTS or root in sys.stdlib_module_names


def _function(fn, depth, seen) -> tuple:
    if id(fn) in seen:
        return ("recursive", fn.__qualname__)
    seen = seen | {id(fn)}
    code = fn.__code__
    cells = []
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            v = cell.cell_contents
        except ValueError:                       # an empty cell (a name bound later)
            raise Unfingerprintable(f"closure cell {name!r} of {fn.__qualname__} is empty")
        cells.append((name, value(v, depth + 1, seen)))
    g = fn.__globals__
    names = _code_names(code)
    glob = []
    for n in sorted(names):
        if n in g:
            glob.append((n, value(g[n], depth + 1, seen, names)))
    defaults = [value(d, depth + 1, seen) for d in (fn.__defaults__ or ())]
    return ("function", _code(code), cells, glob, defaults)


def value(v, depth=0, seen=frozenset(), attrs=None):
    """A JSON-able description of ``v`` that equals another's exactly when numba compiles both the
    same; ``attrs``: the names the reading code uses (a module's attributes among them)."""
    if depth > _MAX_DEPTH:
        raise Unfingerprintable("values nested too deep")
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return (type(v).__name__, repr(v))
    import numpy as np
    if isinstance(v, (np.generic, np.dtype)):
        return ("np", type(v).__name__, repr(v), str(getattr(v, "dtype", "")))
    if isinstance(v, np.ndarray):
        return ("ndarray", str(v.dtype), list(v.shape), list(v.strides),
                hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest())
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, [value(x, depth + 1, seen, attrs) for x in v])
    if isinstance(v, types.ModuleType):
        if _is_fixed_module(v.__name__):
            return ("module", v.__name__)
        return ("module", v.__name__, [(a, value(getattr(v, a), depth + 1, seen, attrs))
                                       for a in sorted(attrs or ()) if hasattr(v, a)])
    from numba.core import types as nbtypes
    if isinstance(v, nbtypes.Type):
        return ("nbtype", str(v))
    py_func = getattr(v, "py_func", None)
    if isinstance(py_func, types.FunctionType):                  # a kernel or device function
        opts = getattr(v, "targetoptions", {}) or {}
        return ("dispatcher", type(v).__name__, sorted((k, repr(o)) for k, o in opts.items()),
                _function(py_func, depth + 1, seen))
    defn = getattr(v, "_defn", None)
    if isinstance(defn, types.FunctionType):                     # numba.extending.intrinsic
        return ("intrinsic", getattr(v, "_name", ""), _function(defn, depth + 1, seen))
    if isinstance(v, types.FunctionType):
        return _function(v, depth + 1, seen)
    if isinstance(v, (types.BuiltinFunctionType, type)):
        mod = getattr(v, "__module__", "") or ""
        if isinstance(v, type) and not _is_fixed_module(mod):
            raise Unfingerprintable(f"class {mod}.{v.__qualname__}")
        return ("named", mod, getattr(v, "__qualname__", repr(v)))
    mod = type(v).__module__ or ""
    if mod.split(".")[0] == "numba":                             # stubs (cuda.threadIdx, cuda.atomic ...)
        return ("numba-object", mod, type(v).__qualname__, getattr(v, "__name__", None) or repr(v))
    raise Unfingerprintable(f"a {type(v).__module__}.{type(v).__qualname__} value")


def fingerprint(disp) -> str:
    """The sha256 of kernel (dispatcher) ``disp``'s code, closure and the globals it reads;
    :class:`Unfingerprintable` when one of them cannot be described (see the module docstring)."""
    desc = value(disp)
    return hashlib.sha256(repr(desc).encode()).hexdigest()
