"""Public OpenCL tooling for pyopencl backend plugins: the selected ``--opencl`` target's context
and queue, cached builds with whole build logs, the poisoned output transfer, launches that wait,
are timed for ``refconv bench`` and turn Oclgrind's diagnostics into findings.

The implementation lives in :mod:`refconv.tooling.opencl`, which the built-in backend uses
exactly as a plugin does; this module only re-exports it.  The core engine never
imports it.  See docs/plugins.md, *Running, sanitizing and compile-checking your own kernels*.
"""
from refconv.tooling.opencl import *  # noqa: F401,F403
from refconv.tooling.opencl import __all__  # noqa: F401
