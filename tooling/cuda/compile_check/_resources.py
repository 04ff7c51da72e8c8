"""A numba-cuda kernel's static shared memory, computed on the host from its source without
compiling: every ``cuda.shared.array(shape, dtype)`` in the kernel's body (and in the device
functions it names), the shape and dtype evaluated in the kernel's closure and globals (numba
requires both to be constants there), each array aligned to its element size in the order written.

The compile check records it with every launch it traces (``host_smem``), so a test can hold every
drawable parameter combination to the device's limits without compiling, and hold the compiler's
own count (``ptxas -v``) to it for the kernels it compiles."""
from __future__ import annotations

import ast
import inspect
import textwrap
import types


class NotComputable(Exception):
    """The kernel's source or a shared array's shape / dtype cannot be read on the host."""


def _namespace(fn) -> dict:
    import builtins
    ns = dict(vars(builtins))
    ns.update(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            ns[name] = cell.cell_contents
        except ValueError:
            pass
    return ns


def _itemsize(dt) -> int:
    import numpy as np
    bits = getattr(dt, "bitwidth", None)
    if isinstance(bits, int) and not hasattr(dt, "dtype"):
        return bits // 8
    try:
        return np.dtype(dt).itemsize
    except TypeError:
        return np.dtype(str(dt)).itemsize


def _is_shared_array(call: ast.Call) -> bool:
    f = call.func
    return (isinstance(f, ast.Attribute) and f.attr == "array" and isinstance(f.value, ast.Attribute)
            and f.value.attr == "shared")


def _arrays(fn, seen: set) -> list:
    """``[(bytes, alignment)]`` of the shared arrays of ``fn`` and of the device functions it names."""
    if id(fn) in seen:
        return []
    seen.add(id(fn))
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise NotComputable(f"no source for {fn.__qualname__}: {e}") from None
    ns = _namespace(fn)
    out = []
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_shared_array(node):
            args = list(node.args) + [k.value for k in node.keywords if k.arg in ("shape", "dtype")]
            if len(args) < 2:
                raise NotComputable(f"cuda.shared.array without shape and dtype in {fn.__qualname__}")
            try:
                shape = eval(compile(ast.Expression(args[0]), "<shape>", "eval"), ns)
                dtype = eval(compile(ast.Expression(args[1]), "<dtype>", "eval"), ns)
            except Exception as e:
                raise NotComputable(f"shared array in {fn.__qualname__}: {type(e).__name__}: {e}") from None
            n = 1
            for s in (shape if isinstance(shape, tuple) else (shape,)):
                n *= int(s)
            size = _itemsize(dtype)
            if n > 0:                          # a 0-length array is dynamic shared memory (the launch's)
                out.append((n * size, size))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for name in sorted(names):
        dev = ns.get(name)
        py = getattr(dev, "py_func", None)
        if isinstance(py, types.FunctionType) and py is not fn:
            out += _arrays(py, seen)
    return out


def static_shared_bytes(py_func) -> int:
    """The static shared memory of the kernel ``py_func`` (see the module docstring)."""
    total = 0
    for nbytes, align in _arrays(py_func, set()):
        total = -(-total // align) * align + nbytes
    return total
