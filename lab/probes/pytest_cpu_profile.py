"""CPU seconds of every test of a pytest run, its own and its children's: a pytest plugin.

Each test's cost is the change in ``getrusage(RUSAGE_SELF)`` and ``getrusage(RUSAGE_CHILDREN)``
(user + system) across its run protocol (set-up, call, tear-down), so a test that starts
``refconv check`` subprocesses is charged their CPU (children that were waited for, with their
own waited-for children).  Wall time alone misleads on the 2-core box: the hang tests wait a
minute using almost no CPU, while the suite as a whole is CPU-bound.

Use (one JSON file per xdist worker, rows ``[node id, self s, children s, wall s]``)::

    PYTHONPATH=lab/probes .venv/bin/python -m pytest -n 3 -q -p pytest_cpu_profile
    # rows in $CPU_PROFILE_DIR (default /tmp/cpuprof)/rows_<worker>.json
"""
import json
import os
import resource
import time

import pytest

_rows = []


def _cpu():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    a, b = _cpu()
    t = time.time()
    yield
    a2, b2 = _cpu()
    _rows.append((item.nodeid, a2 - a, b2 - b, time.time() - t))


def pytest_sessionfinish(session):
    out = os.environ.get("CPU_PROFILE_DIR", "/tmp/cpuprof")
    os.makedirs(out, exist_ok=True)
    wid = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(out, f"rows_{wid}.json"), "w") as f:
        json.dump(_rows, f)
