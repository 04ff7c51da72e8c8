"""Conformance of every built-in backend, as CI runs it: ``refconv check`` per backend target and
op, in a subprocess each (backend options such as the simulator, the sanitizer or the OpenCL
target are per process).  Every available variant must pass; unavailable ones are listed with
their reason in the report but do not fail here (e.g. float64 kron on a device without fp64).

The simulator sanitizer is on by default (issue 23), so ``numba_cuda-sim`` is also the sanitizer's
gate.  The ``numba_cuda-compile`` target is issue 8's, ``refconv check --compile --backend
numba_cuda``: the GPU-less PTX compile of every launch specialisation (a compile error or
launch-limit error is a failing finding), with one random example beside the directed cases."""
import json
import os

import pytest

from helpers import refconv_cli

OPS = ("filter2d", "sobel", "matvec", "kron", "conv2d")
TARGETS = {
    "numba_cpu": ["--backend", "numba_cpu"],
    "numba_cuda-sim": ["--backend", "numba_cuda", "--cuda", "sim"],
    "numba_cuda-compile": ["--backend", "numba_cuda", "--compile", "--examples", "1"],
    "opencl-pocl": ["--backend", "opencl", "--opencl", "pocl"],
    "opencl-oclgrind": ["--backend", "opencl", "--opencl", "oclgrind", "--examples", "8"],
    "triton-interpret": ["--backend", "triton", "--triton", "interpret"],
}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_available_variant_passes(target, op, tmp_path):
    if target.startswith("triton"):
        pytest.importorskip("triton")          # no wheels off Linux x86_64 / aarch64
    env = dict(os.environ, REFCONV_DATABASE="none", PYTHONUNBUFFERED="1")
    p = refconv_cli("check", *TARGETS[target], "--op", op, "--profile", "ci", "--seed", "0", "--jobs", "1",
                    "--quiet", "--json", "r.json", cwd=tmp_path, env=env, timeout=1500)
    out = p.stdout + p.stderr
    assert "no variant matches" not in out, f"{target} lost its {op} variants: {out[-2000:]}"
    rep = json.loads((tmp_path / "r.json").read_text())
    bad = [(r["variant"], r["status"], r["reason"][:300], (r["failure"] or {}).get("case") or
            (r["failure"] or {}).get("descriptor")) for r in rep["results"] if r["status"] in ("fail", "error")]
    assert not bad and p.returncode == 0, "\n".join(map(str, bad)) + "\n" + out[-4000:]
    ran = [r for r in rep["results"] if r["status"] == "pass"]
    assert ran, f"no variant of {op} ran on {target}: {[(r['variant'], r['reason']) for r in rep['results']]}"
