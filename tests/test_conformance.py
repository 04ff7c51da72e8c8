"""Conformance of every built-in backend, as CI runs it: ``refconv check`` per backend target and
op, in a subprocess each (backend options such as the simulator, the sanitizer or the OpenCL
target are per process).  Every available variant must pass; unavailable ones are listed with
their reason in the report but do not fail here (e.g. float64 kron on a device without fp64).

Each variant runs all its directed cases (the bug-class table of its op record, crossed with its
options and launch geometry) and ``EXAMPLES`` random examples, not the ``ci`` profile's 25: the
suite proves every shipped variant conforms, on every target, within the README's time budget;
the 25-example depth is what ``refconv check`` runs, and what ``lab/sweeps/catch_rates.py`` measures.

The simulator sanitizer is on by default (issue 23), so ``numba_cuda-sim`` is also the sanitizer's
gate (every shipped numba_cuda variant runs clean under it).  The same run carries issue 8's
compile check (``--compile``): the GPU-less PTX compile of each variant at its default launch
parameters, for every dtype and option value (``REFCONV_COMPILE_PARAMS=defaults``; a compile error or
launch-limit error is a failing finding).  A user's ``refconv check --compile`` also compiles every
value of every launch parameter once (``cover``); that sweep costs the suite about 100 s of CPU."""
import json
import os

import pytest

from helpers import refconv_cli

OPS = ("filter2d", "sobel", "matvec", "kron", "conv2d")
EXAMPLES = "2"   # random examples per variant, after its directed cases
#: targets that run fewer: PoCL compiles a work-group function for every local size it meets (about
#: a second each on a cold kernel cache, as on a new CI machine), and each drawn example brings one
EXAMPLES_OF = {"opencl-pocl": "1"}
TARGETS = {
    "numba_cpu": ["--backend", "numba_cpu"],
    "numba_cuda-sim": ["--backend", "numba_cuda", "--cuda", "sim", "--compile"],
    "opencl-pocl": ["--backend", "opencl", "--opencl", "pocl"],
    "opencl-oclgrind": ["--backend", "opencl", "--opencl", "oclgrind"],
    "triton-interpret": ["--backend", "triton", "--triton", "interpret"],
}


#: what each target's runs cover: an op glob (``--op``) and how many ``--shard`` pieces it is run
#: as.  Big (target, op) pairs are split into pieces that xdist spreads over its workers; the small
#: ops of a target share one run, since each ``refconv check`` pays its start-up (imports, the
#: registry, a worker) once
RUNS = {
    "numba_cpu": [("*", 1)],
    "numba_cuda-sim": [("filter2d", 4), ("sobel", 2), ("matvec", 1), ("[ck]*", 1)],
    "opencl-pocl": [("filter2d", 2), ("[!f]*", 1)],
    "opencl-oclgrind": [("*", 1)],
    "triton-interpret": [("*", 1)],
}
CASES = [(t, ops, f"{k}/{n}") for t in sorted(TARGETS) for ops, n in RUNS[t] for k in range(1, n + 1)]


def _label(ops: str) -> str:
    return {"*": "all", "[ck]*": "conv2d+kron", "[!f]*": "all-but-filter2d"}.get(ops, ops)


def _selected(target: str, ops: str) -> list:
    """The target's variants whose op ``ops`` (an ``--op`` glob) matches, in registry order."""
    from fnmatch import fnmatchcase

    from refconv import registry
    backend = TARGETS[target][TARGETS[target].index("--backend") + 1]
    return [v for v in registry.variants(backend=backend) if fnmatchcase(v.op, ops)]


def _expected_ids(target: str, ops: str, shard: str) -> set:
    """The ids of the variants ``--shard`` puts in this piece (refconv.shard's rule, on the
    registry's listing of the target's backend and ops)."""
    from refconv.shard import parse_shard, select
    k, n = parse_shard(shard)
    return {v.id for v in select(_selected(target, ops), k, n)}


@pytest.mark.parametrize("target,op,shard", CASES,
                         ids=[f"{t}-{_label(op)}-{s.replace('/', 'of')}" for t, op, s in CASES])
def test_every_available_variant_passes(target, op, shard, tmp_path):
    if target.startswith("triton"):
        pytest.importorskip("triton")          # no wheels off Linux x86_64 / aarch64
    # one compile-check worker a run (the runs are already spread over xdist's workers), each
    # variant compiled at its default launch parameters (every dtype and option value):
    # tests/test_compile_check.py and `refconv check --compile` sweep the parameter values
    env = dict(os.environ, REFCONV_DATABASE="none", PYTHONUNBUFFERED="1", REFCONV_COMPILE_JOBS="1",
               REFCONV_COMPILE_PARAMS="defaults")
    p = refconv_cli("check", *TARGETS[target], "--op", op, "--profile", "ci", "--examples", EXAMPLES_OF.get(target, EXAMPLES), "--seed", "0",
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


@pytest.mark.parametrize("target", sorted(RUNS))
def test_the_runs_of_a_target_leave_no_variant_out_and_run_none_twice(target):
    from refconv import registry
    backend = TARGETS[target][TARGETS[target].index("--backend") + 1]
    pieces = [_expected_ids(target, ops, f"{k}/{n}") for ops, n in RUNS[target] for k in range(1, n + 1)]
    assert all(pieces), f"an empty run of {target}: {[len(p) for p in pieces]}"
    assert sum(map(len, pieces)) == len(set().union(*pieces)), f"a variant of {target} runs twice"
    assert set().union(*pieces) == {v.id for v in registry.variants(backend=backend)}
