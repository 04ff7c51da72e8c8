"""The compile check's verdict on each traced launch (a record of :mod:`._worker`) given its
kernel's compile result: ``compile-error``, ``launch-error`` (the device's limits: threads,
registers x threads, shared memory), else ``compile-info``.  Each message starts with the reason
(``ptxas: uses 49156 bytes shared, limit 49152``); the kernel's full signature stays in the
finding's ``signature`` field (the JSON report), out of the one-line verdict."""
from __future__ import annotations

import json
import re

from ._findings import finding

MAX_THREADS = 1024
MAX_REGISTERS_PER_BLOCK = 65536
#: static + dynamic shared memory a block may use without opting in (numba never opts in)
MAX_SHARED = 49152

_SHARED_RE = re.compile(r"uses too much shared data \((0x[0-9a-fA-F]+|\d+) bytes, (0x[0-9a-fA-F]+|\d+) max\)")
_REGS_RE = re.compile(r"uses too many registers", re.I)


def summary(error: str, stage: str) -> str:
    """One line naming why a kernel did not compile, from the compiler's whole message."""
    m = _SHARED_RE.search(error)
    if m:
        used, limit = (int(x, 0) for x in m.groups())
        return f"{stage}: uses {used} bytes shared, limit {limit}"
    lines = [s.strip() for s in error.splitlines() if s.strip()]
    pick = next((s for s in lines if "error" in s.lower() and not s.lower().startswith("during:")), None)
    pick = pick or (lines[0] if lines else "no message")
    pick = re.sub(r"\s+", " ", pick)
    return f"{stage}: {pick[:240]}{' ...' if len(pick) > 240 else ''}"


def launch_limit(rec: dict, res: dict) -> str | None:
    """Why a recorded launch cannot launch on the device (threads, registers, shared memory)."""
    threads = 1
    for d in rec["blockdim"]:
        threads *= int(d)
    if threads > MAX_THREADS:
        return f"block {tuple(rec['blockdim'])} has {threads} threads > {MAX_THREADS}"
    if "regs" in res and res["regs"] * threads > MAX_REGISTERS_PER_BLOCK:
        return (f"{res['regs']} registers x {threads} threads = {res['regs'] * threads} "
                f"> {MAX_REGISTERS_PER_BLOCK} registers per block (too many resources requested for launch)")
    static = res.get("smem_ptx", 0)
    if static + rec["sharedmem"] > MAX_SHARED:
        return (f"{static} B static + {rec['sharedmem']} B dynamic shared memory "
                f"> {MAX_SHARED} (48 KiB; numba does not opt in to more)")
    return None


def judge(records: list, results: dict, cc: tuple, out: dict) -> None:
    """Findings of every record into ``out[variant]``: an error once per kernel and cause, an info
    once per kernel, params and signature; ``results[key]`` the compile result of a record's kernel
    (absent: the check could not compile it, a ``compile-check-failed``)."""
    target = f"sm_{cc[0]}{cc[1]}"
    seen: dict = {}
    for rec in records:
        vid, spec, res = rec["variant"], rec["specialisation"], results.get(rec["key"])
        name, params = rec["kernel"], spec["params"]
        where = {k: rec[k] for k in ("kernel", "file", "line", "signature")}
        where.update(cc=target, specialisation=spec)
        if res is None or "failed" in res:
            k = (vid, "failed", name)
            if k not in seen:
                why = (res or {}).get("failed", "it was not compiled")
                seen[k] = finding("compile-check-failed", f"kernel {name} with params {params}: {why}", vid, **where)
            continue
        if "error" in res:
            k = (vid, name, res["error"][:200])
            if k not in seen:
                seen[k] = finding("compile-error", f"{summary(res['error'], res['stage'])} -- kernel {name} does not "
                                  f"compile for {target} with params {params}: {res['error']}", vid,
                                  stage=res["stage"], **where)
            continue
        why = launch_limit(rec, res) if rec["blockdim"] is not None else None
        if why and (vid, "launch", name, why) not in seen:
            seen[(vid, "launch", name, why)] = finding(
                "launch-error", f"{why} -- kernel {name}, params {params}", vid, griddim=rec["griddim"],
                blockdim=rec["blockdim"], sharedmem=rec["sharedmem"], **where)
        ik = (vid, "info", name, json.dumps(params, sort_keys=True, default=str), rec["signature"])
        if ik not in seen:
            extra = ""
            if "regs" in res:
                extra = (f": {res['regs']} registers, {res.get('smem_ptx', 0)} B static smem "
                         f"({res.get('smem', 0)} B with the driver's reserve), "
                         f"{res.get('spill_stores', 0)} B spill stores, {res.get('spill_loads', 0)} B "
                         f"spill loads, {res.get('stack', 0)} B stack")
            seen[ik] = finding("compile-info", f"kernel {name} params {params} compiled for {target}{extra}", vid,
                               host_smem=rec.get("host_smem"), max_registers=rec.get("max_registers"),
                               **{k: res[k] for k in ("regs", "smem", "smem_ptx", "spill_stores", "spill_loads", "stack",
                                                      "ptx_bytes", "seconds", "assembler", "cached") if k in res},
                               **where)
    for k, f in seen.items():                       # errors first, as before
        if f["class"] != "compile-info":
            out.setdefault(f["variant"], []).append(f)
    for k, f in seen.items():
        if f["class"] == "compile-info":
            out.setdefault(f["variant"], []).append(f)
