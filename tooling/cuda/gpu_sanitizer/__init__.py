"""``refconv check --cuda gpu --sanitize``: the numba_cuda variants' kernels on the GPU under
NVIDIA compute-sanitizer, and once more under the simulator sanitizer, as a preflight step
(``Backend.preflight``; the core names no backend).

For each variant, child processes (``python -m refconv.tooling.cuda.gpu_sanitizer``) run
the same ``examples`` cases -- drawn by the checker's strategy with a fixed seed -- under each of
:data:`TOOLS` (``racecheck`` with ``--racecheck-report hazard``) and once under the simulator with
refconv's sanitizer, which sees what compute-sanitizer misses (an early return before a barrier:
exited threads do not hold up ``bar.sync`` on current GPUs; a negative shared index, which numba
wraps).  The tools' reports become findings of the simulator sanitizer's classes
(:mod:`._parse`), each with the variant's ``case``, the ``tool`` and where it was seen; they fail
the variant through the preflight (refconv.preflight).  A child that crashes or times out is a
``gpu-sanitizer-failed`` finding, never a pass.

compute-sanitizer is looked up on ``PATH``, then in ``$CUDA_HOME/bin`` (default
``/usr/local/cuda``); :func:`missing` is the reason the backend reports (``refconv check``
exits 2) when ``--sanitize`` asks for it on a GPU and it is not there.  Settings (environment):
``REFCONV_GPU_SANITIZE_EXAMPLES`` (cases per variant, default 6), ``REFCONV_GPU_SANITIZE_JOBS``
(child processes at a time, default the CPU count, at most 8), ``REFCONV_GPU_SANITIZE_TIMEOUT``
(seconds per child, default 900).  See docs/sanitizer.md, *On a GPU*.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from ._parse import findings as tool_findings
from ._parse import split_cases, unavailable

#: the compute-sanitizer tools run, with their extra arguments
TOOLS = {"memcheck": (), "racecheck": ("--racecheck-report", "hazard"), "synccheck": (), "initcheck": ()}


def find_tool() -> str | None:
    """The path of ``compute-sanitizer``: on ``PATH``, else ``$CUDA_HOME/bin`` (default
    ``/usr/local/cuda``); None when neither has it."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    cand = os.path.join(home, "bin", "compute-sanitizer")
    return cand if os.access(cand, os.X_OK) else None


def missing() -> str | None:
    """Why ``--sanitize`` cannot run on this GPU, or None."""
    if find_tool():
        return None
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    return (f"--sanitize on a GPU runs the kernels under NVIDIA compute-sanitizer, which is neither on PATH "
            f"nor in {home}/bin (CUDA_HOME); install the CUDA toolkit's compute-sanitizer, set CUDA_HOME, or "
            f"check under the simulator (--cuda sim), where refconv's sanitizer is on by default")


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        raise ValueError(f"environment {name}={raw!r} not accepted; accepted: a whole number") from None


def _child(variant_id: str, where: str, examples: int, seed: int, tool: str | None, timeout: float):
    """Run one child; ``(stdout, stderr, returncode)`` (``returncode`` None: timed out)."""
    cmd = [sys.executable, "-m", __name__, "--variant", variant_id, "--where", where,
           "--examples", str(examples), "--seed", str(seed)]
    if tool:
        cmd = [find_tool(), "--tool", tool, *TOOLS[tool], "--print-limit", "100", *cmd]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)          # the child's configure sets it for its mode
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return out, "", None
    return p.stdout, p.stderr, p.returncode


def _judge(variant_id: str, where: str, tool: str | None, out: str, err: str, rc) -> list[dict]:
    """The findings of one child's run (its cases' tool reports, or the simulator's findings),
    ending with a ``gpu-sanitizer-info`` report of what ran (a report, not an error)."""
    label = tool or "simulator sanitizer"
    found: list[dict] = []
    skipped = unavailable(out) if rc == 0 else None
    if skipped:
        return [{"class": "gpu-sanitizer-info", "tool": label, "where": "simulator" if not tool else "GPU",
                 "message": f"{label}: {variant_id} not run there: {skipped}"}]
    parts = split_cases(out)
    for case, text, result in parts:
        if tool:
            new = tool_findings(text, tool)
        else:
            new = [dict(f, tool=label) for f in ((result or {}).get("findings") or [])]
        for f in new:
            f.setdefault("case", case)
            f["where"] = "GPU" if tool else "simulator"
            found.append(f)
    ran = [r for _, _, r in parts if r is not None]
    if rc is None or (rc != 0 and not found) or not ran:
        why = "timed out" if rc is None else (f"exited with {rc}" if rc else "ran no case")
        tail = (err or out).strip().splitlines()[-6:]
        found.append({"class": "gpu-sanitizer-failed", "tool": label, "where": "GPU" if tool else "simulator",
                      "message": f"{label} run of {variant_id} {why}: " + " | ".join(tail)[-600:]})
    n_err = sum(1 for f in found if f["class"] != "gpu-sanitizer-failed")
    found.append({"class": "gpu-sanitizer-info", "tool": label, "where": "GPU" if tool else "simulator",
                  "cases": len(ran), "message": f"{label}: {len(ran)} case(s) run, "
                                               f"{n_err and f'{n_err} finding(s)' or 'clean'}"})
    return found


def _merge(found: list[dict]) -> list[dict]:
    """One finding per (class, tool, kernel, line), with the summed ``count`` and the first case."""
    out: dict = {}
    for f in found:
        key = (f.get("class"), f.get("tool"), f.get("kernel"), f.get("line"), f.get("array"))
        if key in out:
            out[key]["count"] = out[key].get("count", 1) + f.get("count", 1)
        else:
            out[key] = dict(f)
    return list(out.values())


def preflight(variants, options) -> dict:
    """``{variant_id: [finding dicts]}`` for every variant in ``variants``: the GPU and simulator
    runs.  The backend's preflight calls it when ``--sanitize`` runs on a GPU
    (``_env.gpu_sanitizing()``)."""
    variants = list(variants)
    if not variants:
        return {}
    examples = _int_env("REFCONV_GPU_SANITIZE_EXAMPLES", 6)
    jobs = _int_env("REFCONV_GPU_SANITIZE_JOBS", min(8, os.cpu_count() or 1))
    timeout = _int_env("REFCONV_GPU_SANITIZE_TIMEOUT", 900)
    seed = 0
    runs = [(v.id, "gpu", t) for v in variants for t in TOOLS] + [(v.id, "sim", None) for v in variants]

    def go(job):
        vid, where, tool = job
        out, err, rc = _child(vid, where, examples, seed, tool, timeout)
        return vid, _judge(vid, where, tool, out, err, rc)

    result: dict = {v.id: [] for v in variants}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for vid, found in pool.map(go, runs):
            result[vid].extend(found)
    return {vid: _merge(found) for vid, found in result.items() if found}
