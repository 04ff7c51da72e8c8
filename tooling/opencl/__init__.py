"""refconv's OpenCL tooling: the public module for pyopencl backends (plugin API), also
importable as :mod:`refconv.opencl`.  The built-in ``opencl`` backend uses exactly this module.
Its parts: ``_platform`` (targets, ICD setup, context and queue), ``_build`` (build cache, fp64
preamble, build logs, work-group limits, ``.cl`` files shipped in a package), ``_buffers``
(inputs, scratch, the poisoned output transfer, memory fit), ``_oclgrind`` (diagnostics as
findings) and ``_bench`` (profiling events for ``refconv bench``).

What a pyopencl plugin gets from it (see docs/plugins.md, *Running, sanitizing and
compile-checking your own kernels*, section OpenCL):

* **the selected target** -- :func:`env` is the context, in-order queue and device of the target
  that ``--opencl pocl|oclgrind|nvidia|auto`` (``REFCONV_OPENCL``) selected, the same one the
  built-in variants run on.  Pass :func:`backend_fields` into your ``Backend`` so that
  availability, ``refconv list``'s description, the device limits, the bench hooks and the
  option itself follow that target even where the built-in backend is not installed;
* **builds** -- :func:`program` / :func:`kernel` build OpenCL C source text once per (context,
  source, options), with ``cl_khr_fp64`` enabled where the device has it (:data:`FP64_PREAMBLE`);
  a failed build raises :class:`OpenCLBuildError` carrying the compiler's whole log;
* **the poisoned output** -- :func:`output` (or ``out=`` with :data:`OUT` in :func:`launch`) gives
  a device buffer that starts as a copy of the checker's ``out``, so elements your kernel never
  writes come back holding the poison and are reported ``never written``;
* **launches** -- :func:`launch` runs one kernel, waits for it, records its profiling interval
  for ``refconv bench`` and, on Oclgrind, turns Oclgrind's diagnostics (data races, invalid
  reads / writes, barrier divergence, API errors) into findings that fail the example, with
  kernel, work-item and source line.  For several launches, wrap them in :func:`diagnosed` and
  launch through :func:`timed`;
* **constraints** -- :func:`check_local` and :func:`fits_memory` say why a work-group shape or a
  problem does not fit the device (``None`` when it does), for a variant's ``constraint``.
"""
from __future__ import annotations

import contextlib

import numpy as np

from refconv.timing import BenchHooks
from refconv.variant import KIT_FIELDS_ATTR, BackendOption

from . import _build, _buffers, _oclgrind, _platform
from ._bench import bench_copy, bench_simulated, input_buffer, output_buffer, scratch_buffer, timed
from ._build import FP64_PREAMBLE, OpenCLBuildError, package_source
from ._buffers import roundup
from ._oclgrind import OclgrindCannotRun, parse_oclgrind
from ._platform import (CHOICES, TARGETS, Env, OpenCLUnavailable, available, configure, describe, device,
                        env, has_fp64, has_subgroups, platforms, target, target_info, using)

__all__ = [
    "TARGETS", "CHOICES", "OPTION", "BENCH", "ENV_PREFIXES", "backend_fields", "configure", "using", "target", "available",
    "describe", "target_info", "platforms", "device", "has_fp64", "has_subgroups", "require_fp64", "Env", "env",
    "OpenCLUnavailable", "OpenCLBuildError", "FP64_PREAMBLE", "program", "kernel", "check_local", "fits_memory",
    "roundup", "to_device", "int_constants", "scratch", "output", "OUT", "launch", "diagnosed", "timed",
    "diagnostics", "parse_oclgrind", "OclgrindCannotRun", "package_source",
]

#: the ``--opencl`` option (``REFCONV_OPENCL``; the pytest plugin's ``--refconv-opencl``).  The
#: command line lists an option once per ``dest``, so the built-in backend and any number of
#: plugins may all declare it; every one of their ``configure`` functions receives the value.
OPTION = BackendOption(
    flag="--opencl", dest="opencl", env="REFCONV_OPENCL", choices=CHOICES, default="auto",
    help="OpenCL target: auto (NVIDIA if present, else PoCL), pocl, oclgrind (simulator with "
         "race / bounds / barrier checks; slow, use the ci profile) or nvidia")

