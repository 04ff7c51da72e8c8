"""``refconv check --cuda gpu --sanitize`` without a GPU: compute-sanitizer's reports become the
simulator sanitizer's finding classes, attributed to the case that was running
(``refconv.tooling.cuda.gpu_sanitizer``); a child that dies is never a pass; a missing
tool is a clear reason; the simulator half of the run works on this machine.  The GPU half was
run on a lent H100 (docs/sanitizer.md, *On a GPU*).

The report texts below follow compute-sanitizer 2025.3's layout (the ``=========`` prefix, a
header line, indented detail lines)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import ROOT

from refconv.tooling.cuda import gpu_sanitizer as gs
from refconv.tooling.cuda.gpu_sanitizer import _parse

MEMCHECK = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 8 bytes
=========     at kron_unguarded+0x1b0 in /x/hazard_impls.py:288
=========     by thread (7,3,0) in block (0,0,0)
=========     Address 0x7f4e2c000040 is out of bounds
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2f1f7] in libcuda.so.1
=========
========= Invalid __global__ read of size 8 bytes
=========     at kron_unguarded+0x1b0 in /x/hazard_impls.py:288
=========     by thread (6,3,0) in block (0,0,0)
=========     Address 0x7f4e2c000048 is out of bounds
=========
========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call
=========
========= ERROR SUMMARY: 3 errors
"""

RACECHECK = """\
========= Error: Potential RAW hazard detected at __shared__ 0x4 in block (0,0,0) :
=========     Write Thread (1,0,0) at matvec_tiled+0x2c0 in /x/hazard_impls.py:168
=========     Read Thread (0,0,0) at matvec_tiled+0x300 in /x/hazard_impls.py:172
=========     Current Value : 0, Incoming Value : 1
=========
========= Warning: (Warp Level Programming) Potential RAW hazard detected at __shared__ 0x40 in block (0,0,0) :
=========     Write Thread (16,0,0) at warp_reduce+0x100 in /x/warp.py:20
=========     Read Thread (0,0,0) at warp_reduce+0x120 in /x/warp.py:21
=========
========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
"""

SYNCCHECK = """\
========= Barrier error detected. Divergent thread(s) in block
=========     at fused+0x500 in /x/k.py:82
=========     by thread (0,0,0) in block (1,0,0)
========= ERROR SUMMARY: 1 error
"""

INITCHECK = """\
========= Uninitialized __global__ memory read of size 4 bytes
=========     at k+0x90 in /x/k.py:10
=========     by thread (3,0,0) in block (0,0,0)
=========     Address 0x7f0000000000
========= ERROR SUMMARY: 1 error
"""


@pytest.mark.parametrize("text, tool, cls, kernel, line", [
    (MEMCHECK, "memcheck", "out-of-bounds", "kron_unguarded", 288),
    (RACECHECK, "racecheck", "shared-race", "matvec_tiled", 168),
    (SYNCCHECK, "synccheck", "barrier-divergence", "fused", 82),
    (INITCHECK, "initcheck", "uninitialized-read", "k", 10),
], ids=["memcheck", "racecheck", "synccheck", "initcheck"])
def test_each_tools_report_becomes_the_simulator_sanitizers_class(text, tool, cls, kernel, line):
    found = _parse.findings(text, tool)
    f = found[0]
    assert (f["class"], f["kernel"], f["line"], f["tool"]) == (cls, kernel, line, tool), found
    assert f["message"].startswith(f"compute-sanitizer {tool}: ") and f".py:{line})" in f["message"], f
    assert "thread" in f and "block" in f


@pytest.mark.parametrize("symbol", [
    "matvec_tiled",
    "cudapy::hazard_impls::_tiled::<locals>::matvec_tiled[abi:v1,cw51cXTLSUwv1sCUt9Uw1VEw0NRRQPKiLTj0gIGIFp_2b2o]"
    "(Array<double, 2, C, mutable, aligned>, Array<double, 1, C, mutable, aligned>, long long, long long)",
    "_ZN6cudapy12hazard_impls6_tiled12_3clocals_3e12matvec_tiledB2v1B96cw51cXTLSUwv1sCUt9Uw1VEw0NRRQPKiLTj0gIGIFp_2b2E5ArrayIdLi2E1C7mutable7alignedE",
])
def test_the_kernel_is_named_from_a_plain_demangled_or_mangled_symbol(symbol):
    text = (f"========= Invalid __shared__ read of size 8 bytes\n=========     at {symbol}+0x2c0 in /x/h.py:168\n"
            f"=========     by thread (0,0,0) in block (0,0,0)\n")
    (f,) = _parse.findings(text, "memcheck")
    assert f["kernel"] == "matvec_tiled" and f["line"] == 168, f


def test_identical_reports_merge_with_a_count_and_the_summary_lines_are_not_findings():
    found = _parse.findings(MEMCHECK, "memcheck")
    assert len(found) == 1 and found[0]["count"] == 2 and found[0]["thread"] == "(7,3,0)", found


def test_a_racecheck_warning_is_a_finding_with_its_severity():
    found = _parse.findings(RACECHECK, "racecheck")
    sev = {f["kernel"]: f["severity"] for f in found}
    assert sev == {"matvec_tiled": "error", "warp_reduce": "warning"}, found
    assert all(f["class"] == "shared-race" for f in found)


def test_clean_output_gives_no_finding_and_an_unknown_error_is_not_dropped():
    assert _parse.findings("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", "memcheck") == []
    odd = "========= Error: Device not supported\n========= ERROR SUMMARY: 1 error\n"
    (f,) = _parse.findings(odd, "memcheck")
    assert f["class"] == "compute-sanitizer" and "Device not supported" in f["message"]


