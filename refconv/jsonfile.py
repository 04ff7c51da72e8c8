"""The JSON files refconv writes and reads (check reports, reproducers, bench reports).

* Writing: :func:`write_json` (``json.dumps(doc, indent=1, default=str)``) through
  :func:`atomic_write` -- a temporary file in the target's directory, then ``os.replace`` -- so a
  reader never sees half a file and an old file is only replaced by a complete new one; the file's
  mode is what a plain ``open(path, "w")`` gives (0666 less the umask).  Every JSON writer of
  refconv goes through here.
* Reading: :func:`read_json`, with one error per way a file can be wrong, naming the file.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .errors import UsageError


def _umask() -> int:
    """The process's file-creation mask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a rename.
    The file gets the mode a plain ``open(path, "w")`` would give it (0666 less the umask), not
    the 0600 of a temporary file."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix=f".{p.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json(path, doc, encode=str) -> None:
    """Write ``doc`` as JSON (one-space indent; ``encode(obj)`` for what JSON cannot hold, ``str``
    by default) to ``path``, atomically (:func:`atomic_write`)."""
    atomic_write(str(path), json.dumps(doc, indent=1, default=encode))


def read_json(path, what: str):
    """The document in the JSON file ``path``: a file the user names, so ``UsageError`` when there
    is no such file or it is not JSON, naming ``what`` (e.g. ``"bench report"``) and the path."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{what} {str(path)!r} does not exist or is not a file")
    try:
        return json.loads(p.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{what} {str(path)!r}: invalid JSON ({e})") from None
