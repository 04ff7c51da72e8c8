"""The example database of a directory: :class:`CheckedDirectoryDatabase`, Hypothesis's
``DirectoryBasedExampleDatabase`` except that a save that did not happen says so.

Hypothesis's own ``save`` swallows every ``OSError``: on a full disk it leaves an empty file in
the database (written across file systems from a temporary file elsewhere) or nothing, and a key
folder replaced by a file makes every later save vanish, all without a word.  Here each value is
written to a temporary file *inside its key folder* and renamed into place only once written
whole (so no empty or partial file is ever left under the value's name), and a save that fails is
recorded (:attr:`CheckedDirectoryDatabase.save_errors`): the run reports it with the variant whose
counterexample was not kept (``VariantResult.database_error``), as it does for a reproducer that
could not be written.  Reading, deleting and moving are Hypothesis's.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis.database import DirectoryBasedExampleDatabase

#: the most save failures kept word for word (the count goes on)
KEEP = 5


class CheckedDirectoryDatabase(DirectoryBasedExampleDatabase):
    """A directory example database whose failed saves are recorded in :attr:`save_errors` (one
    line each: the folder and the OS error) and counted in :attr:`failed_saves`."""

    def __init__(self, path) -> None:
        super().__init__(path)
        self.save_errors: list[str] = []
        self.failed_saves = 0

    def save(self, key: bytes, value: bytes) -> None:
        meta = getattr(self, "_metakeys_name", None)
        if meta is not None and key != meta:
            self.save(meta, key)           # Hypothesis's index of the keys, as its own save keeps it
        key_path = self._key_path(key)
        path = self._value_path(key, value)
        try:
            if path.is_file() and path.stat().st_size == len(value) and path.read_bytes() == value:
                return
            key_path.mkdir(parents=True, exist_ok=True)
            _write_whole(key_path, path, value)
        except OSError as e:
            self._failed(key_path, e)

    def _failed(self, key_path: Path, e: OSError) -> None:
        self.failed_saves += 1
        if len(self.save_errors) < KEEP:
            why = e.strerror or str(e) or type(e).__name__
            if isinstance(e, (FileExistsError, NotADirectoryError)):
                why += " (a file stands where the key's folder should be)"
            self.save_errors.append(f"{key_path}: {why}")

    def error_line(self) -> str:
        """One line saying that examples were not saved, and why (``""`` when every save happened)."""
        if not self.failed_saves:
            return ""
        more = f" (+{self.failed_saves - len(self.save_errors)} more)" if self.failed_saves > len(self.save_errors) else ""
        return (f"{self.failed_saves} example(s) not saved in the example database {self.path}: "
                f"{self.save_errors[0]}{more}")


def _write_whole(folder: Path, path: Path, value: bytes) -> None:
    """Write ``value`` to ``path`` through a temporary file in ``folder`` (the same file system:
    the rename is atomic), flushed to the disk first; the temporary file is removed on failure."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".refconv-save-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(value)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