def bench_launch():
    """``BenchHooks.launch`` for OpenCL: an empty one-work-item kernel launched by :func:`launch`,
    the variants' timed path (flush, profiling events)."""
    k = kernel("__kernel void empty(void) { }", "empty", (), "<refconv empty kernel>")
    return lambda: launch(k, (1,), (1,))


#: ``refconv bench`` hooks: a device-to-device copy timed by its profiling event, an empty kernel
#: timed as the variants are; Oclgrind's times flagged as meaningless.
BENCH = BenchHooks(copy=bench_copy, launch=bench_launch, simulated=bench_simulated)

#: the environment a worker process inherits for OpenCL (``Backend.env_prefixes``): the ICD
#: loader's ``OCL_ICD_*``, Oclgrind's ``OCLGRIND_*``, PoCL's ``POCL_*``
ENV_PREFIXES = ("OCL", "OCLGRIND", "POCL")


def backend_fields() -> dict:
    """The ``Backend`` fields that make a pyopencl backend follow the selected target:
    ``Backend(name=..., variants=..., **refconv.opencl.backend_fields())``."""
    return {"available": available, "options": (OPTION,), "configure": configure,
            "describe": describe, "target": target_info, "bench": BENCH,
            "env_prefixes": ENV_PREFIXES, "versions": ("pyopencl",), "real_target": "--opencl nvidia or pocl"}


# a backend given any of these hooks alone is completed with backend_fields (refconv.variant.Backend)
for _hook in (available, configure, describe, target_info):
    setattr(_hook, KIT_FIELDS_ATTR, backend_fields)
del _hook


def require_fp64(what: str = "float64") -> None:
    """Raise ``RuntimeError`` naming the device when the target has no ``cl_khr_fp64``."""
    if not has_fp64(device()):
        raise RuntimeError(f"{what} needs cl_khr_fp64, which {target()} ({device().name.strip()}) lacks")


# ----------------------------------------------------------------------------- builds

def program(source: str, options=(), name: str = "<source>"):
    """The ``pyopencl.Program`` built from OpenCL C ``source`` (text) with build ``options``
    (``-D...``, ``-cl-...``) on the selected target's context; built once per (context, source,
    options).  ``name`` (e.g. ``"my_kernels.cl"``) appears in build errors and findings.  A failed
    build raises :class:`OpenCLBuildError` with the whole build log, here and on every later
    request for the same build."""
    return _build.program(env(), source, options, name)


def kernel(source: str, kernel_name: str, options=(), name: str = "<source>"):
    """The ``pyopencl.Kernel`` ``kernel_name`` of :func:`program`'s build, created once.  Kernels
    from here carry their source ``name`` into Oclgrind findings."""
    return _build.kernel(env(), source, kernel_name, options, name)


# ----------------------------------------------------------------------------- constraints

def check_local(local: tuple, local_bytes: int = 0, kernel=None) -> str | None:
    """Why a work-group of shape ``local`` using ``local_bytes`` of ``__local`` memory cannot run
    on the device (None if it can).  ``kernel``: a ``pyopencl.Kernel``, or the arguments of
    :func:`kernel` as a tuple ``(source, kernel_name[, options[, name]])``, to apply that kernel's
    own work-group limit too.  When the tuple's build fails, only the device's limits apply and
    the case goes ahead: ``run`` then raises the :class:`OpenCLBuildError` with its whole build log
    as the example's error (an exception raised inside a ``constraint`` would end the variant's
    run with the first line of its message only)."""
    e = env()
    if isinstance(kernel, tuple):
        try:
            kernel = _build.kernel(e, *kernel)
        except OpenCLBuildError:
            kernel = None
    return _build.check_local(e, tuple(local), local_bytes, kernel)


