"""refconv's Triton kit: the public module for Triton backends (plugin API), also importable as
:mod:`refconv.triton`.  The built-in ``triton`` backend uses exactly this module, as a third-party
plugin does (docs/plugins.md, section Triton).  Importing it never imports triton.

* :func:`backend_fields` -- the ``Backend`` fields that make a backend own the kit's option
  (``--triton auto|gpu|interpret``, ``REFCONV_TRITON``: :data:`OPTION`) and follow it:
  availability, ``configure``, ``refconv list``'s description, the target, the bench hooks;
* :func:`jit` -- ``triton.jit`` made lazy (the kernel is made at its first launch, after the mode
  is known); :func:`launch` with :data:`OUT` for the checker's poisoned output, NumPy arrays as
  buffers (:class:`HostArray` under the interpreter, no torch needed);
* :mod:`memcheck` -- under the interpreter every load and store of a launch is checked against
  the buffers passed to it (out-of-bounds, reads of never-written output), findings failing the
  example;
* :func:`grid_fits` / :func:`budget` / :func:`cdiv` for a variant's ``constraint``.

Its parts: :mod:`.kit` (the mode, lazy kernels, host arrays, launches) and :mod:`.memcheck` (the
interpreter's memory checker).
"""
from . import memcheck  # noqa: F401
from .kit import *  # noqa: F401,F403
from .kit import __all__ as _kit_all

__all__ = list(_kit_all) + ["memcheck"]


def _mark_hooks() -> None:
    """A backend given any of these hooks alone is completed with :func:`backend_fields`
    (:class:`refconv.variant.Backend`), the kit's option included."""
    from refconv.variant import KIT_FIELDS_ATTR
    for hook in (available, configure, describe, target):  # noqa: F405 - the kit's, star-imported above
        setattr(hook, KIT_FIELDS_ATTR, backend_fields)  # noqa: F405


_mark_hooks()
