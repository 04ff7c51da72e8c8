"""The simulator sanitizer (refconv.tooling.cuda.sanitizer) on the CUDA bug corpus: the
right class AND the right source line for every bug, nothing on clean kernels, nothing on the
shipped numba_cuda variants."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba_cuda")

HERE = Path(__file__).resolve().parent
RUN = HERE / "sanitizer_corpus" / "run_sim.py"


def _run(*args, timeout=600):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONUNBUFFERED="1")
    p = subprocess.run([sys.executable, str(RUN), *args], capture_output=True, text=True, timeout=timeout,
                       env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def corpus():
    return _run("corpus")


@pytest.fixture(scope="module")
def corpus_plain():
    return _run("corpus", "--plain")


def _marker(name):
    from sanitizer_corpus import cuda_kernels as ck
    return ck.marker_line(name)


CASES = {
    # case: (class, lines any matching finding must name via line/other_line)
    "neg_shared_index": ("out-of-bounds", ["neg_shared"]),
    "global_oob": ("out-of-bounds", ["global_oob"]),
    "tile_missing_barrier": ("shared-race", ["tile_read", "tile_write"]),
    "warp_reduce_no_barrier": ("shared-race", ["warp_race"]),
    "early_return_sum": ("barrier-divergence", ["early_return"]),
    "fused_partial_stage": ("barrier-divergence", ["fused_barrier"]),
    "uninit_shared": ("uninitialized-read", ["uninit"]),
    "uninit_local": ("uninitialized-read", ["uninit_local"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bug_is_found_with_class_and_line(corpus, case):
    cls, markers = CASES[case]
    lines = {_marker(m) for m in markers}
    fs = corpus[case]["findings"]
    hits = [f for f in fs if f["class"] == cls]
    assert hits, f"{case}: no {cls} finding; got {[(f['class'], f.get('line')) for f in fs]}"
    if cls == "shared-race":
        # the race is reported at the second of the two accesses: either end names the bug lines
        ok = [f for f in hits if f["line"] in lines or f.get("other_line") in lines]
    else:
        ok = [f for f in hits if f["line"] in lines]
    assert ok, f"{case}: {cls} reported at lines {[f['line'] for f in hits]}, expected {sorted(lines)}"
    f = ok[0]
    assert f["kernel"] == case if case != "fused_partial_stage" else f["kernel"] == "fused_partial_stage"
    assert len(f["block"]) == 3 and len(f["thread"]) == 3
    assert f["file"].endswith("cuda_kernels.py")
    if cls in ("out-of-bounds", "uninitialized-read", "shared-race"):
        assert f["array"] and f["index"] is not None


def test_details(corpus):
    neg = [f for f in corpus["neg_shared_index"]["findings"] if f["class"] == "out-of-bounds"][0]
    assert neg["array"] == "s" and neg["index"] == [-1] and neg["thread"] == [0, 0, 0] and neg["memory"] == "shared"
    g = {(f["array"], f["access"]) for f in corpus["global_oob"]["findings"]}
    assert ("a", "read") in g and ("out", "write") in g
    loc = [f for f in corpus["uninit_local"]["findings"] if f["class"] == "uninitialized-read"][0]
    assert loc["array"] == "acc" and loc["index"] == [3] and loc["memory"] == "local"
    er = [f for f in corpus["early_return_sum"]["findings"] if f["class"] == "barrier-divergence"][0]
    assert er["block"] == [1, 0, 0] and er["exited"] == 88 and er["waiting"] == 40


@pytest.mark.parametrize("case", ["clean_tile", "clean_reduce", "clean_histogram", "global_shape"])
def test_clean_kernels_have_no_findings(corpus, case):
    assert corpus[case]["findings"] == [], corpus[case]["findings"]
    assert corpus[case]["ok"]


def test_plain_simulator_hides_the_bugs(corpus_plain):
    """Without the sanitizer: no findings at all, and some buggy kernels even give right outputs."""
    assert all(not r["findings"] for r in corpus_plain.values())
    assert corpus_plain["global_oob"]["ok"] or corpus_plain["global_oob"]["error"]


def test_poison_makes_uninitialised_results_visible(corpus):
    assert not corpus["uninit_shared"]["ok"]
    assert not corpus["uninit_local"]["ok"]
    assert not corpus["fused_partial_stage"]["ok"]


def test_enable_is_idempotent_and_late():
    """enable() after kernels were defined and launched once; twice is harmless."""
    code = r"""
import os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
from refconv import findings
from sanitizer_corpus import cuda_kernels as ck
ck.run_uninit_shared()
from refconv.tooling.cuda.sanitizer import enable, disable, is_enabled
enable(); enable()
with findings.collect() as fs:
    ck.run_uninit_shared()
assert is_enabled() and [f["class"] for f in fs] == ["uninitialized-read"], fs
disable()
with findings.collect() as fs:
    ck.run_uninit_shared()
assert fs == []
print("OK")
"""
    path = os.pathsep.join([str(HERE)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=path))
    assert p.returncode == 0 and "OK" in p.stdout, p.stderr[-3000:]


def test_refuses_without_simulator():
    code = ("import os; os.environ['NUMBA_ENABLE_CUDASIM']='0'\n"
            "from numba import cuda\n"
            "from refconv.tooling.cuda.sanitizer import enable\n"
            "try:\n    enable()\nexcept RuntimeError as e:\n    print('REFUSED', e)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, NUMBA_ENABLE_CUDASIM="0"))
    assert "REFUSED" in p.stdout, p.stdout + p.stderr[-2000:]


# Every shipped numba_cuda variant running clean under the sanitizer (on by default under the
# simulator) is tests/test_conformance.py's numba_cuda-sim target.
