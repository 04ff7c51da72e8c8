"""NVIDIA compute-sanitizer's text reports, turned into refconv finding dicts of the simulator
sanitizer's classes (docs/sanitizer.md): one job, no processes.

The child process (``__main__``) prints a marker line before each example it runs
(:data:`CASE_MARK` + the case as JSON) and one after it (:data:`RESULT_MARK` + the example's
verdict); compute-sanitizer writes its reports into the same stdout as the kernels run, so every
report lies between the markers of the case whose launch it is about.
"""
from __future__ import annotations

import json
import re

CASE_MARK = "@@refconv-case "
RESULT_MARK = "@@refconv-result "
UNAVAILABLE_MARK = "@@refconv-unavailable "
PREFIX = "========="

#: (regex over a report's first line, class); the first match wins
_CLASSES = (
    (re.compile(r"Invalid __(global|shared|local)__ (read|write)", re.I), "out-of-bounds"),
    (re.compile(r"out of bounds|misaligned address|Address .* is out of bounds", re.I), "out-of-bounds"),
    (re.compile(r"Race reported|Potential (RAW|WAR|WAW) hazard", re.I), "shared-race"),
    (re.compile(r"Barrier error|Divergent thread|syncthreads|Invalid arguments", re.I), "barrier-divergence"),
    (re.compile(r"Uninitialized", re.I), "uninitialized-read"),
)
_SKIP = re.compile(r"^(COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|Target application returned"
                   r"|Saved host backtrace|Host Frame|Program hit|This can happen|No error)", re.I)
_KERNEL = re.compile(r"\bat (.+?)\+0x[0-9a-f]+")
_LINE = re.compile(r"in (\S+?\.py):(\d+)")
_THREAD = re.compile(r"thread \((\d+,\s*\d+,\s*\d+)\)", re.I)
_BLOCK = re.compile(r"block \((\d+,\s*\d+,\s*\d+)\)", re.I)


def kernel_name(symbol: str) -> str:
    """The kernel's own name in a symbol as compute-sanitizer prints it, demangled or not:
    ``cudapy::mod::f::<locals>::k[abi:...](Array<double, 1, C, mutable, aligned>, ...)`` -> ``k``,
    ``_ZN6cudapy3mod1kB2v1E5ArrayIdLi1E...`` -> ``k`` (the last length-prefixed name)."""
    name = re.split(r"[(\[]", symbol.strip(), maxsplit=1)[0].strip()
    if name.startswith("_ZN"):                       # Itanium mangling: <len><name> pieces
        parts, i, body = [], 3, name
        while i < len(body) and body[i].isdigit():
            j = i
            while j < len(body) and body[j].isdigit():
                j += 1
            n = int(body[i:j])
            parts.append(body[j:j + n])
            i = j + n
        if parts:
            return re.sub(r"\$\d+$", "", parts[-1])
    return name.split("::")[-1] or symbol


def classify(header: str) -> str | None:
    """The finding class of a report whose first line is ``header``, or None (not a report)."""
    for rx, cls in _CLASSES:
        if rx.search(header):
            return cls
    return None


def reports(text: str) -> list[list[str]]:
    """The reports in compute-sanitizer output: each a list of lines (the ``=========`` prefix
    removed), starting at a line that is not indented."""
    out: list[list[str]] = []
    for raw in text.splitlines():
        if not raw.startswith(PREFIX):
            continue
        line = raw[len(PREFIX):]
        if not line.strip():
            continue
        if not line.startswith("    "):
            out.append([line.strip()])
        elif out:
            out[-1].append(line.strip())
    return out


def findings(text: str, tool: str) -> list[dict]:
    """Finding dicts for the reports in ``text`` (one tool's output for one case): ``class``,
    ``message``, ``tool``, ``severity`` (``error``/``warning``), and where the report says so
    ``kernel``, ``file``, ``line``, ``thread``, ``block``.  Reports of the same class, kernel and
    line are merged, with a ``count``.  A report no class matches is kept as class
    ``compute-sanitizer`` when nothing else was found (a failing tool is never a pass)."""
    merged: dict = {}
    other: list[str] = []
    for rep in reports(text):
        head = rep[0]
        if _SKIP.search(head):
            continue
        cls = classify(head)
        if cls is None:
            if re.search(r"error|invalid|hazard", head, re.I):
                other.append(head)
            continue
        body = " ".join(rep)
        f = {"class": cls, "tool": tool, "severity": "warning" if head.lower().startswith("warning") else "error",
             "message": f"compute-sanitizer {tool}: {head}"}
        m = _KERNEL.search(" ".join(rep[1:]))
        if m:
            f["kernel"] = kernel_name(m.group(1))
        f["report"] = rep[:8]
        m = _LINE.search(body)
        if m:
            f["file"], f["line"] = m.group(1), int(m.group(2))
            f["message"] += f" ({m.group(1).rsplit('/', 1)[-1]}:{m.group(2)})"
        for key, rx in (("thread", _THREAD), ("block", _BLOCK)):
            m = rx.search(body)
            if m:
                f[key] = "(" + m.group(1).replace(" ", "") + ")"
        key = (cls, f.get("kernel"), f.get("line"), f["severity"])
        if key in merged:
            merged[key]["count"] += 1
        else:
            f["count"] = 1
            merged[key] = f
    out = list(merged.values())
    if not out and other:
        out.append({"class": "compute-sanitizer", "tool": tool, "severity": "error", "count": len(other),
                    "message": f"compute-sanitizer {tool}: {other[0]}"})
    return out


def unavailable(stdout: str) -> str | None:
    """The reason the child gave for not running the variant at all (it cannot run there), or None."""
    for line in stdout.splitlines():
        if line.startswith(UNAVAILABLE_MARK):
            return json.loads(line[len(UNAVAILABLE_MARK):])
    return None


def split_cases(stdout: str) -> list[tuple[str, str, dict | None]]:
    """``[(case, text, result)]``: the child's stdout cut at its case markers; ``text`` is what was
    printed while that case ran (compute-sanitizer's reports included), ``result`` the child's
    verdict of the example (``None`` when the child died in it)."""
    out: list = []
    case, buf, result = None, [], None
    for line in stdout.splitlines():
        if line.startswith(UNAVAILABLE_MARK):
            continue
        if line.startswith(CASE_MARK):
            if case is not None:
                out.append((case, "\n".join(buf), result))
            case, buf, result = json.loads(line[len(CASE_MARK):]), [], None
        elif line.startswith(RESULT_MARK):
            result = json.loads(line[len(RESULT_MARK):])
        else:
            buf.append(line)
    if case is not None:
        out.append((case, "\n".join(buf), result))
    elif buf:
        out.append(("(before the first case)", "\n".join(buf), None))
    return out
