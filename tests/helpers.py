"""Helpers of the test suite, imported as ``from helpers import ...`` (``tests/`` is on
``sys.path`` under pytest's default import mode; the fixtures are in ``conftest.py``):

* :func:`refconv_cli`: run the ``refconv`` command of this interpreter's environment;
* :func:`install_target`: ``pip install --target`` a test-only plugin package into a private
  directory (the ``buggy_env`` / ``faults_env`` fixtures put it on ``PYTHONPATH``);
* :func:`plugin_env`: throw-away refconv plugins for the CLI tests: a module plus a
  ``.dist-info`` folder with its entry point, in a directory put on ``PYTHONPATH``, so
  ``importlib.metadata`` finds it exactly as it finds an installed plugin (no pip, no build);
* :func:`sleep_marker`, :func:`processes_with_arg`, :func:`kill_pids`: find (and clean up) the
  processes a test's variant started, by a unique ``sleep`` argument.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

#: the repository root
ROOT = Path(__file__).resolve().parent.parent


def refconv_cli(*args, env=None, cwd=None, timeout=600):
    """Run the ``refconv`` command of this interpreter's environment."""
    return subprocess.run([sys.executable, "-m", "refconv", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def install_target(tmp_path_factory, name: str, src: Path) -> Path:
    """``pip install --no-deps --target`` the package at ``src`` into a fresh temporary directory."""
    target = tmp_path_factory.mktemp(name)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(src)],
                   check=True, capture_output=True, text=True)
    return target


def env_with_path(target: Path, base_env: dict | None = None) -> dict:
    """An environment for a ``refconv`` subprocess that sees the packages under ``target``."""
    env = dict(base_env if base_env is not None else os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(target)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["REFCONV_DATABASE"] = "none"
    env["PYTHONUNBUFFERED"] = "1"
    return env


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


def sleep_marker() -> str:
    """A ``sleep`` duration no other process uses (300 s and a unique fraction)."""
    return f"300.{uuid.uuid4().int % 10**9:09d}"


def processes_with_arg(arg: str) -> list[int]:
    """PIDs of live processes whose command line has ``arg`` as one of its arguments."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{d}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if arg.encode() in argv and state != "Z":
            pids.append(int(d))
    return pids


def kill_pids(pids) -> None:
    """Clean-up after a failed assertion: kill the processes this test's variant started."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def one_ulp_off(acc, index):
    """The verdict of ``acc`` on its own expected result with the element at ``index`` moved one
    ulp up: an exact acceptance must reject exactly that element."""
    import numpy as np
    got = acc.expected.copy()
    got[index] = np.nextafter(got[index], np.array(np.inf, got.dtype))
    return acc.check(got)
