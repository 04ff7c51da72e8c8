"""``refconv bench``: medians with a ratio to a peer in the same run; a wrong variant is reported,
not timed; a baseline that is not selected is refused naming the accepted ones."""
import json

import numpy as np

from conftest import refconv_cli
from refconv import Backend, Variant, cli, registry


def test_bench_reports_medians_and_ratio_to_the_spec(tmp_path):
    p = refconv_cli("bench", "--backend", "numba_cpu", "--op", "matvec", "--repeat", "3", "--json", "b.json",
                    cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    rows = {r["variant"]: r for r in json.loads((tmp_path / "b.json").read_text())["rows"]}
    spec = rows["matvec/spec"]
    assert spec["speedup"] == 1.0 and spec["median_s"] > 0
    timed = [r for r in rows.values() if r["variant"] != "matvec/spec"]
    assert timed and all(r["status"] == "ok" and r["median_s"] > 0 for r in timed)
    for r in timed:
        assert abs(r["speedup"] - spec["median_s"] / r["median_s"]) < 1e-9 * r["speedup"]


def test_bench_does_not_time_a_wrong_variant(tmp_path, monkeypatch):
    def right(problem, **_):
        out = problem.output()
        out[:] = (problem.inputs["m"].astype(np.float64) @ problem.inputs["v"]).astype(out.dtype)
        return out

    def zeros(problem, **_):
        out = problem.output()
        out[:] = 0
        return out

    b = Backend("benchmeta", variants=lambda: [Variant("matvec", "benchmeta", "right", right),
                                               Variant("matvec", "benchmeta", "zeros", zeros)])
    monkeypatch.setattr(registry, "backends", lambda: {"benchmeta": b})
    assert cli.main(["bench", "--backend", "benchmeta", "--repeat", "2", "--json", str(tmp_path / "b.json")]) == 0
    rows = {r["variant"]: r for r in json.loads((tmp_path / "b.json").read_text())["rows"]}
    assert rows["matvec/benchmeta/right"]["status"] == "ok" and rows["matvec/benchmeta/right"]["median_s"] > 0
    wrong = rows["matvec/benchmeta/zeros"]
    assert wrong["median_s"] is None and wrong["status"].startswith("fail"), wrong


def test_bench_refuses_a_baseline_outside_the_selection(tmp_path):
    p = refconv_cli("bench", "--backend", "numba_cpu", "--op", "matvec", "--baseline", "matvec/nope/x",
                    cwd=tmp_path)
    assert p.returncode == 2 and "--baseline 'matvec/nope/x'" in p.stderr and "'spec'" in p.stderr  # usage error: stderr
