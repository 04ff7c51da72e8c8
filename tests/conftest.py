"""Shared fixtures (the helpers are in ``tests/helpers.py``): the test-only plugin packages,
installed into a private directory so that the user's environment never sees the deliberately
wrong variants; the ``slow`` tier; and the guard against unintended plugin-API-1 variants."""
from __future__ import annotations

import os
import sys

import pytest
from helpers import ROOT, env_with_path, install_target

#: ``pytester``: the pytest plugin's tests run pytest in a fresh folder outside the repository
pytest_plugins = ["pytester"]


# pytest-xdist's workers inherit COLUMNS=80 / LINES=24 (execnet's default terminal); without
# xdist, GNU readline, which pytest's capture imports before the conftests load
# (`_readline_workaround`), puts them in the C environment, where os.environ does not see them
# but every subprocess inherits them.  A `refconv` subprocess a test starts would then print
# 80-column tables (ids kept, other columns left out); without them it prints at 200 columns when
# not on a terminal, as for a user's pipe.  A test that wants a width sets COLUMNS itself.
for _var in ("COLUMNS", "LINES"):
    os.environ.pop(_var, None)
    os.unsetenv(_var)

# One BLAS / OpenMP thread per process: the suite already runs several processes per core (xdist
# workers, each test's `refconv` subprocesses and their workers), and BLAS pools of one thread per
# core in each of them, spinning between calls, only take CPU from the others.  Set before the
# workers start; a value the user gave is kept.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def _numba_cuda_as_auto_mode_picks() -> None:
    """Without a GPU, every ``numba.cuda`` this test process imports is the simulator, as
    ``--cuda auto`` would pick: a test module that imports CUDA kernels in-process (the sanitizer
    corpus) would otherwise import ``numba.cuda`` in GPU mode, and the tests after it in the same
    worker that run numba_cuda variants in-process would meet a GPU-mode numba with no driver."""
    if "numba.cuda" in sys.modules or os.environ.get("NUMBA_ENABLE_CUDASIM"):
        return
    try:
        from refconv.tooling.cuda._env import detect_gpu
    except ImportError:
        return
    if not detect_gpu()[0]:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"


_numba_cuda_as_auto_mode_picks()


@pytest.fixture(scope="module")
def sim():
    """numba_cuda on the CUDA simulator for the module's in-process kernel runs (skip if unavailable)."""
    from refconv import cuda as rc
    rc.configure("sim")
    if rc.reason():
        pytest.skip(str(rc.reason()))


@pytest.fixture(scope="module")
def pocl():
    """OpenCL on PoCL for the module's in-process kernel runs (skip if pyopencl or PoCL is missing)."""
    pytest.importorskip("pyopencl")
    from refconv import opencl as oc
    with oc.using("pocl"):
        if oc.available():
            pytest.skip(oc.available())
        yield


@pytest.fixture(scope="session")
def buggy_env(tmp_path_factory):
    """Environment for a subprocess that sees the ``buggy`` plugin (installed into a private
    --target directory put on PYTHONPATH: its entry points are discovered like any plugin's)."""
    return env_with_path(install_target(tmp_path_factory, "buggy_site", ROOT / "tests" / "plugins" / "refconv-buggy"))


@pytest.fixture(scope="session")
def faults_env(tmp_path_factory):
    """Environment for a subprocess that sees the ``faults`` plugin (``tests/plugins/refconv-faults``)."""
    return env_with_path(install_target(tmp_path_factory, "faults_site", ROOT / "tests" / "plugins" / "refconv-faults"))


#: test modules (by file name, in tests/ or tests/meta/) made of ``refconv check`` / pytest
#: subprocess runs: marked ``slow``, so that ``pytest -m "not slow"`` is the fast tier (the
#: README's command runs both)
SLOW_MODULES = {"test_conformance", "test_cli", "test_cli_verdicts", "test_pytest_plugin", "test_checker_catches_bugs",
                "test_runner_faults", "test_shard_merge", "test_sanitizer", "test_sanitizer_opencl",
                "test_compile_check", "test_sim_scheduler", "test_opencl_oclgrind", "test_bench_timing",
                "test_repro_options", "test_third_party_opencl", "test_third_party_cuda", "test_bench_faults",
                "test_kernel_resources"}


#: the longest tests (minutes of CPU each on 2 cores), run first so that under ``-n 2`` no worker
#: is left with one of them at the end while the other idles; the rest keep their order
LONGEST_FIRST = ("test_conformance.py::test_every_available_variant_passes[numba_cuda-sim-filter2d",
                 "test_conformance.py::test_every_available_variant_passes[opencl-pocl-filter2d",
                 "test_conformance.py::test_every_available_variant_passes[numba_cuda-sim-sobel",
                 "test_conformance.py::")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """``-n N`` without ``--dist``: worksteal, not xdist's ``load`` (an idle worker takes queued
    tests from a busy one; the suite mixes tests of seconds with tests of minutes)."""
    opt = config.option
    if getattr(opt, "numprocesses", None) and getattr(opt, "dist", "no") == "no" and not opt.distload:
        opt.dist = "worksteal"


def _rank(item) -> int:
    nodeid = item.nodeid.rpartition("/")[2]
    return next((i for i, head in enumerate(LONGEST_FIRST) if nodeid.startswith(head)), len(LONGEST_FIRST))


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = getattr(item, "module", None)   # the refconv plugin's items have no module
        if module is not None and module.__name__.rpartition(".")[2] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    items.sort(key=_rank)    # stable: within a rank, collection order


#: the text of the DeprecationWarning ``refconv.variant.run_variant`` gives a plugin-API-1 variant
API_1 = "plugin API 1"


def _api_1_on_purpose(item) -> bool:
    """The test runs plugin-API-1 variants on purpose: it carries
    ``@pytest.mark.filterwarnings("default:.*plugin API 1:DeprecationWarning")`` (or another
    non-``error`` action for that message)."""
    return any(isinstance(a, str) and API_1 in a and not a.startswith("error")
               for m in item.iter_markers("filterwarnings") for a in m.args)


def _api_1_warned() -> set:
    """The ids of the variants ``run_variant`` has warned about in this process (it warns once per
    variant id); empty before ``refconv.variant`` is imported, or once API 1 is gone."""
    return set(getattr(sys.modules.get("refconv.variant"), "_warned", ()))


@pytest.fixture(autouse=True)
def _no_unintended_plugin_api_1(request):
    """Every variant the tests define is written for plugin API 2.  pyproject's ``filterwarnings``
    turns the API-1 DeprecationWarning into an error, but the checker reports what a variant's run
    raises as an ``error`` result instead of raising it, so a test expecting an error (or counting
    failures) could still pass: this fails the test by the warning's bookkeeping as well."""
    before = _api_1_warned()
    yield
    new = sorted(_api_1_warned() - before)
    if new and not _api_1_on_purpose(request.node):
        pytest.fail(f"plugin API 1 variant(s) run by a test not marked as running them on purpose: {', '.join(new)}"
                    f" (write run(problem, out, **params); see docs/plugins.md)", pytrace=False)
