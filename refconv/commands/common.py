"""What the subcommands share: the :class:`refconv.session.Session` of a parsed command line
(:func:`session_from`), the rows of backends that failed to load, the run record a report keeps
(:func:`run_info`) and ``--json -`` (:func:`report_on_stdout`, :func:`write_to_fd`)."""
from __future__ import annotations

import contextlib
import os
import sys

from ..session import Session, backend_options


def refconv_version() -> str:
    """The installed refconv's version (its distribution metadata, else the package's)."""
    try:
        from importlib.metadata import version
        return version("refconv")
    except Exception:  # not installed as a distribution (a source tree on sys.path)
        from .. import __version__
        return __version__


def session_from(ns, recorded=None) -> Session:
    """The :class:`refconv.session.Session` of a parsed command line (``recorded``: the backend
    options a reproducer recorded)."""
    return Session(op=getattr(ns, "op", None), backend=getattr(ns, "backend", None),
                   variant=getattr(ns, "variant", None),
                   options={o.dest: getattr(ns, o.dest, None) for _, o in backend_options()},
                   recorded=recorded or {}, profile_name=getattr(ns, "profile", None),
                   examples=getattr(ns, "examples", None), timeout=getattr(ns, "timeout", None),
                   tolerance=getattr(ns, "tolerance", None))


def broken_results(session):
    """A row ``*/name/*`` (status unavailable, the error as reason) for every selected backend that
    cannot give variants (import failed, ``variants()`` raised): shown, never silently left out."""
    from ..runner import VariantResult
    return [VariantResult(f"*/{name}/*", "unavailable", reason=why) for name, why in session.broken().items()]


def run_info(ns, started: float) -> dict:
    """What a report records about the run that wrote it: refconv's version, the seed, when it
    started (UTC, ISO 8601) and its command line."""
    import datetime
    import shlex
    return {"refconv_version": refconv_version(), "seed": getattr(ns, "seed", None),
            "started": datetime.datetime.fromtimestamp(started, datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": shlex.join(["refconv", *getattr(ns, "argv", sys.argv[1:])])}


@contextlib.contextmanager
def report_on_stdout(wanted: bool):
    """With ``wanted`` (``--json -``): file descriptor 1 is pointed at stderr for the block, so the
    matrix, the progress and whatever a worker prints go to stderr, and the block gets a duplicate
    of the real stdout (an fd) to write the report to; without: yields ``None``."""
    if not wanted:
        yield None
        return
    sys.stdout.flush()
    real = os.dup(1)
    os.dup2(2, 1)
    try:
        yield real
    finally:
        try:
            sys.stdout.flush()
        finally:
            os.dup2(real, 1)
            os.close(real)


def write_to_fd(fd: int, text: str) -> None:
    """Write ``text`` (and a newline) to the open file descriptor ``fd``, leaving it open."""
    with os.fdopen(os.dup(fd), "w", encoding="utf-8") as fh:
        fh.write(text + "\n")
