"""refconv's numba-cuda kit: the public module for numba-cuda backends (plugin API), also
importable as :mod:`refconv.cuda`.  The built-in ``numba_cuda`` backend uses exactly this module,
as a third-party plugin does (docs/plugins.md, *Running, sanitizing and compile-checking your own
kernels*).  Importing it imports nothing from numba.

What a numba-cuda backend gets from it:

* **the options and the mode** -- :func:`backend_fields` gives a ``Backend`` the kit's options
  (:data:`OPTIONS`: ``--cuda auto|gpu|sim`` (``REFCONV_CUDA``), ``--sanitize``/``--no-sanitize``
  (``REFCONV_SANITIZE``), ``--compile``), its ``configure``, availability, preflight, description,
  target and bench hooks: ``Backend(name=..., variants=..., **refconv.cuda.backend_fields())``.
  The options belong to the kit: every backend that uses it owns them as the built-in one does,
  so they take effect (and are never reported as unused) whichever of those backends is
  selected.  :func:`cuda` gives ``numba.cuda`` imported in the selected mode, :func:`reason` is
  ``Backend.available`` (a ``MissingTarget`` when the user asked for a GPU that is not there, so
  ``refconv check`` exits 2), :func:`mode` / :func:`is_sim` say which, :func:`target` /
  :func:`limits` / :func:`fits` give the device's limits;
* **the poisoned output transfer** -- :func:`device_out` / :func:`copy_back` (or
  :func:`to_device_poisoned` / :func:`from_device`, flat and padded), so that an element the
  kernel never writes comes back holding the checker's poison;
* **the simulator scheduler** -- every simulated launch in the process runs on refconv's
  event-driven block scheduler (:func:`scheduler_installed`), whoever imports ``numba.cuda``;
* **the sanitizer** -- every simulated launch is instrumented unless ``--no-sanitize``
  (:func:`sanitizing`); findings reach the checker through :mod:`refconv.findings`; on a GPU,
  ``--sanitize`` runs the kernels under NVIDIA compute-sanitizer (:func:`gpu_sanitizing`) through
  :func:`preflight`;
* **the compile check** -- :func:`preflight` compiles the backend's kernels for a real GPU
  without one under ``--compile`` (:func:`compile_check`);
* **helpers for a variant's ``constraint`` and ``cost``** -- :func:`fits`, :func:`io_bytes`,
  :func:`sim_work`, :func:`sm_count`, :func:`warps_supported`, and exact float operations
  (:func:`float_ops`).

Its parts: ``_env`` (the mode, ``numba.cuda`` imported in it, device limits), ``_common`` (the
poisoned transfers, timed launches, launch-fit checks), ``import_hook``, ``sim_scheduler`` /
``sim_warps`` (the simulator's block scheduler and warp model), ``sanitizer`` (the simulator
sanitizer), ``compile_check`` (NVVM/ptxas without a GPU), ``gpu_sanitizer`` (NVIDIA
compute-sanitizer runs) and ``preflight`` (the preflight step).  Code outside this package uses
this module only; the core engine never imports it (it names no backend).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from refconv.timing import BenchHooks
from refconv.variant import KIT_FIELDS_ATTR, BackendOption

from . import _common, _env
from . import sim_scheduler as _sched
# the submodules named like the public functions below are imported first, so that the functions
# defined afterwards are what this package's ``preflight`` and ``compile_check`` attributes hold
# (a submodule's first import would otherwise replace the function by the module)
from . import compile_check as _compile_check_pkg  # noqa: F401
from . import preflight as _preflight_mod

__all__ = ["OPTIONS", "CUDA_OPTION", "SANITIZE_OPTION", "COMPILE_OPTION", "MODES", "BENCH", "ENV_PREFIXES",
           "backend_fields", "configure", "mode", "is_sim", "cuda", "reason", "describe", "target", "limits",
           "fits", "cdiv", "io_bytes", "sim_work", "sm_count", "warps_supported", "device_out", "copy_back",
           "to_device_poisoned", "from_device", "out_flat", "finish", "launch", "scheduler_installed",
           "sanitizing", "gpu_sanitizing", "SANITIZER_CLASSES", "preflight", "compile_check", "float_ops"]

#: the values of ``--cuda`` / ``REFCONV_CUDA``
MODES = _env.CHOICES

#: the finding classes the sanitizer reports (docs/sanitizer.md)
SANITIZER_CLASSES = ("out-of-bounds", "shared-race", "barrier-divergence", "uninitialized-read", "warp-mask")

#: ``--cuda``: where numba-cuda kernels run (process-wide: the mode is fixed by the first
#: ``import numba.cuda``)
CUDA_OPTION = BackendOption(
    flag="--cuda", dest="cuda", env="REFCONV_CUDA", choices=MODES, default="auto",
    help="where numba-cuda kernels run: auto (the GPU if the CUDA driver reports one, else the "
         "simulator), gpu, or sim (numba-cuda's CUDA simulator)")

#: ``--sanitize`` / ``--no-sanitize``
SANITIZE_OPTION = BackendOption(
    flag="--sanitize", dest="sanitize", is_flag=True, env="REFCONV_SANITIZE", default="auto",
    help="hazard checks of numba-cuda kernels (shared races, out-of-bounds, barrier divergence, "
         "uninitialised reads): under the simulator refconv's sanitizer instruments every launch, on by "
         "default (--no-sanitize turns it off); on a GPU, --sanitize runs the kernels under NVIDIA "
         "compute-sanitizer and each variant's cases once more under the simulator sanitizer")

#: ``--compile``
COMPILE_OPTION = BackendOption(
    flag="--compile", dest="compile", is_flag=True,
    help="compile every numba-cuda kernel (the variants of every backend built on refconv.cuda) for "
         "the real target (NVVM/ptxas) before checking, reporting compile errors as findings")

#: the kit's options: the command line lists an option once per ``dest``, so the built-in backend
#: and any number of plugins declare the same objects; every one of their ``configure`` functions
#: receives the values
OPTIONS = (CUDA_OPTION, SANITIZE_OPTION, COMPILE_OPTION)

#: ``refconv bench`` hooks: a device-to-device copy and an empty kernel, timed as the variants
#: are; the simulator's times flagged as meaningless
BENCH = BenchHooks(copy=_common.bench_copy, launch=_common.bench_launch, simulated=_common.bench_simulated)

#: the environment a worker process inherits for numba-cuda (``Backend.env_prefixes``)
ENV_PREFIXES = ("NUMBA_",)


def configure(options: Mapping[str, Any] | str = "auto", *, sanitize="auto") -> None:
    """Set where kernels run in this process.  ``Backend.configure``: ``options`` is the mapping of
    the kit's option values (``{"cuda": ..., "sanitize": ..., "compile": ...}``; a missing
    ``cuda`` falls back to ``REFCONV_CUDA``, then ``auto``).  Scripts and notebooks outside
    ``refconv check`` may pass the mode itself, ``configure("sim")`` (``auto``/``gpu``/``sim``,
    with ``sanitize`` ``True``/``False``/``"auto"``).  A plugin never calls it: it would override
    the user's choice."""
    if isinstance(options, str):
        _env.set_mode(options, sanitize=sanitize)
    else:
        _env.configure(options)


