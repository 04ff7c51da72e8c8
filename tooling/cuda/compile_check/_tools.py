"""Tool discovery for the compile check: compute capabilities and the ``ptxas`` binary."""
from __future__ import annotations

import glob
import os
import shutil

DEFAULT_CC = "sm_90"


def parse_cc(cc) -> tuple:
    """``"sm_90"``, ``"90"``, ``"9.0"``, ``(9, 0)`` -> ``(9, 0)``."""
    if isinstance(cc, (tuple, list)):
        return int(cc[0]), int(cc[1])
    s = str(cc).strip().lower().removeprefix("sm_").removeprefix("compute_").rstrip("a")
    if "." in s:
        a, b = s.split(".", 1)
        return int(a), int(b)
    if not s.isdigit() or len(s) < 2:
        raise ValueError(f"compute capability {cc!r}: expected e.g. sm_90, 90 or 9.0")
    return int(s[:-1]), int(s[-1])


def find_ptxas() -> str | None:
    p = os.environ.get("REFCONV_PTXAS") or shutil.which("ptxas")
    if p:
        return p
    cands = []
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            cands.append(os.path.join(root, "bin", "ptxas"))
    cands += sorted(glob.glob("/usr/local/cuda-*/bin/ptxas"), reverse=True)
    for c in cands:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None
