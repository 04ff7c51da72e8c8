"""GPU-less compile check of the numba_cuda variants (``refconv check --compile``).

The CUDA simulator runs kernels as Python, so it accepts code the real compiler rejects (e.g. a
``cuda.shared.array((T + 9, T + 9), float32)`` shape computed from a module global).  This module
compiles every kernel a variant launches, for each launch-parameter specialisation the checker
draws from, to PTX for a named compute capability (default ``sm_90``; ``options["cc"]`` or
``REFCONV_CC``), with no GPU:

1. :func:`preflight` (in the checking process, which may run the simulator) lists, per variant,
   the specialisations: its default ``Param`` values plus combinations that cover every value of
   every ``Param`` (``options["compile_params"]="all"`` / ``REFCONV_COMPILE_PARAMS=all``: the whole
   product) x every supported dtype, on one tiny problem, plus each value of each small option
   domain one at a time (defaults elsewhere), and drops those its ``constraint`` rejects.
2. It starts worker subprocesses with ``NUMBA_ENABLE_CUDASIM=0`` (the simulator replaces
   ``numba.cuda`` wholesale in a process where it is on).  A worker imports the real
   ``numba.cuda`` first, then swaps in host-memory stand-ins for the device-memory API
   (``to_device``, ``device_array*``, ``synchronize``, streams, ``get_current_device``) and a
   launch that records the kernel and its argument types instead of running it.  It runs each
   variant's ``run(problem, out, **params)`` unchanged: every launch compiles ``py_func`` (closure
   constants included, as the real dispatcher would) with ``numba.cuda.compile_ptx`` for the
   inferred signature, then ``ptxas -v`` (when found) for registers / shared memory / spills.
3. Findings per variant: ``compile-error`` (typing / lowering / NVVM / ptxas errors),
   ``launch-error`` (block > 1024 threads, registers x threads > 64K, shared memory > 48 KiB
   without opt-in), ``compile-check-failed`` (the check itself could not run this variant: never
   read as a pass), and ``compile-info`` (one per kernel: registers, smem, spills; not a failure).

The pieces, one module each: :mod:`refconv.compile_specs` (core, backend-neutral: which tiny
problems and launch parameters), ``_tools`` (compute capability, ``ptxas`` discovery), ``_pool``
(the parent side: worker processes, findings gathered), ``_fake_device`` (the worker's host
stand-ins for the device API and the recording launch), ``_assemble`` (nvJitLink / ``ptxas``),
``_worker`` (the worker process), ``__main__`` (its entry point).

A numba-cuda plugin reaches it through :func:`refconv.cuda.preflight`.

Needs NVVM (``pip install "numba-cuda[cu13]==0.30.4"``, the ``cuda`` extra); ``ptxas`` is optional.
"""
from __future__ import annotations

from refconv.compile_specs import specialisations

from ._pool import parameter_mode, preflight, trace
from ._tools import DEFAULT_CC, find_ptxas, parse_cc

__all__ = ["preflight", "trace", "parameter_mode", "specialisations", "parse_cc", "find_ptxas", "DEFAULT_CC"]