def backend_fields() -> dict:
    """The ``Backend`` fields that make a numba-cuda backend own the kit's options and follow the
    selected mode: ``Backend(name=..., variants=..., **refconv.cuda.backend_fields())`` --
    :data:`OPTIONS`, :func:`configure`, availability (:func:`reason`), :func:`preflight`,
    ``refconv list``'s description, the target, the bench hooks, the worker environment and the
    versions ``refconv bench`` records."""
    return {"available": reason, "options": OPTIONS, "configure": configure, "preflight": preflight,
            "describe": describe, "target": target, "bench": BENCH, "env_prefixes": ENV_PREFIXES,
            "versions": ("numba", "numba_cuda"), "real_target": "--cuda gpu, on a machine with a CUDA GPU"}


def _mark_hooks() -> None:
    """A backend given any of these hooks alone is completed with :func:`backend_fields`
    (:class:`refconv.variant.Backend`): a plugin written as ``Backend(..., available=refconv.cuda.reason,
    preflight=refconv.cuda.preflight)`` owns the kit's options too."""
    for hook in (reason, configure, preflight, describe, target):
        setattr(hook, KIT_FIELDS_ATTR, backend_fields)


def mode() -> str:
    """``"gpu"`` or ``"sim"``: where kernels run in this process (fixed by the first
    ``import numba.cuda``)."""
    return _env.mode()


def is_sim() -> bool:
    """True under numba-cuda's simulator."""
    return _env.is_sim()


def cuda():
    """The ``numba.cuda`` module, imported in the configured mode (use it instead of ``from numba
    import cuda`` at import time: see :func:`configure`)."""
    return _env.cuda()


def reason() -> str | None:
    """``Backend.available`` for a numba-cuda backend: ``None`` when kernels can run here, a plain
    reason when they cannot (numba-cuda missing), a :class:`refconv.MissingTarget` when the
    user's explicit choice cannot be honoured (``--cuda gpu`` without a GPU, ``--sanitize`` on a
    GPU without compute-sanitizer, ``numba.cuda`` imported in the other mode before the backends
    were configured)."""
    return _env.reason()


def describe() -> str:
    """A line for ``Backend.describe``: the GPU's name or "CUDA simulator", numba-cuda's version."""
    return _env.describe()


