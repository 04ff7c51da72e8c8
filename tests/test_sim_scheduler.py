"""refconv's simulator block scheduler (tooling/cuda/sim_scheduler.py: the threads of a block as
greenlets of the launching OS thread) keeps the simulator's semantics: barriers, early exits, syncthreads_count, errors naming thread and
block -- compared scenario by scenario with numba-cuda's own polling scheduler."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba_cuda")
CASES = Path(__file__).resolve().parent / "sim_scheduler_cases.py"


def _run(scheduler):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", REFCONV_SIM_SCHEDULER=scheduler)
    p = subprocess.run([sys.executable, str(CASES)], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def both():
    return _run("event"), _run("numba")


def test_event_scheduler_is_installed_and_the_escape_hatch_keeps_numbas(both):
    event, numba = both
    assert event["installed"] is True and numba["installed"] is False


def test_barrier_reduction_is_right(both):
    event, _ = both
    assert event["tree_sum"] == event["tree_sum_expected"]
    assert event["after_error"] == event["tree_sum_expected"]


@pytest.mark.parametrize("key", ["tree_sum", "early_return", "count", "after_error"])
def test_same_results_as_the_simulators_own_scheduler(both, key):
    event, numba = both
    assert event[key] == numba[key]


def test_early_exit_releases_the_barrier_like_the_simulator(both):
    event, _ = both
    assert event["early_return"] == [1, 2, 3, 0]


def test_an_error_names_thread_and_block(both):
    event, numba = both
    assert event["raised"] and "tid=[5, 0, 0]" in event["raised"] and "ctaid=[1, 0, 0]" in event["raised"]
    assert event["raised"].split(":")[0] == numba["raised"].split(":")[0]


def test_warp_shuffles_run_on_refconvs_scheduler_only(both):
    event, numba = both
    assert event["warp_sum"] == event["warp_sum_expected"] and event["warps_supported"] is True
    # the simulator's own scheduler has no warp-level operations (warp_shuffle: unavailable)
    assert numba["warp_sum"] == "AttributeError" and numba["warps_supported"] is False


def test_uninstall_takes_the_warp_operations_off_the_simulated_module(both):
    event, _ = both
    assert event["shfl_after_uninstall"] is False


def test_blocks_run_in_the_launching_thread_without_os_threads(both):
    event, numba = both
    # the simulator's own scheduler starts an OS thread per CUDA thread; refconv's starts none
    assert event["threads_alive"] == 1
    assert event["threads_after_many_shapes"] == 1


def test_a_run_is_deterministic(both):
    event, _ = both
    # threads run in threadIdx order from one blocking point to the next: a racy kernel gives
    # the same values in every run
    assert event["racy_runs"][0] == event["racy_runs"][1] == event["racy_runs"][2]


def test_a_spin_lock_on_an_atomic_makes_progress(both):
    event, numba = both
    # every atomic operation lets the other threads of the block run first
    assert event["locked_sum"] == event["locked_sum_expected"] == numba["locked_sum"]


@pytest.mark.parametrize("scheduler", [0, 1], ids=["refconv", "numba"])
def test_device_functions_waiting_at_barriers_see_the_fake_module_and_it_is_undone_after(both, scheduler):
    res = both[scheduler]
    assert res["device_tree_sum"] == res["device_tree_sum_expected"]
    assert res["cuda_restored_after_launch"] is True
