"""refconv.triton: the Triton kit for backend plugins -- the functions the built-in ``triton``
backend runs its kernels through, as a public module (docs/plugins.md, section Triton).

* :func:`backend_fields` -- the ``Backend`` fields that make a plugin follow ``--triton
  auto|gpu|interpret`` (``REFCONV_TRITON``): availability, the option, ``refconv list``'s
  description, the target, the bench hooks;
* :func:`jit` -- ``triton.jit`` made lazy (the kernel is made at its first launch, after the mode
  is known); :func:`launch` with :data:`OUT` for the checker's poisoned output, NumPy arrays as
  buffers (:class:`HostArray` under the interpreter, no torch needed);
* :mod:`memcheck` -- under the interpreter every load and store of a launch is checked against
  the buffers passed to it (out-of-bounds, reads of never-written output), findings failing the
  example;
* :func:`grid_fits` / :func:`budget` / :func:`cdiv` for a variant's ``constraint``.

The implementation lives in :mod:`refconv.tooling.triton`; this module only re-exports it.  The
core engine never imports it.  Importing it never imports triton.
"""
from refconv.tooling.triton import memcheck  # noqa: F401
from refconv.tooling.triton.kit import *  # noqa: F401,F403
from refconv.tooling.triton.kit import __all__ as _kit_all

__all__ = list(_kit_all) + ["memcheck"]
