"""The OpenCL C of a kernel file with shared pieces prepended (``pack4.cl``): one source string,
with a ``#line 1 "<file>"`` directive before the kernel file so that a build log quotes the
kernel file's own line numbers."""
from __future__ import annotations

import importlib.resources


def shared_source(shared: str, name: str) -> str:
    """The text of ``shared`` then of ``name`` (both files of this package), the latter numbered from 1."""
    files = importlib.resources.files(__package__)
    return f"{files.joinpath(shared).read_text()}\n#line 1 \"{name}\"\n{files.joinpath(name).read_text()}"
