"""Undefined lanes made loud on every target: before a kernel launched through the kit is
compiled (GPU) or interpreted, each masked ``tl.load`` without ``other=`` in it -- and in the
``@triton.jit`` functions it calls by name -- is given ``other=`` poison of the pointer's element
type: NaN for floating types, the bytes 0xA5 repeated for integers (uint8 165, int32
-1515870811: :data:`refconv.tooling.triton.memcheck.POISON_BYTE`), 0 for bool and pointer
elements (no loud value).  Triton leaves those lanes undefined; the GPU happens to give 0 and
the plain interpreter gives 0, so without this a kernel that sums them passes.

How: the function's source (``inspect.getsourcelines``) is parsed; at every such call the text
``, other=<poison>(<pointer expression>)`` is inserted after its last argument (an explicit
``other=None`` is replaced), so every line keeps its number.  The edited function is compiled
without its decorators under the file name ``<file> [refconv: undefined lanes of <function>
poisoned]`` (:func:`original_file` maps it back), registered in :mod:`linecache` so that Triton
(which re-reads a kernel's source, for the GPU compiler and for the interpreter alike) sees the
edited text, and executed in a copy of the original function's globals, taken at its first
launch (its closure variables added; a global rebound later is not seen), where the poison
helper and the rewritten twins of the ``@triton.jit`` functions it calls are bound.  A function
with nothing to rewrite, itself or below, is handed back as it is.  The pointer expression is
evaluated a second time for its type only (Triton expressions have no side effects; the GPU
compiler drops the copy).

Left as they are: loads without a mask (block pointers with ``boundary_check`` among them: their
padding is Triton's ``padding_option``), loads with ``**kwargs``, helpers reached through an
attribute (``mod.helper(...)``), and functions whose source Python cannot read.  Under the
interpreter the memory checker poisons what this leaves (:mod:`.memcheck`)."""
from __future__ import annotations

import __future__
import ast
import inspect
import linecache

#: the name the poison helper is bound to in a rewritten function's globals
POISON_NAME = "_refconv_poison_of"

#: appended to a rewritten function's file name (its code's ``co_filename``), with the function's
#: qualified name: one :mod:`linecache` entry per function
SUFFIX = " [refconv: undefined lanes of {} poisoned]"

#: the int64 whose low bytes are 0xA5 0xA5 ...: converted to an integer element type, it keeps
#: that type's width of it (uint8 165, int16 -23131, int32 -1515870811, uint64 0xA5A5...)
POISON_INT64 = int.from_bytes(b"\xa5" * 8, "little", signed=True)

_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag


def _poison_of(pointer):
    # the element type is known when the kernel is compiled: one branch is kept (GPU); the
    # interpreter runs this as Python.  (A jitted function reads no plain global: the int64 is
    # POISON_INT64 written out.)
    ty: tl.constexpr = pointer.dtype.element_ty  # noqa: F821 - tl is bound in the helper's globals
    if ty.is_floating():
        return tl.full((), float("nan"), ty)  # noqa: F821
    elif ty.is_int() and ty.primitive_bitwidth >= 8:
        return tl.full((), -6510615555426900571, tl.int64).to(ty)  # noqa: F821 - POISON_INT64
    elif ty.is_ptr():
        return tl.full((), 0, tl.int64).to(ty, bitcast=True)  # noqa: F821
    else:
        return tl.full((), 0, ty)  # noqa: F821


_helper = {}


def poison_helper():
    """The ``@triton.jit`` poison helper (a compiled-mode ``JITFunction``: the kit runs it
    interpreted inside an interpreted launch), made once."""
    if "jit" not in _helper:
        import triton.language as tl
        from triton.runtime.jit import JITFunction
        _poison_of.__globals__["tl"] = tl
        _helper["jit"] = JITFunction(_poison_of)
    return _helper["jit"]


# ----------------------------------------------------------------------------- finding the loads

def _is_triton_module(obj) -> bool:
    return inspect.ismodule(obj) and obj.__name__ in ("triton.language", "triton.language.core")