def fits_memory(problem, out_bytes: int) -> str | None:
    """Why the problem's input buffers plus ``out_bytes`` of output / scratch do not fit the device
    (one above ``max_mem_alloc_size``, or all above 90% of its memory); None if they fit."""
    return _buffers.fits_memory(env(), problem, out_bytes)


# ----------------------------------------------------------------------------- buffers

def to_device(a):
    """A read-only device buffer holding a copy of host array ``a``: a fresh one, except in
    ``refconv bench``'s timed runs on the nvidia target, which reuse the previous run's
    allocations (NVIDIA's OpenCL charges a fresh buffer's first use to the kernel's interval;
    ``_bench.REUSE_BUFFERS``)."""
    return input_buffer(env(), a)


def int_constants(values):
    """``values`` (ints) as one read-only int32 device buffer, for a kernel's ``__constant int``
    scalars: NVIDIA's OpenCL charges a launch with more than two scalar (by-value) arguments a few
    microseconds more, where a buffer costs nothing extra (docs/performance.md)."""
    return to_device(np.asarray(values, np.int32))


def scratch(nbytes: int):
    """An uninitialised read-write device buffer of ``nbytes`` bytes (in ``refconv bench``'s timed
    runs on the nvidia target, the previous run's allocation, as :func:`to_device`'s)."""
    return scratch_buffer(env(), nbytes)


def output(out):
    """``with output(out) as buf:`` a device buffer initialised from the checker's poisoned
    ``out`` and read back into ``out`` when the block ends (not when it raises).  In ``refconv
    bench``'s timed runs on the nvidia target the allocation is the previous run's
    (``_bench.REUSE_BUFFERS``), like :func:`to_device`'s."""
    return output_buffer(env(), out)


class _Out:
    def __repr__(self):
        return "refconv.opencl.OUT"


#: placeholder for the output buffer among :func:`launch`'s kernel arguments
OUT = _Out()


# ----------------------------------------------------------------------------- launches

def diagnosed(what: str, source: str = ""):
    """``with diagnosed("my_op/mine/variant"):`` launches inside (through :func:`timed`) are
    waited for at the end; on Oclgrind, its diagnostics over the block become findings whose
    message starts with ``what`` (and carry ``source`` when given)."""
    return _oclgrind.diagnosed(env(), what, source)


def launch(kernel, global_size, local_size, *args, out=None, what: str | None = None):
    """Launch ``kernel`` over ``global_size`` / ``local_size`` on the selected target's queue with
    ``args`` and wait for it.  With ``out`` (the checker's buffer), the argument :data:`OUT` is
    replaced by a device buffer initialised from ``out`` and read back into it afterwards; returns
    ``out``.  The launch is timed for ``refconv bench`` and, on Oclgrind, diagnosed (see
    :func:`diagnosed`; ``what`` defaults to the kernel's name)."""
    e = env()
    what = what or getattr(kernel, "function_name", "kernel")
    src = _build.source_name(kernel)
    if out is None:
        if any(a is OUT for a in args):
            raise ValueError("launch(..., OUT, ...) needs out= (the checker's output buffer)")
        with _oclgrind.diagnosed(e, what, src):
            timed(kernel)(e.queue, tuple(global_size), tuple(local_size) if local_size else None, *args)
        return None
    if not any(a is OUT for a in args):
        raise ValueError("launch(..., out=...) needs refconv.opencl.OUT among the kernel arguments")
    with output_buffer(e, out) as ob:
        args = [ob if a is OUT else a for a in args]
        with _oclgrind.diagnosed(e, what, src):
            timed(kernel)(e.queue, tuple(global_size), tuple(local_size) if local_size else None, *args)
    return out


def diagnostics():
    """``with diagnostics() as found:`` the findings (Oclgrind diagnostics included) reported
    inside the block, as a list of dicts -- for a plugin's own tests outside ``refconv check``.
    Inside a check they reach the checker as well."""
    return _oclgrind.collected()
