"""Hangs are judged on the worker's CPU time (issue 23.5): a busy-looping example is a hang once it
has used the limit of CPU, a sleeping one only once it has been blocked for ``WALL_BACKSTOP`` x the
limit past it, and a slow but correct example on a machine loaded far beyond its cores is not a
hang although its wall time passes the limit many times."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from refconv.procs import WALL_BACKSTOP, ExampleClock, cpu_seconds

pytestmark = pytest.mark.skipif(cpu_seconds(os.getpid()) is None, reason="no /proc/PID/stat here")


def _spawn(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code])


def _stop(*procs) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def _first_hang(clock: ExampleClock, limit: float, proc, give_up: float) -> str | None:
    deadline = time.monotonic() + give_up
    while time.monotonic() < deadline and proc.poll() is None:
        why = clock.hang(limit)
        if why:
            return why
        time.sleep(0.02)
    return None


def test_a_busy_looping_example_is_a_hang_once_it_has_used_the_limit_of_cpu_time():
    p = _spawn("while True: pass")
    try:
        clock = ExampleClock(p.pid)
        why = _first_hang(clock, 0.5, p, give_up=60)
        assert why == "hang: example ran longer than 0.5s of CPU time (killed)", why
        assert clock.cpu() > 0.5
    finally:
        _stop(p)


def test_a_sleeping_example_is_a_hang_once_blocked_for_the_backstop_past_the_limit():
    p = _spawn("import time; time.sleep(120)")
    try:
        clock = ExampleClock(p.pid)
        limit = 0.4
        time.sleep(2 * limit)
        assert clock.hang(limit) is None      # past the limit of wall time, but using no CPU
        why = _first_hang(clock, limit, p, give_up=60)
        assert why is not None and why.startswith("hang: example ran longer than 0.4s: blocked for "), why
        assert clock.wall() > (1 + WALL_BACKSTOP) * limit and clock.cpu() < limit
    finally:
        _stop(p)


def test_a_slow_but_correct_example_on_a_loaded_machine_is_not_a_hang():
    # 4 busy processes per core beside it: the example gets about a quarter of a core or less, so its
    # 0.6 s of CPU take about 2.4 s, past 1.5 x the 1 s limit of wall time; on CPU time it is inside
    load = [_spawn("while True: pass") for _ in range(4 * (os.cpu_count() or 1))]
    p = None
    try:
        time.sleep(0.5)
        p = _spawn("import time\nwhile time.process_time() < 0.6: pass")
        clock = ExampleClock(p.pid)
        limit = 1.0
        while p.poll() is None:
            assert clock.hang(limit) is None, clock.hang(limit)
            time.sleep(0.02)
        assert p.returncode == 0
        assert clock.wall() > 1.5 * limit, "the load did not slow the example: the test proves nothing here"
    finally:
        _stop(*load, *([p] if p else []))


def test_without_a_cpu_clock_the_limit_is_wall_time():
    clock = ExampleClock(None)
    assert clock.cpu() is None and clock.hang(10) is None
    clock.wall0 -= 11
    assert clock.hang(10) == "hang: example ran longer than 10s (killed)"


def test_a_process_waiting_for_its_busy_child_is_runnable_and_a_sleeping_one_is_not():
    """The compile check's workers wait for ptxas: while the compiler runs, the worker is not blocked."""
    from refconv.procs import runnable
    busy = subprocess.Popen([sys.executable, "-c",
                             "import subprocess, sys; subprocess.run([sys.executable, '-c', 'while True: pass'])"])
    idle = subprocess.Popen([sys.executable, "-c",
                             "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import time; time.sleep(60)'])"])
    try:
        time.sleep(1.5)
        assert any(runnable(busy.pid) for _ in range(20))
        assert not any(runnable(idle.pid) for _ in range(5))
    finally:
        for p in (busy, idle):
            for c in _children(p.pid):
                os.kill(c, 9)
            p.kill()
            p.wait()


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def test_a_compile_check_worker_over_its_cpu_limit_is_killed_and_named_a_hang():
    from refconv.backends.numba_cuda.compile_check._pool import _wait_all
    p = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    ok = subprocess.Popen([sys.executable, "-c", "pass"])
    whys = _wait_all([p, ok], 0.5)
    assert whys[1] is None and "compile-check worker ran longer than 0.5s of CPU time" in whys[0]