def _resolve(node, scope):
    """The object a ``Name`` / ``Attribute`` chain of modules names in ``scope``, or None."""
    if isinstance(node, ast.Name):
        return scope.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, scope)
        if inspect.ismodule(base):
            return getattr(base, node.attr, None)
    return None


def _is_load(func, scope) -> bool:
    if isinstance(func, ast.Attribute) and func.attr == "load":
        return _is_triton_module(_resolve(func.value, scope))
    if isinstance(func, ast.Name):
        obj = scope.get(func.id)
        return getattr(obj, "__name__", None) == "load" and \
            str(getattr(obj, "__module__", "")).startswith("triton.language")
    return False


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _edits(fdef: ast.FunctionDef, scope) -> list:
    """``(line, col_start, col_end, text)`` edits (byte columns of the parsed text) giving every
    masked ``tl.load`` without ``other=`` in ``fdef`` a poison ``other=``."""
    edits = []
    for node in ast.walk(fdef):
        if not (isinstance(node, ast.Call) and _is_load(node.func, scope)):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            continue                                   # *args / **kwargs: not known here
        kw = {k.arg: k.value for k in node.keywords}
        pos = dict(zip(("pointer", "mask", "other"), node.args))
        pointer, mask, other = (kw.get(n, pos.get(n)) for n in ("pointer", "mask", "other"))
        if pointer is None or mask is None or _is_none(mask) or (other is not None and not _is_none(other)):
            continue
        poison = f"{POISON_NAME}({ast.unparse(pointer)})"
        if other is not None:                          # other=None, written out
            edits.append((other.lineno, other.col_offset, other.end_col_offset, poison))
        else:
            last = max((*node.args, *node.keywords), key=lambda n: (n.end_lineno, n.end_col_offset))
            edits.append((last.end_lineno, last.end_col_offset, last.end_col_offset, f", other={poison}"))
    return edits


def _apply(lines: list, edits: list, shift: int) -> list:
    """``lines`` (of the function's source) with ``edits`` done; an edit's line is ``shift`` more
    than its index + 1 (the parse's wrapper line)."""
    lines = list(lines)
    for line, start, end, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        i = line - 1 - shift
        b = lines[i].encode()
        lines[i] = (b[:start] + text.encode() + b[end:]).decode()
    return lines


def _parse(lines: list):
    """(module, shift): the function's source parsed where it stands (an indented function --
    a method, a kernel defined inside a test -- under an ``if 1:`` line, ``shift`` 1), so that
    byte columns are those of the file."""
    text = "".join(lines)
    if lines and lines[0][:1] in (" ", "\t"):
        return ast.parse("if 1:\n" + text), 1
    return ast.parse(text), 0


def _funcdef(tree, name: str):
    return next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == name), None)


# ----------------------------------------------------------------------------- twins

#: id(original Python function) -> (original, rewritten function or the original itself)
_DONE: dict = {}
#: id(original jit object) -> (original, twin or the original itself)
_TWINS: dict = {}
#: rewritten file name -> original file name
ORIGINAL: dict = {}


def original_file(filename: str) -> str:
    """The file a rewritten function came from (``filename`` itself for any other)."""
    return ORIGINAL.get(filename, filename)


def _jit_object(obj) -> bool:
    """A ``@triton.jit`` function object (compiled or interpreted) or a kit ``LazyKernel``."""
    return type(obj).__name__ in ("JITFunction", "InterpretedFunction", "LazyKernel") and \
        inspect.isfunction(getattr(obj, "fn", None))


def _jit_options(obj) -> dict:
    """The options ``obj`` was made with, for its twin."""
    name = type(obj).__name__
    if name == "LazyKernel":
        return dict(obj.kw)
    if name == "InterpretedFunction":
        return dict(getattr(obj, "kwargs", {}))
    opts = {k: getattr(obj, k) for k in ("version", "do_not_specialize", "do_not_specialize_on_alignment",
                                          "debug", "noinline", "launch_metadata") if hasattr(obj, k)}
    if hasattr(obj, "_repr"):
        opts["repr"] = obj._repr
    return opts


