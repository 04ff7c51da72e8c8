"""One worker process (issue 41.7): the check, the hang shrink, the replay and the bench's rows all
run their work in :class:`refconv.worker.Worker`, so the prologue (process group, parent-death
signal, environment, backend options), the poll loop (the hang rule, crash detection) and the
killing of the tree exist once.  No other module of the engine starts a process or polls a pipe."""
from __future__ import annotations

import re

import pytest
from helpers import ROOT

#: what only refconv/worker.py (and the primitives of refconv/procs.py) may do
PROCESS_WORK = re.compile(r"\.Process\(|get_context\(|\.poll\(|start_own_group\(|start_worker\(|exit_like\(")


def test_no_engine_module_but_the_worker_starts_a_process_or_polls_a_pipe():
    allowed = {ROOT / "refconv" / "worker.py", ROOT / "refconv" / "procs.py"}
    offenders = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
                 for p in sorted((ROOT / "refconv").rglob("*.py")) if p not in allowed
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if PROCESS_WORK.search(line.split("#", 1)[0])]
    assert not offenders, "worker-process work outside refconv/worker.py:\n" + "\n".join(offenders)


@pytest.mark.parametrize("module", ["refconv/pool.py", "refconv/hang_shrink.py", "refconv/repro.py",
                                    "refconv/bench/worker.py"])
def test_each_user_of_a_worker_goes_through_the_one_worker(module):
    text = (ROOT / module).read_text(encoding="utf-8")
    assert re.search(r"from \.+worker import .*\bWorker\b", text), f"{module} does not use refconv.worker.Worker"
