"""The OpenCL twin of the CUDA bug corpus on Oclgrind (races on): every bug is named, at the
right line; a clean kernel is not flagged; a checker that crashes is reported as such."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyopencl")
ICD = "/usr/lib/oclgrind/liboclgrind-rt-icd.so"
if not os.path.exists(ICD):
    pytest.skip("Oclgrind not installed", allow_module_level=True)

HERE = Path(__file__).resolve().parent / "sanitizer_corpus"
SRC = (HERE / "opencl_kernels.cl").read_text().splitlines()


def marker(m):
    return next(n for n, l in enumerate(SRC, 1) if f"// BUG:{m}" in l)


@pytest.fixture(scope="module")
def vendors(tmp_path_factory):
    d = tmp_path_factory.mktemp("icd")
    (d / "oclgrind.icd").write_text(ICD + "\n")
    return str(d)


def oclgrind(vendors, case, **env):
    e = dict(os.environ, OCL_ICD_VENDORS=vendors, OCLGRIND_DATA_RACES="1", **env)
    p = subprocess.run([sys.executable, str(HERE / "run_opencl.py"), case], capture_output=True, text=True,
                       timeout=300, env=e)
    res = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    return p.returncode, (res[0] if res else None), p.stderr


CASES = {
    "neg_local_index": (r"Invalid read of size 4 at local memory", ["neg_shared"]),
    "global_oob": (r"Invalid (read|write) of size 4 at global memory", ["global_oob"]),
    "tile_missing_barrier": (r"Read-write data race at local memory", ["tile_read", "tile_write"]),
    "warp_reduce_no_barrier": (r"(Read-write|Write-write) data race at local memory", None),
    "early_return_sum": (r"Work-group divergence detected \(barrier\)", ["early_return"]),
    "fused_partial_stage": (r"Work-group divergence detected \(barrier\)", ["fused_barrier"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_oclgrind_names_the_bug(vendors, case):
    pat, marks = CASES[case]
    rc, res, err = oclgrind(vendors, case)
    assert res is not None and res["platform"] == "Oclgrind", err[-2000:]
    assert re.search(pat, err), err[-2000:]
    lines = {int(x) for x in re.findall(r"At line (\d+)", err)}
    if marks is None:  # somewhere in the barrier-free "warp-synchronous" tail
        w = marker("warp_race")
        assert lines & set(range(w - 1, w + 5)), (lines, err[-1500:])
    else:
        assert lines & {marker(m) for m in marks}, (lines, err[-1500:])


def test_clean_kernel_is_not_flagged(vendors):
    rc, res, err = oclgrind(vendors, "clean_reduce")
    assert rc == 0 and res["ok"], err[-2000:]
    assert not re.search(r"Invalid|data race|divergence|Uninitiali", err), err[-2000:]


def test_uninitialised_checks_flag_or_crash_never_pass(vendors):
    """With OCLGRIND_UNINITIALIZED=1, Oclgrind 21.10 either names the uninitialised local read or
    aborts (it has been seen to die on LLVM's ``freeze``): a crash is recorded as a crash."""
    rc, res, err = oclgrind(vendors, "uninit_local", OCLGRIND_UNINITIALIZED="1")
    flagged = bool(re.search(r"[Uu]ninitiali[sz]ed", err))
    crashed = rc != 0 or res is None
    assert flagged or crashed, (rc, res, err[-2000:])
    rc2, res2, err2 = oclgrind(vendors, "early_return_sum", OCLGRIND_UNINITIALIZED="1")
    outcome = "crash" if (rc2 != 0 or res2 is None) else ("flagged" if re.search(r"divergence", err2) else "pass")
    assert outcome != "pass", err2[-2000:]
