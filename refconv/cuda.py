"""refconv.cuda: the numba-cuda tooling for backend plugins -- the same functions the built-in
``numba_cuda`` backend uses, as a public module.

A third-party plugin whose kernels are written with ``numba.cuda`` uses this module to run
exactly as the built-in backend does (docs/plugins.md, *Running, sanitizing and compile-checking
your own kernels*):

* **the mode** -- ``--cuda auto|gpu|sim`` (``REFCONV_CUDA``) and ``--sanitize``/``--no-sanitize`` are options of the
  built-in ``numba_cuda`` backend, applied to the whole process before any backend's
  ``variants()`` is called: :func:`cuda` gives ``numba.cuda`` imported in that mode,
  :func:`reason` is the plugin's ``Backend.available`` (``MissingTarget`` when the user asked for
  a GPU that is not there, so ``refconv check`` exits 2), :func:`mode` / :func:`is_sim` say
  which, :func:`target` / :func:`limits` / :func:`fits` give the device's limits;
* **the poisoned output transfer** -- :func:`device_out` / :func:`copy_back` (or
  :func:`to_device_poisoned` / :func:`from_device`, flat and padded), so that an element the
  kernel never writes comes back holding the checker's poison;
* **the simulator scheduler** -- every simulated launch in the process runs on refconv's
  event-driven block scheduler (:func:`scheduler_installed`), whoever imports ``numba.cuda``;
* **the sanitizer** -- every simulated launch is instrumented unless ``--no-sanitize``
  (:func:`sanitizing`); findings reach the checker through :mod:`refconv.findings`; on a GPU,
  ``--sanitize`` runs the kernels under NVIDIA compute-sanitizer (:func:`gpu_sanitizing`) through
  :func:`preflight`;
* **the compile check** -- ``Backend(preflight=refconv.cuda.preflight)`` compiles the plugin's
  kernels for a real GPU without one under ``--compile``.

The implementation lives in :mod:`refconv.tooling.cuda`.  Only backends and plugins import this
module; the core engine never does (it names no backend).  It imports nothing from numba until a
function needs it.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from refconv.tooling.cuda import _common, _env
from refconv.tooling.cuda import sim_scheduler as _sched
from refconv.tooling.cuda.preflight import preflight as _preflight

__all__ = ["configure", "mode", "is_sim", "cuda", "reason", "describe", "target", "limits", "fits",
           "cdiv", "device_out", "copy_back", "to_device_poisoned", "from_device", "launch",
           "scheduler_installed", "sanitizing", "gpu_sanitizing", "SANITIZER_CLASSES", "preflight", "compile_check",
           "float_ops", "MODES"]

#: the values of ``--cuda`` / ``REFCONV_CUDA``
MODES = _env.CHOICES

#: the finding classes the sanitizer reports (docs/sanitizer.md)
SANITIZER_CLASSES = ("out-of-bounds", "shared-race", "barrier-divergence", "uninitialized-read", "warp-mask")

#: :func:`configure` takes this mode (``auto``/``gpu``/``sim``); the built-in backend calls it from
#: its ``--cuda``/``--sanitize`` options.  A plugin never calls it: it would override the user's
#: choice.  Scripts and notebooks outside ``refconv check`` may.
configure = _env.set_mode


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
    """``Backend.available`` for a numba-cuda plugin: ``None`` when kernels can run here, a plain
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


def fits(problem, *, threads: int, grid=(1,), shared: int = 0, const: int = 0,
         device_bytes: int = 0) -> str | None:
    """Why one launch configuration does not fit the device, or ``None``: use it in a variant's
    ``constraint`` (threads per block, grid dimensions, shared / constant memory, device memory)."""
    return _common.fits(problem, threads=threads, grid=grid, shared=shared, const=const,
                        device_bytes=device_bytes)


cdiv = _common.cdiv


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
    """True under ``--cuda gpu --sanitize``: :func:`preflight` runs the plugin's variants under
    NVIDIA compute-sanitizer and once more under the simulator sanitizer."""
    return _env.gpu_sanitizing()


def preflight(variants: Iterable, options: Mapping[str, Any] | None) -> dict:
    """A numba-cuda plugin's ``Backend.preflight``: under ``--compile`` (``options["compile"]``),
    :func:`compile_check` of its variants; under ``--sanitize`` on a GPU, the compute-sanitizer
    and simulator-sanitizer runs of its variants (docs/sanitizer.md, *On a GPU*); ``{}``
    otherwise."""
    return _preflight(variants, options)


def compile_check(variants: Iterable, options: Mapping[str, Any] | None = None) -> dict:
    """Compile every kernel each variant launches, per launch-parameter specialisation, to PTX and
    SASS for ``options["cc"]`` (default ``sm_90``) without a GPU: ``{variant_id: [finding dicts]}``
    with ``compile-error`` / ``launch-error`` / ``compile-check-failed`` (each fails the variant;
    also when the check compiled nothing for it) and ``compile-info`` (registers, shared memory:
    a report).  Needs NVVM (``numba-cuda[cu13]``).  See docs/sanitizer.md, *The compile check*."""
    from refconv.tooling.cuda.compile_check import preflight as run
    return run(list(variants), options)


def float_ops():
    """``(fmul32, fadd32, f2i_rz, fmul64, fadd64)``: device-callable IEEE operations that NVVM
    never contracts into FMAs (libdevice on the GPU, NumPy under the simulator)."""
    return _env.float_ops()
