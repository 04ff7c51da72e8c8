"""A third-party Triton plugin gets the Triton kit's option exactly as the built-in ``triton``
backend does, selected alone: ``--triton interpret`` is its own option (no "has no effect"
warning, issues 40 and 43), its kernels run in the interpreter under refconv's memory checker,
and an unmasked load past the end of a row is named ``out-of-bounds`` while its masked twin
passes.  The plugin passes only the kit's ``available`` (not ``backend_fields()``): the kit
completes it (``refconv.variant.Backend``).  tests/test_triton_backend.py has the plugin written
with ``backend_fields()``."""
from __future__ import annotations

import json

import pytest

from helpers import plugin_env, refconv_cli

pytest.importorskip("triton")

PLUGIN = '''
import numpy as np
import triton
import triton.language as tl
from refconv import Backend, Range, Variant
from refconv import triton as kit

B = 16


@kit.jit
def matvec_rows(m, v, y, R, C, B: tl.constexpr, MASKED: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros((B,), dtype=tl.float32)
    for c0 in range(0, C, B):
        cols = c0 + tl.arange(0, B)
        if MASKED:
            a = tl.load(m + r * C + cols, mask=cols < C, other=0)
            x = tl.load(v + cols, mask=cols < C, other=0)
        else:
            a = tl.load(m + r * C + cols)               # the bug: the last block reads past the row
            x = tl.load(v + cols)
        acc += a * x
    tl.store(y + r, tl.sum(acc, axis=0))


def _variant(name, masked):
    def run(problem, out):
        m, v = (np.ascontiguousarray(problem.inputs[k]) for k in "mv")
        R, C = m.shape
        return kit.launch(matvec_rows, (R,), m, v, kit.OUT, R, C, out=out, what=f"matvec/trihook/{name}",
                          B=B, MASKED=masked)
    return Variant(op="matvec", backend="trihook", name=name, run=run, available=kit.available,
                   supports={"dtype": ("float32",), "rows": Range(1, 8), "cols": Range(1, 40)},
                   doc="one program per row, blocks of 16 columns")


backend = Backend(name="trihook", variants=lambda: [_variant("masked", True), _variant("unmasked", False)],
                  available=kit.available)
'''


def test_a_triton_plugin_selected_alone_owns_triton_and_gets_the_memory_checker(tmp_path):
    env = plugin_env(tmp_path / "site", {"trihook": PLUGIN})
    env.pop("REFCONV_TRITON", None)
    env.pop("TRITON_INTERPRET", None)
    p = refconv_cli("list", "--backend", "trihook", "--triton", "interpret", env=env, cwd=tmp_path)
    assert p.returncode == 0 and "no effect" not in p.stderr, p.stdout + p.stderr
    p = refconv_cli("check", "--backend", "trihook", "--triton", "interpret", "--examples", "6", "--seed", "0",
                    "--jobs", "2", "--quiet", "--no-save", "--json", "r.json", env=env, cwd=tmp_path, timeout=600)
    out = p.stdout + p.stderr
    assert "no effect" not in p.stderr and p.returncode == 1, out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["backend_options"]["triton"] == "interpret"
    res = {r["variant"]: r for r in report["results"]}
    assert res["matvec/trihook/masked"]["status"] == "pass", out
    bad = res["matvec/trihook/unmasked"]
    assert bad["status"] == "fail" and any(f["class"] == "out-of-bounds" for f in bad["findings"]), bad
