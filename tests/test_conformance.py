"""Conformance of every built-in backend, as CI runs it: ``refconv check`` per backend target and
op, in a subprocess each (backend options such as the simulator, the sanitizer or the OpenCL
target are per process).  Every available variant must pass; unavailable ones are listed with
their reason in the report but do not fail here (e.g. float64 kron on a device without fp64).

Each variant runs all its directed cases (the bug-class table of its op record, crossed with its
options and launch geometry) and ``EXAMPLES`` random examples, not the ``ci`` profile's 25: the
suite proves every shipped variant conforms, on every target, within the README's time budget;
the 25-example depth is what ``refconv check`` runs, and what ``scripts/catch_rates.py`` measures.

The simulator sanitizer is on by default (issue 23), so ``numba_cuda-sim`` is also the sanitizer's
gate (every shipped numba_cuda variant runs clean under it).  The same run carries issue 8's
compile check (``--compile``): the GPU-less PTX compile of every launch specialisation (a compile
error or launch-limit error is a failing finding)."""
import json
import os

import pytest

from helpers import refconv_cli

OPS = ("filter2d", "sobel", "matvec", "kron", "conv2d")
EXAMPLES = "4"   # random examples per variant, after its directed cases
TARGETS = {
    "numba_cpu": ["--backend", "numba_cpu"],
    "numba_cuda-sim": ["--backend", "numba_cuda", "--cuda", "sim", "--compile"],
    "opencl-pocl": ["--backend", "opencl", "--opencl", "pocl"],
    "opencl-oclgrind": ["--backend", "opencl", "--opencl", "oclgrind"],
    "triton-interpret": ["--backend", "triton", "--triton", "interpret"],
}


#: (target, op) pairs with many variants, run as this many ``--shard`` pieces (tests that xdist
#: can spread over its workers, instead of one test that holds a worker for minutes)
SHARDS = {("numba_cuda-sim", "filter2d"): 4, ("opencl-pocl", "filter2d"): 2, ("numba_cuda-sim", "sobel"): 2}
CASES = [(t, op, f"{k}/{SHARDS.get((t, op), 1)}") for t in sorted(TARGETS) for op in OPS
         for k in range(1, SHARDS.get((t, op), 1) + 1)]


def _expected_ids(target: str, op: str, shard: str) -> set:
    """The ids of the variants ``--shard`` puts in this piece (refconv.shard's rule, on the
    registry's listing of the target's backend and op)."""
    from refconv import registry
    from refconv.shard import parse_shard, select
    backend = TARGETS[target][TARGETS[target].index("--backend") + 1]
    k, n = parse_shard(shard)
    return {v.id for v in select(registry.variants(op=op, backend=backend), k, n)}


@pytest.mark.parametrize("target,op,shard", CASES, ids=[f"{t}-{op}-{s.replace('/', 'of')}" for t, op, s in CASES])
def test_every_available_variant_passes(target, op, shard, tmp_path):
    if target.startswith("triton"):
        pytest.importorskip("triton")          # no wheels off Linux x86_64 / aarch64
    env = dict(os.environ, REFCONV_DATABASE="none", PYTHONUNBUFFERED="1")
    p = refconv_cli("check", *TARGETS[target], "--op", op, "--profile", "ci", "--examples", EXAMPLES, "--seed", "0",
                    "--jobs", "1", "--shard", shard, "--quiet", "--json", "r.json", cwd=tmp_path, env=env,
                    timeout=1500)
    out = p.stdout + p.stderr
    assert "no variant matches" not in out, f"{target} lost its {op} variants: {out[-2000:]}"
    rep = json.loads((tmp_path / "r.json").read_text())
    assert {r["variant"] for r in rep["results"]} == _expected_ids(target, op, shard), out[-2000:]
    bad = [(r["variant"], r["status"], r["reason"][:300], (r["failure"] or {}).get("case") or
            (r["failure"] or {}).get("descriptor")) for r in rep["results"] if r["status"] in ("fail", "error")]
    assert not bad and p.returncode == 0, "\n".join(map(str, bad)) + "\n" + out[-4000:]
    ran = [r for r in rep["results"] if r["status"] == "pass"]
    assert ran or not rep["results"], (
        f"no variant of {op} ran on {target}: {[(r['variant'], r['reason']) for r in rep['results']]}")


@pytest.mark.parametrize("target,op", [(t, op) for t, op in SHARDS])
def test_the_shards_of_a_split_target_leave_no_variant_out(target, op):
    n = SHARDS[(target, op)]
    pieces = [_expected_ids(target, op, f"{k}/{n}") for k in range(1, n + 1)]
    assert all(pieces), f"an empty shard of {target} {op}: {[len(p) for p in pieces]}"
    from refconv import registry
    backend = TARGETS[target][TARGETS[target].index("--backend") + 1]
    assert set().union(*pieces) == {v.id for v in registry.variants(op=op, backend=backend)}