def target():
    """The :class:`refconv.variant.Target` kernels run on now (``Backend.target``)."""
    return _env.target()


def limits() -> dict:
    """The device's limits: ``max_threads_per_block``, ``max_shared_bytes``, ``max_const_bytes``,
    ``max_grid``, ``mem_bytes`` (the GPU's, or the simulator's stand-in for them)."""
    return _env.limits()


def sm_count() -> int:
    """Multiprocessors of device 0 (a small number under the simulator)."""
    return _env.sm_count()


def fits(problem, *, threads: int, grid=(1,), shared: int = 0, const: int = 0,
         device_bytes: int = 0) -> str | None:
    """Why one launch configuration does not fit the device, or ``None``: use it in a variant's
    ``constraint`` (threads per block, grid dimensions, shared / constant memory, device memory)."""
    return _common.fits(problem, threads=threads, grid=grid, shared=shared, const=const,
                        device_bytes=device_bytes)


cdiv = _common.cdiv
io_bytes = _common.io_bytes
sim_work = _common.sim_work
out_flat = _common.out_flat
finish = _common.finish


def warps_supported() -> bool:
    """True when simulated launches in this process have warp-level operations (``shfl``, votes,
    ``syncwarp``): refconv's scheduler is, or will be, installed."""
    return _sched.warps_supported()


def device_out(out):
    """A device array of ``out``'s shape and dtype, uploaded from ``out``: the checker's poison is
    in every element, so an element the kernel never writes is reported as ``never written``
    (a ``cuda.device_array`` or zeros would hide it)."""
    return _common.device_out(out)


def copy_back(d_out, out):
    """Copy ``d_out`` (from :func:`device_out`) back into the checker's ``out``; returns ``out``."""
    return _common.copy_back(d_out, out)


def to_device_poisoned(out, pad_to: int = 1):
    """``(flat_device_array, n)``: ``out`` flattened (and padded to a multiple of ``pad_to``
    elements, to view it as wider words) on the device, poison included -- what the built-in
    variants use.  Copy back with :func:`from_device`."""
    return _common.to_device_poisoned(out, pad_to)


def from_device(d_out, n: int, out):
    """Copy the first ``n`` elements of a buffer from :func:`to_device_poisoned` into ``out``."""
    return _common.from_device(d_out, n, out)


def launch(configured, *args, stream=0):
    """``configured(*args)`` (a kernel given its grid and block), timed with CUDA events inside a
    ``refconv bench`` run (kernel time, cold L2), a plain launch otherwise."""
    return _common.launch(configured, *args, stream=stream)


def scheduler_installed() -> bool:
    """True when simulated blocks run on refconv's event-driven scheduler (always, under the
    simulator, once a kernel has launched: it is armed when the mode is configured, whoever
    imports ``numba.cuda``; ``REFCONV_SIM_SCHEDULER=numba`` keeps the simulator's own)."""
    return _sched.installed()


def sanitizing() -> bool:
    """True under the simulator unless ``--no-sanitize``: every simulated launch in the process is
    instrumented, the plugin's included (nothing to do in the plugin)."""
    return _env.sanitizing()


def gpu_sanitizing() -> bool:
    """True under ``--cuda gpu --sanitize``: :func:`preflight` runs the backend's variants under
    NVIDIA compute-sanitizer and once more under the simulator sanitizer."""
    return _env.gpu_sanitizing()


def preflight(variants: Iterable, options: Mapping[str, Any] | None) -> dict:
    """``Backend.preflight``: under ``--compile`` (``options["compile"]``), :func:`compile_check`
    of the variants; under ``--sanitize`` on a GPU, their compute-sanitizer and
    simulator-sanitizer runs (docs/sanitizer.md, *On a GPU*); ``{}`` otherwise."""
    return _preflight_mod.preflight(variants, options)


def compile_check(variants: Iterable, options: Mapping[str, Any] | None = None) -> dict:
    """Compile every kernel each variant launches, per launch-parameter specialisation, to PTX and
    SASS for ``options["cc"]`` (default ``sm_90``) without a GPU: ``{variant_id: [finding dicts]}``
    with ``compile-error`` / ``launch-error`` / ``compile-check-failed`` (each fails the variant;
    also when the check compiled nothing for it) and ``compile-info`` (registers, shared memory:
    a report).  Needs NVVM (``numba-cuda[cu13]``).  See docs/sanitizer.md, *The compile check*."""
    return _compile_check_pkg.preflight(list(variants), options)


def float_ops():
    """``(fmul32, fadd32, f2i_rz, fmul64, fadd64)``: device-callable IEEE operations that NVVM
    never contracts into FMAs (libdevice on the GPU, NumPy under the simulator)."""
    return _env.float_ops()


_mark_hooks()
