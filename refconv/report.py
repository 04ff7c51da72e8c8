"""Report files of ``refconv check`` (JSON, JUnit XML) and the paths they are written to.

* Every output path is validated *before* the run starts (:func:`check_output_file`,
  :func:`check_output_dir`), by actually creating (and removing) a file where the output will go,
  so a run of hours never ends in a traceback that loses its reports.  A bad path raises
  ``UsageError`` naming the option, what was given and what is accepted.
* ``--json -`` writes the JSON report to stdout (the command then prints everything else on
  stderr: :func:`refconv.commands.common.report_on_stdout`); ``--junit`` always takes a file, and the two
  may not name the same file (:func:`check_report_paths`).
* Every report is written atomically (:func:`refconv.jsonfile.atomic_write`: a temporary file in
  the target's directory, then ``os.replace``): a reader never sees half a report, and an old report
  is only replaced by a complete new one; its mode follows the umask, as any file the user writes.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .errors import UsageError
from .jsonfile import atomic_write  # noqa: F401  (refconv.report.atomic_write: the JUnit, merge writers)
from .variant_id import VariantId

_ACCEPTED_FILE = "a file path in an existing, writable directory"
_ACCEPTED_DIR = "a directory that exists or can be created, and is writable"


def _probe(directory: Path) -> None:
    """Create and remove a file in ``directory``; raises ``OSError`` when that is impossible."""
    fd, name = tempfile.mkstemp(dir=directory, prefix=".refconv-probe-")
    os.close(fd)
    os.unlink(name)


def check_output_file(option: str, path: str) -> None:
    """Raise ``UsageError`` naming ``option`` unless a report can be written at ``path``."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise UsageError(f"{option} {path}: is a directory; accepted: {_ACCEPTED_FILE}")
    if not parent.exists():
        raise UsageError(f"{option} {path}: directory {parent} does not exist; accepted: {_ACCEPTED_FILE}")
    if not parent.is_dir():
        raise UsageError(f"{option} {path}: {parent} is not a directory; accepted: {_ACCEPTED_FILE}")
    try:
        _probe(parent)
    except OSError as e:
        raise UsageError(f"{option} {path}: cannot write in {parent} ({e.strerror or e}); "
                         f"accepted: {_ACCEPTED_FILE}") from None


def check_report_paths(json_path: str | None, junit_path: str | None) -> None:
    """The ``--json`` and ``--junit`` paths of a command: each writable (``--json -``: stdout), and
    not the same file (one would overwrite the other).  ``UsageError`` naming the option."""
    if junit_path == "-":
        raise UsageError("--junit -: only --json writes to stdout; accepted for --junit: "
                         f"{_ACCEPTED_FILE}")
    if json_path and json_path != "-":
        check_output_file("--json", json_path)
    if junit_path:
        check_output_file("--junit", junit_path)
    if json_path and junit_path and json_path != "-" and (
            os.path.abspath(json_path) == os.path.abspath(junit_path)
            or (os.path.exists(json_path) and os.path.exists(junit_path)
                and os.path.samefile(json_path, junit_path))):
        raise UsageError(f"--json {json_path} and --junit {junit_path} name the same file, so one report "
                         f"would overwrite the other; accepted: two different files")


def check_output_dir(option: str, path: str) -> None:
    """Raise ``UsageError`` naming ``option`` unless files can be saved under directory ``path``
    (which need not exist yet: its nearest existing ancestor must be a writable directory)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{option} {path}: is not a directory; accepted: {_ACCEPTED_DIR}")
    q = p
    while not q.exists():
        if q.parent == q:
            break
        q = q.parent
    if not q.is_dir():
        raise UsageError(f"{option} {path}: {q} is a file, so the directory cannot be created; "
                         f"accepted: {_ACCEPTED_DIR}")
    try:
        _probe(q)
    except OSError as e:
        raise UsageError(f"{option} {path}: cannot write in {q} ({e.strerror or e}); "
                         f"accepted: {_ACCEPTED_DIR}") from None


def json_report(profile: str, elapsed: float, backend_options: dict, results, shard=None, **extra) -> str:
    """The text of a ``refconv check --json`` report: the profile, the wall time, the backend
    option values, the shard, ``extra`` (the tolerance; what :func:`refconv.commands.common.run_info` records:
    refconv's version, the seed, the start time, the command line) and one result per variant."""
    return json.dumps({"profile": profile, "seconds": elapsed, "backend_options": backend_options,
                       "shard": shard, **extra, "results": [r.to_dict() for r in results]}, indent=1, default=str)


def write_json(path: str, profile: str, elapsed: float, backend_options: dict, results, shard=None,
               **extra) -> None:
    """Write :func:`json_report` to ``path`` (atomically)."""
    atomic_write(path, json_report(profile, elapsed, backend_options, results, shard=shard, **extra))


def write_junit(path, results, elapsed) -> None:
    """JUnit XML: one testcase per variant; fail -> failure, error -> error, unavailable -> skipped."""
    from xml.sax.saxutils import escape, quoteattr
    n_fail = sum(r.status == "fail" for r in results)
    n_err = sum(r.status == "error" for r in results)
    n_skip = sum(r.status in ("unavailable", "skipped") for r in results)
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             f'<testsuites><testsuite name="refconv" tests="{len(results)}" failures="{n_fail}" '
             f'errors="{n_err}" skipped="{n_skip}" time="{elapsed:.3f}">']
    for r in results:
        vid = VariantId.parse(r.variant)
        lines.append(f'<testcase classname={quoteattr(vid.op + "." + vid.backend)} name={quoteattr(r.variant)} '
                     f'time="{r.seconds:.3f}">')
        body = json.dumps({"failure": r.failure, "findings": r.findings, "reproducer": r.reproducer,
                           **({"database_error": r.database_error} if getattr(r, "database_error", "") else {})},
                          default=str)
        if r.status == "fail":
            lines.append(f'<failure message={quoteattr(r.reason[:500])}>{escape(body)}</failure>')
        elif r.status == "error":
            lines.append(f'<error message={quoteattr(r.reason[:500])}>{escape(body)}</error>')
        elif r.status in ("unavailable", "skipped"):
            lines.append(f'<skipped message={quoteattr(r.reason[:500])}/>')
        lines.append(f"<system-out>{escape(r.statistics)}</system-out></testcase>")
    lines.append("</testsuite></testsuites>")
    atomic_write(path, "\n".join(lines))
