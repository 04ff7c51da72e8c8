"""refconv.tooling.cuda: the numba-cuda tooling, used by the built-in ``numba_cuda`` backend and
published for plugins as :mod:`refconv.cuda`.

Modules: ``_env`` (the mode, ``numba.cuda`` imported in it, device limits), ``_common`` (the
poisoned transfers, timed launches, launch-fit checks), ``import_hook`` (code run right after a
module's import), ``sim_scheduler`` / ``sim_warps`` (the simulator's event-driven block scheduler
and warp model), ``sanitizer`` (the simulator sanitizer), ``compile_check`` (NVVM/ptxas without a
GPU), ``gpu_sanitizer`` (NVIDIA compute-sanitizer runs) and ``preflight`` (``Backend.preflight``).
Importing this package imports nothing from numba.
"""
