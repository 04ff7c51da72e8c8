"""Throw-away refconv plugins for the CLI tests: a module plus a ``.dist-info`` folder with its
entry point, in a directory put on ``PYTHONPATH``, so ``importlib.metadata`` finds it exactly as
it finds an installed plugin (no pip, no build)."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path


def plugin_env(root: Path, plugins: dict[str, str], base_env: dict | None = None) -> dict:
    """``plugins``: ``{backend_name: module source defining `backend`}``.  Returns an environment
    whose ``PYTHONPATH`` holds them."""
    root.mkdir(parents=True, exist_ok=True)
    for name, source in plugins.items():
        mod = f"rcplug_{name}"
        (root / f"{mod}.py").write_text(textwrap.dedent(source))
        di = root / f"{mod}-0.1.dist-info"
        di.mkdir(exist_ok=True)
        (di / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {mod}\nVersion: 0.1\n")
        (di / "entry_points.txt").write_text(f"[refconv.backends]\n{name} = {mod}:backend\n")
    env = dict(base_env if base_env is not None else os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["REFCONV_DATABASE"] = "none"
    return env


HEADER = """
import numpy as np
from refconv import Backend, Variant
"""
