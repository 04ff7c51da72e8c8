"""Public OpenCL tooling for pyopencl backend plugins: the selected ``--opencl`` target's context
and queue, cached builds with whole build logs, the poisoned output transfer, launches that wait,
are timed for ``refconv bench`` and turn Oclgrind's diagnostics into findings.

The implementation lives in the built-in backend (:mod:`refconv.backends.opencl.tooling`),
which uses it exactly as a plugin does; this module only re-exports it.  The core engine never
imports it.  See docs/plugins.md, *Running, sanitizing and compile-checking your own kernels*.
"""
from refconv.backends.opencl.tooling import *  # noqa: F401,F403
from refconv.backends.opencl.tooling import __all__  # noqa: F401
