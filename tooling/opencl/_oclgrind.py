"""Oclgrind diagnostics as refconv findings.

Oclgrind (a C library inside the process) writes its diagnostics to file descriptor 2.  Inside
:func:`diagnosed`, fd 2 is redirected to a temporary file; afterwards each diagnostic is parsed
into (class, kernel, work-item, source line, message), reported to the checker as a finding and
echoed to the real stderr, once: a ``diagnosed`` block nested in another (``launch`` inside a
variant's own ``diagnosed``) reports and echoes what it captured itself, past the outer capture.  Outside the Oclgrind target :func:`diagnosed` only waits for the
queue.  Host-side calls (context creation, builds, info queries) run under :func:`quiet`, which
drops pyopencl's ``clGet*Info`` probes that Oclgrind's API checker rejects.

The checker's findings are reached only through :func:`_collecting` (the public
``refconv.findings.collecting()``) and :func:`_report` below.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile

OCLGRIND_ENV = {"OCLGRIND_DATA_RACES": "1", "OCLGRIND_CHECK_API": "1"}


# ----------------------------------------------------------------------------- the checker's findings

def _collecting() -> bool:
    """Whether the checker is collecting findings for an example now."""
    from refconv import findings
    return findings.collecting()


def _report(cls: str, message: str, **where) -> None:
    from refconv import findings
    findings.report(cls, message, **where)


@contextlib.contextmanager
def collected():
    """Collect the findings reported inside the block into the yielded list (for a plugin's own
    tests, outside ``refconv check``).  Inside a check the findings also reach the checker."""
    from refconv import findings
    outer = _collecting()
    try:
        with findings.collect() as found:
            yield found
    finally:
        if outer:
            for f in found:
                f = dict(f)
                _report(f.pop("class"), f.pop("message"), **f)


# ----------------------------------------------------------------------------- fd-2 capture

class _Captured:
    text = ""


#: file descriptor 2 as it was outside every capture, while one is active (None otherwise): the
#: echo of a capture nested in another (a ``launch`` inside a variant's ``diagnosed`` block) goes
#: there, not into the outer capture, which would parse it, report it and echo it a second time
_real_stderr: int | None = None


@contextlib.contextmanager
def _captured_stderr():
    """Redirect file descriptor 2 to a temporary file for the block; the captured text is in the
    yielded object's ``text`` afterwards, even if the block raised."""
    try:
        sys.stderr.flush()
    except Exception:
        pass
    global _real_stderr
    cap = _Captured()
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(2)
        outermost = _real_stderr is None
        if outermost:
            _real_stderr = saved
        os.dup2(tmp.fileno(), 2)
        try:
            yield cap
        finally:
            os.dup2(saved, 2)
            if outermost:
                _real_stderr = None
            os.close(saved)
            tmp.seek(0)
            cap.text = tmp.read().decode("utf-8", "replace")


def _echo(s: str) -> None:
    """Write ``s`` to the real stderr (outside every capture: see :data:`_real_stderr`), once."""
    try:
        sys.stderr.flush()
        if _real_stderr is not None:
            os.write(_real_stderr, s.encode("utf-8", "replace"))
        else:
            sys.stderr.write(s)
            sys.stderr.flush()
    except Exception:
        pass


class OclgrindCannotRun(RuntimeError):
    """Oclgrind, the instrument, failed on a kernel (its ``OCLGRIND FATAL ERROR``, e.g. an LLVM
    intrinsic it does not interpret): the kernel was not run, and nothing is known about it.  The
    message says so, quotes Oclgrind's error and, where the cause is known, what avoids it."""

    def __reduce__(self):  # picklable across refconv's worker processes
        return (type(self), self.args)


_FATAL = re.compile(r"OCLGRIND FATAL ERROR[^\n]*\n(?P<what>[^\n]*)(?P<rest>(?:\n[^\n]+)*)")
_UNDEFINED = re.compile(r"Undefined external function: (\S+)")


def instrument_failure(text: str) -> str | None:
    """The message of an :class:`OclgrindCannotRun` for Oclgrind's captured stderr ``text``, or
    None when it holds no fatal error of Oclgrind's."""
    m = _FATAL.search(text)
    if not m:
        return None
    said = " ".join((m.group("what") + m.group("rest")).split())
    msg = f"Oclgrind (the instrument) could not run this kernel, so it was not checked here: {said}."
    u = _UNDEFINED.search(said)
    if u and u.group(1).startswith("llvm."):
        msg += (f" {u.group(1)} is an LLVM intrinsic that Oclgrind's compiler made of the kernel's code and "
                "that Oclgrind's interpreter does not implement (https://github.com/jrprice/Oclgrind/issues/205;"
                " tests/oclgrind_probes/funnel_shift.cl): a limit of the instrument, not a fault of the kernel."
                " Check the kernel on PoCL or a GPU, or write the expression so that no such intrinsic results.")
    elif u:
        msg += (f" {u.group(1)} is called but not defined in the program: a helper declared plain `inline`"
                " has no external definition in C99 (OpenCL C); declare it `static inline`.")
    return msg


@contextlib.contextmanager
def quiet(t: str):
    """On Oclgrind, host-side calls make its API checker print pyopencl's probes of parameters it
    does not know: drop those, echo anything else.  An exception leaving the block after an
    ``OCLGRIND FATAL ERROR`` (a kernel Oclgrind cannot take, reported by pyopencl as
    ``INVALID_KERNEL_NAME``) becomes :class:`OclgrindCannotRun`.  Other targets: nothing."""
    if t != "oclgrind":
        yield
        return
    cap = None
    try:
        try:
            with _captured_stderr() as cap:
                yield
        except Exception as exc:
            why = instrument_failure(cap.text if cap is not None else "")
            if why and not isinstance(exc, OclgrindCannotRun):
                raise OclgrindCannotRun(why) from exc
            raise
    finally:
        text = cap.text if cap is not None else ""
        keep = [b for b in re.split(r"\n\s*\n", text) if b.strip() and not _BENIGN.search(b)]
        if keep:
            _echo("\n\n".join(keep) + "\n")


