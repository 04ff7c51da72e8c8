"""The ``faults_env`` fixture: a subprocess environment that sees the ``faults`` test plugin
(``tests/plugins/refconv-faults``), installed into a private directory like ``buggy_env``; plus
helpers to find the processes a test's variant started (by a unique ``sleep`` argument)."""
from __future__ import annotations

import os
import signal
import uuid

import pytest

from conftest import ROOT, _install_target


@pytest.fixture(scope="session")
def faults_env(tmp_path_factory):
    target = _install_target(tmp_path_factory, "faults_site", ROOT / "tests" / "plugins" / "refconv-faults")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(target)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["REFCONV_DATABASE"] = "none"
    env["PYTHONUNBUFFERED"] = "1"
    return env


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
