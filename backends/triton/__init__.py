"""refconv.backends.triton: Triton kernels for every op, compiled for a CUDA GPU or run by
Triton's interpreter on the CPU (``--triton auto|gpu|interpret``, env ``REFCONV_TRITON``), with
refconv's memory checker around every interpreted load and store.

The Triton kit (:mod:`refconv.tooling.triton`: the option and the mode, lazy kernels, the
host-array wrapper, launches with the poisoned output, the memory checker, :func:`backend_fields`)
is what a third-party Triton plugin uses too, through :mod:`refconv.triton` (docs/plugins.md,
section Triton); this backend takes its option through ``backend_fields()`` exactly as a plugin
does.  ``kit`` and ``backend_fields`` stay importable from this package for plugins written
before that module existed.  One module per op, each
with ``variants()``; the kernels themselves are in ``_kernels`` (imported at the first launch).
Importing this package never imports triton: without it the backend is listed as unavailable
with the reason.
"""
from __future__ import annotations

import importlib

from refconv.variant import Backend

from refconv.tooling import triton as kit  # noqa: F401  (plugins import kit and backend_fields from here too)
from refconv.tooling.triton import backend_fields

_MODULES = ("filter2d", "sobel", "matvec", "kron", "conv2d")


def _variants():
    vs = []
    for mod in _MODULES:
        vs += importlib.import_module(f"{__name__}.{mod}").variants()
    return vs


backend = Backend(name="triton", variants=_variants, **backend_fields())
