"""Program builds for refconv's OpenCL tooling: one build per (context, source text, options),
the fp64 preamble prepended in one place, the whole build log in the error, kernels retrieved
once, and the work-group limits a ``constraint`` needs."""
from __future__ import annotations

import importlib.resources
import re
import warnings

import numpy as np

from . import _platform
from ._oclgrind import quiet

#: prepended to a source that uses ``double`` (in its text or its ``-D`` options) on a device with
#: cl_khr_fp64.  ``#line 1`` keeps the line numbers of PoCL's and NVIDIA's build logs and of
#: Oclgrind's diagnostics those of the source as written; Oclgrind's *build log* ignores it and
#: counts the two preamble lines (the build error says so).
FP64_PREAMBLE = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#line 1\n"

_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_DOUBLE = re.compile(r"\bdouble\d*\b")

_programs: dict = {}
_kernels: dict = {}
_kernel_source: dict = {}


class OpenCLBuildError(RuntimeError):
    """A program failed to build.  The message (and ``log``) carries the compiler's whole build
    log; ``source_name``, ``options`` and ``target`` say what was built where."""

    def __init__(self, message: str, log: str = "", source_name: str = "", options: tuple = (), target: str = ""):
        super().__init__(message)
        self.log, self.source_name, self.options, self.target = log, source_name, tuple(options), target

    def __reduce__(self):  # picklable across refconv's worker processes
        return (type(self), (str(self), self.log, self.source_name, self.options, self.target))


def package_source(name: str, package: str) -> str:
    """The text of the ``.cl`` file ``name`` shipped inside ``package`` (a package name, e.g. a
    variant module's ``__package__``)."""
    return importlib.resources.files(package).joinpath(name).read_text()


def uses_double(source: str, options=()) -> bool:
    """Whether OpenCL C ``source`` (comments aside) or its build ``options`` name ``double``."""
    return bool(_DOUBLE.search(_COMMENTS.sub(" ", source)) or _DOUBLE.search(" ".join(options)))


def preamble(e, source: str, options=()) -> str:
    """What :func:`program` prepends to ``source``: :data:`FP64_PREAMBLE` where it uses double
    on a device with cl_khr_fp64, else nothing."""
    return FP64_PREAMBLE if uses_double(source, options) and _platform.has_fp64(e.device) else ""


def _build_log(prg, e) -> str:
    import pyopencl as cl
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return prg.get_build_info(e.device, cl.program_build_info.LOG) or ""
    except Exception:
        return ""


def program(e, source: str, options=(), name: str = "<source>"):
    """The program built from OpenCL C ``source`` (text) with ``options`` on ``e``'s context,
    built once per (context, source, options).  A failed build raises :class:`OpenCLBuildError`
    with the whole build log, also on every later request for the same build (not rebuilt)."""
    import pyopencl as cl
    opts = tuple(options)
    key = (id(e.ctx), source, opts)
    with _platform.lock:
        prg = _programs.get(key)
        if isinstance(prg, OpenCLBuildError):
            raise OpenCLBuildError(str(prg), prg.log, prg.source_name, prg.options, prg.target)
        if prg is None:
            pre = preamble(e, source, opts)
            p = cl.Program(e.ctx, pre + source)
            try:
                with warnings.catch_warnings(), quiet(e.target):
                    warnings.simplefilter("ignore")
                    prg = p.build(options=list(opts))
            except cl.Error as err:
                log = _build_log(p, e).strip()
                text = str(err)
                if log and log not in text:
                    text += "\n" + log
                if pre and e.target == "oclgrind":
                    text += (f"\n(Oclgrind's build log counts the {pre.count(chr(10))} lines of refconv's fp64 "
                             "preamble: subtract them from its line numbers)")
                bad = OpenCLBuildError(
                    f"OpenCL build of {name} with options {' '.join(opts) or '(none)'} failed on "
                    f"{e.target} ({e.device.name.strip()}):\n{text}", log or text, name, opts, e.target)
                _programs[key] = bad
                raise bad from err
            _programs[key] = prg
        return prg


def kernel(e, source: str, kernel_name: str, options=(), name: str = "<source>"):
    """The kernel ``kernel_name`` of :func:`program`'s build, retrieved once and reused."""
    key = (id(e.ctx), source, tuple(options), kernel_name)
    with _platform.lock:
        k = _kernels.get(key)
        if k is None:
            import pyopencl as cl
            prg = program(e, source, options, name)
            with quiet(e.target):
                k = _kernels[key] = cl.Kernel(prg, kernel_name)
            _kernel_source[id(k)] = "" if name == "<source>" else name
        return k


def source_name(k) -> str:
    """The source name a kernel from :func:`kernel` was built from ('' for other kernels)."""
    return _kernel_source.get(id(k), "")


def kernel_wg_limit(e, k) -> int:
    import pyopencl as cl
    with quiet(e.target):
        return int(k.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, e.device))


def check_local(e, local: tuple, local_bytes: int = 0, k=None) -> str | None:
    """Why a work-group shape / local-memory size is beyond the device, or beyond kernel ``k``'s
    own work-group limit when given (None if it fits)."""
    d = e.device
    total = int(np.prod(local))
    limit = d.max_work_group_size if k is None else min(d.max_work_group_size, kernel_wg_limit(e, k))
    if total > limit:
        return f"work-group {'x'.join(map(str, local))} = {total} items > {limit} allowed on {e.target}"
    for i, (n, m) in enumerate(zip(local, d.max_work_item_sizes)):
        if n > m:
            return f"work-group dimension {i} = {n} > {m} allowed on {e.target}"
    if local_bytes > d.local_mem_size:
        return f"{local_bytes} bytes of local memory > {d.local_mem_size} on {e.target}"
    return None
