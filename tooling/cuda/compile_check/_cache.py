"""The compile check's disk cache: one small JSON file per compiled kernel, keyed by the sha256 of
the kernel's fingerprint (:mod:`._fingerprint`), its argument types, its compile options, the
compute capability and the versions of numba-cuda, NVVM and the assembler, so a second run
compiles only what changed.

Where: ``REFCONV_COMPILE_CACHE`` (a directory, or ``off``), else ``$XDG_CACHE_HOME/refconv/compile-check``,
else ``~/.cache/refconv/compile-check``.  A cache that cannot be created or written (a read-only
home) is not used: the check compiles everything and says so once; it never fails for it.  A
result is stored only when the compile itself finished (a compile error is a result; a worker
killed on its time limit is not)."""
from __future__ import annotations

import json
import os
import tempfile

#: bumped when the stored result's fields or their meaning change
FORMAT = 1
ENV = "REFCONV_COMPILE_CACHE"
OFF = ("off", "0", "no", "none")


def location() -> str | None:
    """The cache directory to use, or None when ``REFCONV_COMPILE_CACHE`` is ``off``."""
    v = os.environ.get(ENV, "").strip()
    if v.lower() in OFF:
        return None
    if v:
        return v
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "refconv", "compile-check")


class Cache:
    """``get(key)`` / ``put(key, result)`` on directory ``root`` (None: a cache that holds
    nothing); ``why_off`` says why it is not used when it cannot be."""

    def __init__(self, root: str | None):
        self.root, self.why_off = root, None if root else f"{ENV}=off"
        if root:
            try:
                os.makedirs(root, exist_ok=True)
                probe = tempfile.NamedTemporaryFile(dir=root, prefix=".probe-", delete=True)
                probe.close()
            except OSError as e:
                self.root, self.why_off = None, f"{root} is not writable ({e.strerror or e})"

    def _path(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key + ".json")

    def get(self, key: str):
        if not self.root:
            return None
        try:
            with open(self._path(key)) as f:
                got = json.load(f)
        except (OSError, ValueError):
            return None
        return got.get("result") if isinstance(got, dict) and got.get("format") == FORMAT else None

    def put(self, key: str, result: dict) -> None:
        if not self.root:
            return
        path = self._path(key)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
            with os.fdopen(fd, "w") as f:
                json.dump({"format": FORMAT, "result": result}, f)
            os.replace(tmp, path)
        except OSError:                     # a full disk: the next run compiles it again
            try:
                os.unlink(tmp)
            except (OSError, UnboundLocalError):
                pass