# ----------------------------------------------------------------------------- parsing

_HEAD = [
    (re.compile(r"^(Read-write|Write-write|Read-read)? ?data race", re.I), "data-race"),
    (re.compile(r"^Invalid read", re.I), "invalid-read"),
    (re.compile(r"^Invalid write", re.I), "invalid-write"),
    (re.compile(r"divergence", re.I), "barrier-divergence"),
    (re.compile(r"uninitiali[sz]ed", re.I), "uninitialized"),
    (re.compile(r"^OpenCL runtime error", re.I), "api-error"),
    (re.compile(r"Oclgrind - OpenCL runtime error", re.I), "api-error"),
    (re.compile(r"unsupported instruction|unreachable|fatal|abort|segmentation|unhandled", re.I), "checker-crash"),
    (re.compile(r"^Invalid|illegal|out of bounds|out-of-bounds", re.I), "invalid-access"),
]
_GLOBAL = re.compile(r"Global\(([^)]*)\)")
_LOCAL = re.compile(r"Local\(([^)]*)\)")
_GROUP = re.compile(r"(?:Group|Work-group:\s*)\(([^)]*)\)")
_LINE = re.compile(r"At line (\d+)(?: \(column \d+\))? of ([^:\s]+)")
# host-side probes (pyopencl asking a clGet*Info parameter Oclgrind does not know): not a
# kernel's fault, not a finding.
_BENIGN = re.compile(r"Function:\s*clGet\w*Info\s+Error:\s*CL_INVALID_VALUE\s+For argument 'param_name'", re.S)
_KERNEL = re.compile(r"Kernel:\s*(\S+)")


def parse_oclgrind(text: str) -> list[dict]:
    """Split Oclgrind's stderr into diagnostics: a diagnostic starts at an unindented line and
    continues over the indented lines after it.  Unknown unindented text that looks like an
    error is kept as class ``oclgrind``."""
    blocks, cur = [], None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace() or cur is None:
            cur = [line]
            blocks.append(cur)
        else:
            cur.append(line)
    out = []
    for b in blocks:
        head = b[0].strip()
        body = "\n".join(b)
        if _BENIGN.search(body):
            continue
        cls = None
        for rx, c in _HEAD:
            if rx.search(head):
                cls = c
                break
        if cls is None:
            if re.search(r"error|warning|invalid|race|diverge", body, re.I):
                cls = "oclgrind"
            else:
                continue
        where = {}
        m = _KERNEL.search(body)
        if m:
            where["kernel"] = m.group(1)
        for key, rx in (("work_item", _GLOBAL), ("local_item", _LOCAL), ("work_group", _GROUP)):
            g = rx.search(body)
            if g:
                where[key] = tuple(int(x) for x in g.group(1).split(",") if x.strip())
        lines = [int(x.group(1)) for x in _LINE.finditer(body)]
        if lines:
            where["line"] = lines[0]
            if len(lines) > 1:
                where["lines"] = tuple(lines)
        out.append({"class": cls, "message": head, "detail": body, **where})
    return out


# ----------------------------------------------------------------------------- launches

#: the (what, class, kernel, source lines) of every diagnostic echoed by this process: Hypothesis
#: runs a failing case again (shrinking, then once more to report it), and each run's findings
#: are reported, but the same diagnostic is printed once
_echoed: set = set()


@contextlib.contextmanager
def diagnosed(e, what: str, source: str = ""):
    """Run launches inside and wait for ``e.queue`` at the end.  On Oclgrind, capture fd 2 over
    the block, report each distinct diagnostic as a finding (one per (class, kernel, source
    lines), with a count) and echo it (once per process: a case run again reports its findings
    again, but does not print them again); an exception raised inside on Oclgrind is also reported
    (class ``checker-crash``) before it propagates."""
    if e.target != "oclgrind":
        yield
        e.queue.finish()
        return
    exc = None
    with _captured_stderr() as cap:
        try:
            yield
            e.queue.finish()
        except BaseException as x:  # reported below, then re-raised
            exc = x
    diags = parse_oclgrind(cap.text)
    seen: dict = {}
    for d in diags:
        key = (d["class"], d.get("kernel"), tuple(sorted(set(d.get("lines", (d.get("line"),))), key=str)))
        if key in seen:
            seen[key]["count"] += 1
            continue
        where = {k: d[k] for k in ("kernel", "work_item", "local_item", "work_group", "line", "lines") if k in d}
        if source:
            where["source"] = source
        seen[key] = {"class": d["class"], "message": f"{what}: {d['message']}", "detail": d["detail"],
                     "count": 1, **where}
    for f in seen.values():
        f = dict(f)
        cls, msg = f.pop("class"), f.pop("message")
        if f["count"] > 1:
            msg += f" (and {f['count'] - 1} more like it)"
        _report(cls, msg, **f)
    new = [k for k in seen if (what, k) not in _echoed]
    if new:
        _echoed.update((what, k) for k in new)
        shown = "\n\n".join(seen[k]["detail"] for k in new)
        again = f", {len(seen) - len(new)} shown before" if len(new) < len(seen) else ""
        _echo(f"[refconv opencl/oclgrind] {what}: {len(diags)} diagnostic(s), {len(seen)} distinct{again}:\n{shown}\n")
    if exc is not None:
        _report("checker-crash", f"{what}: {type(exc).__name__}: {exc}")
        raise exc