def _child_out(*cases):
    lines = []
    for case, tool_text, result in cases:
        lines.append(_parse.CASE_MARK + json.dumps(case))
        lines += tool_text.splitlines()
        if result is not None:
            lines.append(_parse.RESULT_MARK + json.dumps(result))
    return "\n".join(lines) + "\n"


def test_reports_are_attributed_to_the_case_running_when_they_were_printed():
    out = _child_out(("case A", "", {"status": "pass"}), ("case B", RACECHECK, {"status": "pass"}),
                     ("case C", "", {"status": "pass"}))
    found = gs._judge("matvec/x/v", "gpu", "racecheck", out, "", 0)
    errs = [f for f in found if f["class"] != "gpu-sanitizer-info"]
    assert {f["case"] for f in errs} == {"case B"} and all(f["where"] == "GPU" for f in found), found
    (info,) = [f for f in found if f["class"] == "gpu-sanitizer-info"]
    assert info["cases"] == 3 and "3 case(s) run, 2 finding(s)" in info["message"], info


def test_the_simulator_half_keeps_the_simulator_sanitizers_findings_with_their_case():
    f = {"class": "barrier-divergence", "message": "m", "kernel": "k", "line": 3}
    out = _child_out(("case A", "", {"status": "fail", "findings": [f]}), ("case B", "", {"status": "pass",
                                                                                          "findings": []}))
    g, info = gs._judge("conv2d/x/v", "sim", None, out, "", 0)
    assert info["class"] == "gpu-sanitizer-info" and info["cases"] == 2, info
    assert g["class"] == "barrier-divergence" and g["case"] == "case A" and g["where"] == "simulator", g


@pytest.mark.parametrize("rc, out", [(None, ""), (139, _child_out(("case A", "", None))), (0, "")],
                         ids=["timed_out", "crashed_in_a_case", "ran_nothing"])
def test_a_child_that_dies_or_runs_nothing_is_a_failure_finding_never_a_pass(rc, out):
    found = gs._judge("matvec/x/v", "gpu", "memcheck", out, "Segmentation fault", rc)
    assert [f["class"] for f in found] == ["gpu-sanitizer-failed", "gpu-sanitizer-info"], found
    assert "matvec/x/v" in found[0]["message"]


def test_a_variant_that_cannot_run_under_the_simulator_is_reported_not_failed():
    out = _parse.UNAVAILABLE_MARK + json.dumps("the simulator has no warp shuffles") + "\n"
    (f,) = gs._judge("matvec/numba_cuda/warp_shuffle", "sim", None, out, "", 0)
    assert f["class"] == "gpu-sanitizer-info" and "no warp shuffles" in f["message"], f
    from refconv.preflight import is_error
    assert not is_error(f)


def test_merge_sums_counts_per_class_tool_kernel_and_line():
    a = {"class": "shared-race", "tool": "racecheck", "kernel": "k", "line": 5, "count": 3, "case": "A"}
    b = dict(a, count=2, case="B")
    c = dict(a, line=6, count=1)
    merged = gs._merge([a, b, c])
    assert sorted((m["line"], m["count"], m["case"]) for m in merged) == [(5, 5, "A"), (6, 1, "A")]


def test_a_missing_compute_sanitizer_is_a_reason_naming_where_it_was_looked_for(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert gs.find_tool() is None
    why = gs.missing()
    assert "compute-sanitizer" in why and str(tmp_path / "cuda") + "/bin" in why and "--cuda sim" in why
    tool = tmp_path / "cuda" / "bin" / "compute-sanitizer"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert gs.find_tool() == str(tool) and gs.missing() is None


def test_without_gpu_sanitize_the_preflight_runs_nothing(monkeypatch):
    from refconv.tooling.cuda import _env
    from refconv.tooling.cuda.preflight import preflight
    monkeypatch.setattr(gs, "preflight", lambda *a: pytest.fail("the GPU sanitizer ran"))
    monkeypatch.setitem(_env._state, "gpu_sanitize", False)
    assert preflight([object()], {}) == {}
    monkeypatch.setattr(gs, "preflight", lambda vs, o: {"x": [{"class": "shared-race"}]})
    monkeypatch.setitem(_env._state, "gpu_sanitize", True)
    assert preflight([object()], {}) == {"x": [{"class": "shared-race"}]}


@pytest.mark.slow
def test_the_simulator_child_names_the_early_return_with_its_case(tmp_path):
    """The child as the GPU run starts it for the simulator half (``--where sim``), on the
    early-return hazard of tests/meta/hazard_impls.py."""
    from helpers import plugin_env
    env = plugin_env(tmp_path / "site", {"hazards": "from hazard_impls import backend\n"})
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests" / "meta"), env["PYTHONPATH"]])
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    p = subprocess.run([sys.executable, "-m", "refconv.tooling.cuda.gpu_sanitizer", "--variant",
                        "conv2d/hazards/early_return_barrier", "--where", "sim", "--examples", "2"],
                       capture_output=True, text=True, env=env, timeout=600)
    out, err, rc = p.stdout, p.stderr, p.returncode
    found = gs._judge("conv2d/hazards/early_return_barrier", "sim", None, out, err, rc)
    assert rc == 0 and "barrier-divergence" in [f["class"] for f in found], (found, err[-2000:])
    assert all(f["case"].startswith("conv2d:") for f in found if f["class"] != "gpu-sanitizer-info"), found