def twin(obj):
    """``obj`` (a ``JITFunction``, ``InterpretedFunction`` or ``LazyKernel``) made anew, of the
    same class and options, from :func:`poisoned` of its function; ``obj`` itself when that
    changes nothing (or ``obj`` is anything else)."""
    if not _jit_object(obj):
        return obj
    done = _TWINS.get(id(obj))
    if done is not None and done[0] is obj:
        return done[1]
    new_fn = poisoned(obj.fn)
    made = obj if new_fn is obj.fn else type(obj)(new_fn, **_jit_options(obj))
    _TWINS[id(obj)] = (obj, made)
    return made


_IN_PROGRESS: set = set()


def poisoned(fn):
    """``fn`` (a kernel's Python function) with every masked ``tl.load`` without ``other=`` --
    its own and those of the ``@triton.jit`` functions it calls by name -- given a poison
    ``other=``; ``fn`` itself when there is none, or when its source cannot be read.  Made once
    per function."""
    done = _DONE.get(id(fn))
    if done is not None and done[0] is fn:
        new = done[1]
        if new is not fn:
            _register(new)
        return new
    if id(fn) in _IN_PROGRESS:                 # a function that calls itself: as it is, this time
        return fn
    _IN_PROGRESS.add(id(fn))
    try:
        new = _rewrite(fn)
    finally:
        _IN_PROGRESS.discard(id(fn))
    _DONE[id(fn)] = (fn, new)
    return new


_SOURCES: dict = {}


def _register(fn) -> None:
    """(Re-)enter a rewritten function's text in :mod:`linecache` (a ``clearcache`` drops it)."""
    name = fn.__code__.co_filename
    if name not in linecache.cache and name in _SOURCES:
        text = _SOURCES[name]
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)


def _rewrite(fn):
    try:
        lines, first = inspect.getsourcelines(fn)
        tree, shift = _parse(lines)
    except (OSError, TypeError, SyntaxError):
        return fn
    fdef = _funcdef(tree, fn.__name__)
    if fdef is None:
        return fn
    scope = dict(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                scope[name] = cell.cell_contents
            except ValueError:                # an empty cell
                pass
    # the jit functions it calls by name, rewritten first
    called = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    twins = {name: twin(scope[name]) for name in called if name in scope and _jit_object(scope[name])}
    twins = {name: t for name, t in twins.items() if t is not scope[name]}
    edits = _edits(fdef, scope)
    if not edits and not twins:
        return fn
    scope.update(twins)
    if edits:
        scope[POISON_NAME] = poison_helper()
    new_lines = _apply(lines, edits, shift)
    filename = fn.__code__.co_filename + SUFFIX.format(fn.__qualname__)
    # the text Triton will read back: the rewritten function at its own lines
    text = "\n" * (first - 1) + "".join(new_lines)
    _SOURCES[filename] = text
    ORIGINAL[filename] = fn.__code__.co_filename
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    new_tree, shift = _parse(new_lines)
    new_def = _funcdef(new_tree, fn.__name__)
    new_def.decorator_list = []
    ast.increment_lineno(new_def, first - 1 - shift)
    module = ast.Module(body=[new_def], type_ignores=[])
    code = compile(module, filename, "exec", flags=fn.__code__.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    namespace: dict = {}
    exec(code, scope, namespace)               # noqa: S102 - the kernel's own source, edited
    new = namespace[fn.__name__]
    new.__defaults__, new.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    new.__qualname__, new.__doc__ = fn.__qualname__, fn.__doc__
    new.__refconv_original__ = fn
    return new


def sites(fn) -> list:
    """The lines (of ``fn``'s file) of the masked ``tl.load`` calls without ``other=`` in ``fn``
    itself, which :func:`poisoned` rewrites."""
    lines, first = inspect.getsourcelines(fn)
    tree, shift = _parse(lines)
    fdef = _funcdef(tree, fn.__name__)
    scope = dict(fn.__globals__)
    return sorted({first + line - 1 - shift for line, *_ in _edits(fdef, scope)})


__all__ = ["poisoned", "twin", "poison_helper", "original_file", "sites", "POISON_NAME", "POISON_INT64", "SUFFIX"]
