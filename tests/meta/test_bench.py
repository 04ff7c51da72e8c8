"""``refconv bench``: kernel time from the intervals a backend records, end-to-end time beside it,
roofline from the backend's copy hook, ratio to a chosen row; a wrong variant is reported, not
timed; simulated devices are labelled (and skipped for presets); presets skip what their
variants do not support; JSON and plots are written."""
import json
import time
import types

import numpy as np
import pytest

from helpers import refconv_cli
from refconv import Backend, Range, Variant, cli, peers, registry, specs, timing
from refconv.bench import ReportOptions, Row, cmd_bench_report, presets
from refconv.bench import problems as bench
from refconv.timing import BenchHooks

KERNEL_S, COPY_S, COPY_BYTES = 0.002, 0.001, 1000


def _matvec_right(problem, out, **_):
    out[:] = specs.matvec(problem.inputs["m"], problem.inputs["v"])
    timing.record(lambda: KERNEL_S, "fake kernel")
    return out


def _kron_array(problem, out, **_):
    out[:] = np.kron(problem.inputs["a"], problem.inputs["b"])


def _copy(nbytes):
    return lambda: timing.record(lambda: COPY_S, "fake copy")


@pytest.fixture(autouse=True)
def _fresh_variant_cache():
    registry._variants_of.cache_clear()  # variants are cached per backend name
    yield
    registry._variants_of.cache_clear()


def _install(monkeypatch, *backends):
    registry._variants_of.cache_clear()
    monkeypatch.setattr(registry, "backends", lambda: {b.name: b for b in backends})


def _rows(path):
    return {r["variant"]: r for r in json.loads(path.read_text())["rows"]}


def test_bench_reports_kernel_time_from_intervals_roofline_from_the_copy_hook_and_the_ratio(tmp_path, monkeypatch):
    _install(monkeypatch, Backend("benchmeta", variants=lambda: [Variant("matvec", "benchmeta", "right", _matvec_right)],
                                  bench=BenchHooks(copy=_copy)))
    out = tmp_path / "b.json"
    assert cli.main(["bench", "--timeout", "0", "--backend", "benchmeta", "--repeat", "3", "--peers", "none", "--baseline", "spec",
                     "--copy-bytes", str(COPY_BYTES), "--json", str(out)]) == 0
    rows = _rows(out)
    r, spec = rows["matvec/benchmeta/right"], rows["matvec/spec"]
    assert r["status"] == "ok" and r["timer"] == "device events"
    assert r["kernel_s"]["median"] == KERNEL_S and r["kernel_s"]["n"] == 3 and r["median_s"] == KERNEL_S
    assert r["e2e_s"]["n"] == 3 and r["e2e_s"]["median"] > 0
    rows_, cols = (bench.bench_problem("matvec", "small").dims[k] for k in ("rows", "cols"))
    min_bytes = 4 * (rows_ * cols + cols + rows_)
    floor = min_bytes / (2 * COPY_BYTES / COPY_S)
    assert r["roofline_pct"] == pytest.approx(100 * floor / KERNEL_S, rel=1e-12)
    assert r["copy"] == "benchmeta device copy"
    assert r["speedup"] == pytest.approx(spec["median_s"] / KERNEL_S, rel=1e-12) and spec["speedup"] == 1.0
    rep = json.loads(out.read_text())
    assert rep["problems"][0]["work"]["bytes"] == min_bytes and rep["repeat"] == 3
    assert "benchmeta" in rep["devices"]


def test_markdown_holds_each_problems_table(tmp_path, monkeypatch):
    _install(monkeypatch, Backend("mdmeta", variants=lambda: [Variant("matvec", "mdmeta", "right", _matvec_right)],
                                  bench=BenchHooks(copy=_copy), describe=lambda: "a fake GPU"))
    md = tmp_path / "b.md"
    assert cli.main(["bench", "--timeout", "0", "--backend", "mdmeta", "--repeat", "2", "--peers", "none", "--baseline", "spec",
                     "--copy-bytes", str(COPY_BYTES), "--markdown", str(md)]) == 0
    text = md.read_text()
    assert "* mdmeta: a fake GPU" in text and "### matvec-small" in text
    assert "| matvec/mdmeta/right | 2 ms [2 ms–2 ms] |" in text
    assert f"copy bandwidth (mdmeta device copy): {2 * COPY_BYTES / COPY_S / 1e9:.4g} GB/s" in text
    # the header says the flush is for GPU launches only, with its size; a run without one says so
    assert "an L2 flush of 128 MiB before each timed GPU launch (none on CPU targets and simulators)." in text
    assert cli.main(["bench", "--timeout", "0", "--backend", "mdmeta", "--repeat", "2", "--peers", "none", "--baseline", "spec",
                     "--copy-bytes", str(COPY_BYTES), "--flush-bytes", "0", "--markdown", str(md)]) == 0
    assert "after a warm-up, no L2 flush." in md.read_text()


def test_bench_does_not_time_a_wrong_variant(tmp_path, monkeypatch):
    def zeros(problem, out, **_):
        out[:] = 0
        return out

    _install(monkeypatch, Backend("benchmeta", variants=lambda: [Variant("matvec", "benchmeta", "right", _matvec_right),
                                                                 Variant("matvec", "benchmeta", "zeros", zeros)]))
    assert cli.main(["bench", "--timeout", "0", "--backend", "benchmeta", "--repeat", "2", "--peers", "none",
                     "--json", str(tmp_path / "b.json")]) == 0
    rows = _rows(tmp_path / "b.json")
    assert rows["matvec/benchmeta/right"]["status"] == "ok" and rows["matvec/benchmeta/right"]["median_s"] > 0
    wrong = rows["matvec/benchmeta/zeros"]
    assert wrong["median_s"] is None and wrong["status"].startswith("fail") and "kernel_s" not in wrong, wrong


def test_bench_refuses_a_baseline_it_does_not_know_naming_the_accepted_ones(capsys, monkeypatch):
    _install(monkeypatch, Backend("benchmeta", variants=lambda: [Variant("matvec", "benchmeta", "right", _matvec_right)]))
    assert cli.main(["bench", "--timeout", "0", "--backend", "benchmeta", "--baseline", "matvec/nope/x"]) == 2
    out = capsys.readouterr().err          # a usage error: stderr, exit 2
    assert "--baseline 'matvec/nope/x' is not accepted" in out and "'spec'" in out and "numpy_matvec" in out


def _sim_right(problem, out, **_):
    out[:] = specs.matvec(problem.inputs["m"], problem.inputs["v"])
    timing.record(lambda: -0.001, "simulated kernel", simulated=True)
    return out


def test_simulated_rows_are_labelled_without_a_time_and_presets_skip_them_saying_what_they_need(tmp_path, monkeypatch):
    sim = Backend("simmeta", variants=lambda: [Variant("matvec", "simmeta", "k", _sim_right)],
                  bench=BenchHooks(copy=_copy, simulated=lambda: "simmeta runs on a simulator here"),
                  real_target="--simmeta-device gpu")
    capped = Backend("capmeta", variants=lambda: [Variant("matvec", "capmeta", "k", _matvec_right,
                                                          supports={"rows": Range(1, 300), "cols": Range(1, 300)})])
    _install(monkeypatch, sim, capped)
    assert cli.main(["bench", "--timeout", "0", "--backend", "*meta", "--repeat", "2", "--peers", "none",
                     "--json", str(tmp_path / "s.json")]) == 0
    rep = json.loads((tmp_path / "s.json").read_text())
    r = {x["variant"]: x for x in rep["rows"]}["matvec/simmeta/k"]
    assert r["status"] == "ok" and r["timer"] == "simulated" and r["median_s"] is None and r["kernel_s"] is None
    assert r["speedup"] is None and r["roofline_pct"] is None
    assert r["e2e_s"]["n"] == 1  # a simulated row is timed once: more runs would mean nothing
    assert any("simmeta runs on a simulator here" in n for n in rep["notes"])
    assert any("kernel times need a real target (simmeta: --simmeta-device gpu)" in n for n in rep["notes"])
    assert cli.main(["bench", "--timeout", "0", "--backend", "*meta", "--preset", "matvec-4096", "--repeat", "1", "--peers", "none",
                     "--json", str(tmp_path / "p.json")]) == 0
    rows = _rows(tmp_path / "p.json")
    assert rows["matvec/simmeta/k"]["status"] == ("skipped: simmeta runs on a simulator here; "
                                                  "matvec-4096 is sized for a GPU")
    assert rows["matvec/capmeta/k"]["status"] == "skipped: rows=4096 outside 1..300"


def test_a_preset_runs_only_the_variants_it_names_and_skips_what_the_host_cannot_check(tmp_path, monkeypatch):
    _install(monkeypatch, Backend("kmeta", variants=lambda: [Variant("kron", "kmeta", "streamed", _kron_array),
                                                             Variant("kron", "kmeta", "other", _kron_array)]))
    tiny = presets.Preset("kron-tiny", "kron", {"dtype": "float64", "m": 3, "n": 3, "p": 3, "q": 3}, {},
                          {"a": "random.1", "b": "random.2"}, "test", only="streamed")
    monkeypatch.setitem(presets.PRESETS, "kron-tiny", tiny)
    assert cli.main(["bench", "--timeout", "0", "--backend", "kmeta", "--preset", "kron-tiny", "--repeat", "2", "--peers", "none",
                     "--json", str(tmp_path / "k.json")]) == 0
    rows = _rows(tmp_path / "k.json")
    assert rows["kron/kmeta/streamed"]["status"] == "ok" and rows["kron/kmeta/streamed"]["timer"] == "host clock"
    assert rows["kron/kmeta/other"]["status"] == "skipped: this preset runs only variants named 'streamed'"
    monkeypatch.setattr(bench, "available_host_bytes", lambda: 1000)
    assert cli.main(["bench", "--timeout", "0", "--backend", "kmeta", "--preset", "kron-tiny", "--repeat", "1", "--peers", "all",
                     "--json", str(tmp_path / "m.json")]) == 0
    need = 8 * (9 + 9 + 81) + bench.ROW_CHECK_BYTES   # kron is checked by rows: its output, inputs, blocks
    rows = _rows(tmp_path / "m.json")
    assert rows["kron/kmeta/streamed"]["status"] == (f"skipped: checking needs about {need / 1e9:.0f} GB of host "
                                                     f"memory, {1000 / 1e9:.0f} GB available")
    assert rows["kron/peer/numpy_kron"]["status"].startswith("skipped: needs about")


def test_plots_draw_time_roofline_and_the_coarsening_curve_of_seed_000_names(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")

    def f2d(problem, out, **_):
        args, kwargs = problem.spec_args()
        out[...] = specs.filter2d(*args, **kwargs)
        timing.record(lambda: 0.001, "k")
        return out

    names = ("GM", "GM_CF2", "GM_CF4", "SM_CF2_Vec", "SM_CF4_Vec")
    _install(monkeypatch, Backend("cfmeta", variants=lambda: [Variant("filter2d", "cfmeta", n, f2d) for n in names],
                                  bench=BenchHooks(copy=_copy)))
    assert cli.main(["bench", "--timeout", "0", "--backend", "cfmeta", "--repeat", "2", "--peers", "none", "--copy-bytes", "1000",
                     "--plots", str(tmp_path / "plots"), "--json", str(tmp_path / "c.json")]) == 0
    cf = json.loads((tmp_path / "c.json").read_text())["problems"][0]["coarsening"]
    assert [(c["memory"], c["vec"], [p["cf"] for p in c["points"]]) for c in cf] == [("GM", False, [1, 2, 4]),
                                                                                    ("SM", True, [2, 4])]
    assert all(p["seconds"] == 0.001 for c in cf for p in c["points"])
    got = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert got == ["coarsening_filter2d-small.png", "roofline_filter2d-small.png", "time_filter2d-small.png"]
    assert all((tmp_path / "plots" / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in got)


def test_list_presets_names_every_preset(capsys, monkeypatch):
    from refconv.console import console
    monkeypatch.setattr(console, "width", 250)       # whatever terminal the test runs in (xdist: 80)
    assert cli.main(["bench", "--list-presets"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in presets.PRESETS)


def test_bench_command_runs_cpu_variants_and_cpu_peers_end_to_end(tmp_path):
    p = refconv_cli("bench", "--backend", "numba_cpu", "--op", "matvec", "--repeat", "3", "--copy-bytes", "100000",
                    "--json", "b.json", cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    rep = json.loads((tmp_path / "b.json").read_text())
    rows = {r["variant"]: r for r in rep["rows"]}
    base = rep["problems"][0]["baseline"]
    assert base in ("matvec/peer/numpy_matvec", "matvec/peer/cublas_mv") and rows[base]["speedup"] == 1.0
    v = rows["matvec/numba_cpu/row_loop"]
    assert v["status"] == "ok" and v["timer"] == "host clock" and v["kernel_s"] is None and v["e2e_s"]["n"] == 3
    assert v["speedup"] == pytest.approx(rows[base]["median_s"] / v["median_s"], rel=1e-12)
    assert v["roofline_pct"] > 0 and v["copy"] == "host"


def test_a_baseline_peer_of_another_op_leaves_each_other_op_its_default(tmp_path, monkeypatch):
    _install(monkeypatch, Backend("bmeta", variants=lambda: [Variant("matvec", "bmeta", "right", _matvec_right),
                                                             Variant("kron", "bmeta", "k", _kron_array)]))
    assert cli.main(["bench", "--timeout", "0", "--backend", "bmeta", "--repeat", "2", "--baseline", "numpy_kron", "--peers", "all",
                     "--json", str(tmp_path / "b.json")]) == 0
    got = {p["op"]: p["baseline"] for p in json.loads((tmp_path / "b.json").read_text())["problems"]}
    default = peers.default_baseline("matvec", peers.for_op("matvec", "all"))  # numpy_matvec without a GPU
    assert got == {"kron": "kron/peer/numpy_kron", "matvec": f"matvec/peer/{default}"}


def test_the_spec_result_is_computed_once_per_problem_for_all_variants(tmp_path, monkeypatch):
    from refconv import checking
    calls = []
    real = checking.acceptance_for
    monkeypatch.setattr(checking, "acceptance_for", lambda p: calls.append(p.descriptor()) or real(p))
    _install(monkeypatch, Backend("onemeta", variants=lambda: [Variant("matvec", "onemeta", f"v{i}", _matvec_right)
                                                               for i in range(3)]))
    assert cli.main(["bench", "--timeout", "0", "--backend", "onemeta", "--repeat", "1", "--peers", "none",
                     "--json", str(tmp_path / "o.json")]) == 0
    assert all(r["status"] == "ok" for r in _rows(tmp_path / "o.json").values() if r["kind"] != "copy")
    assert len(calls) == 1


def _kron_tiny(monkeypatch, variants):
    _install(monkeypatch, Backend("kbig", variants=lambda: variants))
    tiny = presets.Preset("kron-rows", "kron", {"dtype": "float64", "m": 3, "n": 2, "p": 2, "q": 3}, {},
                          {"a": "random.1", "b": "random.2"}, "test")
    monkeypatch.setitem(presets.PRESETS, "kron-rows", tiny)


def _kron_rows(problem, out, **_):
    full = np.kron(problem.inputs["a"], problem.inputs["b"])
    for r0 in range(0, full.shape[0], 2):
        out.write(r0, full[r0:r0 + 2])


def test_a_row_checked_op_is_benched_without_the_whole_spec_result(tmp_path, monkeypatch):
    """kron results outgrow host memory (n = 360 float64: 134 GB): the bench must leave the
    whole spec result alone and let the checker compute the spec's rows."""
    from refconv import checking

    def whole_result(problem):
        raise AssertionError(f"the whole spec result was computed for {problem.descriptor()}")
    monkeypatch.setattr(checking, "acceptance_for", whole_result)
    _kron_tiny(monkeypatch, [Variant("kron", "kbig", "array", _kron_array),
                             Variant("kron", "kbig", "rows", _kron_rows, output="rows")])
    assert cli.main(["bench", "--timeout", "0", "--backend", "kbig", "--preset", "kron-rows", "--repeat", "1", "--peers", "none",
                     "--json", str(tmp_path / "k.json")]) == 0
    rows = _rows(tmp_path / "k.json")
    assert rows["kron/kbig/array"]["status"] == "ok" and rows["kron/kbig/rows"]["status"] == "ok"


def test_a_streaming_variant_needs_no_host_memory_for_the_result_it_streams(tmp_path, monkeypatch):
    _kron_tiny(monkeypatch, [Variant("kron", "kbig", "array", _kron_array),
                             Variant("kron", "kbig", "rows", _kron_rows, output="rows")])
    out_bytes, in_bytes = 8 * 6 * 6, 8 * (6 + 6)
    have = bench.ROW_CHECK_BYTES + in_bytes + out_bytes // 2   # room for the blocks, not for the result
    monkeypatch.setattr(bench, "available_host_bytes", lambda: have)
    assert cli.main(["bench", "--timeout", "0", "--backend", "kbig", "--preset", "kron-rows", "--repeat", "1", "--peers", "none",
                     "--json", str(tmp_path / "k.json")]) == 0
    rows = _rows(tmp_path / "k.json")
    assert rows["kron/kbig/rows"]["status"] == "ok"
    assert rows["kron/kbig/array"]["status"].startswith("skipped: checking needs about")


def test_the_report_is_written_after_each_row_so_a_stopped_run_keeps_what_it_measured(tmp_path, monkeypatch):
    js, md, seen = tmp_path / "b.json", tmp_path / "b.md", []

    def matvec_looks(problem, out, **kw):   # runs after kron's problem (ops in name order)
        rep = json.loads(js.read_text())
        seen.append(([p["name"] for p in rep["problems"]], [r["variant"] for r in rep["rows"]], md.read_text()))
        return _matvec_right(problem, out, **kw)
    _install(monkeypatch, Backend("incmeta", variants=lambda: [Variant("kron", "incmeta", "k", _kron_array),
                                                               Variant("matvec", "incmeta", "m", matvec_looks)]))
    assert cli.main(["bench", "--timeout", "0", "--backend", "incmeta", "--repeat", "1", "--peers", "none",
                     "--json", str(js), "--markdown", str(md)]) == 0
    names, rows, text = seen[0]
    assert names == ["kron-small", "matvec-small"]          # kron whole, matvec up to its spec row
    assert "kron/incmeta/k" in rows and "matvec/spec" in rows and "matvec/incmeta/m" not in rows
    assert "### kron-small" in text and "### matvec-small" in text
    assert [p["name"] for p in json.loads(js.read_text())["problems"]] == ["kron-small", "matvec-small"]
    assert "matvec/incmeta/m" in _rows(js)


def test_a_budget_shows_how_many_runs_each_row_got(tmp_path, monkeypatch):
    def slow(problem, out, **kw):
        time.sleep(0.03)
        return _matvec_right(problem, out, **kw)
    _install(monkeypatch, Backend("budgetmeta", variants=lambda: [Variant("matvec", "budgetmeta", "slow", slow)]))
    md, js = tmp_path / "b.md", tmp_path / "b.json"
    assert cli.main(["bench", "--timeout", "0", "--backend", "budgetmeta", "--repeat", "50", "--budget", "0.1", "--peers", "none",
                     "--json", str(js), "--markdown", str(md)]) == 0
    r = _rows(js)["matvec/budgetmeta/slow"]
    assert 1 <= r["kernel_s"]["n"] < 50 and json.loads(js.read_text())["budget"] == 0.1
    assert f"(n={r['kernel_s']['n']})" in md.read_text() and "--budget 0.1 s" in md.read_text()
    assert cli.main(["bench", "--timeout", "0", "--backend", "budgetmeta", "--budget", "0"]) == 2   # a usage error


def test_a_rows_status_carries_the_backends_caveat_about_its_intervals(tmp_path, monkeypatch):
    def held(problem, out, **kw):
        out[:] = specs.matvec(problem.inputs["m"], problem.inputs["v"])
        timing.record(lambda: KERNEL_S, "fake kernel", caveat=lambda: "the stream hold timed out")
        return out
    _install(monkeypatch, Backend("caveatmeta", variants=lambda: [Variant("matvec", "caveatmeta", "held", held)]))
    js = tmp_path / "b.json"
    assert cli.main(["bench", "--timeout", "0", "--backend", "caveatmeta", "--repeat", "2", "--peers", "none", "--json", str(js)]) == 0
    r = _rows(js)["matvec/caveatmeta/held"]
    assert r["status"] == "ok; caveat (2 intervals): the stream hold timed out"
    assert r["caveats"] == {"the stream hold timed out": 2} and r["kernel_s"]["median"] == KERNEL_S


def test_gpu_peers_hand_their_cached_memory_back_after_timing(tmp_path, monkeypatch):
    import weakref
    released, buffers = [], []

    class Tensor:   # stands for the peer's device buffers, to be dropped before the release
        pass

    def prepare(problem):
        t = Tensor()
        buffers.append(weakref.ref(t))
        return lambda: (t, timing.record(lambda: KERNEL_S))
    fake = peers.Peer("fake_gpu_mv", "matvec", "a fake GPU library", "gpu", prepare, lambda: None)
    monkeypatch.setattr(peers, "all_peers", lambda: (fake,))
    monkeypatch.setattr(peers, "release", lambda: released.append([r() is not None for r in buffers]))
    _install(monkeypatch, Backend("relmeta", variants=lambda: [Variant("matvec", "relmeta", "right", _matvec_right)]))
    js = tmp_path / "b.json"
    assert cli.main(["bench", "--timeout", "0", "--backend", "relmeta", "--repeat", "2", "--peers", "fake_gpu_mv", "--json", str(js)]) == 0
    assert _rows(js)["matvec/peer/fake_gpu_mv"]["status"] == "ok"
    assert released == [[False]]   # released once, after the peer's own buffers were dropped


def test_release_empties_the_caches_of_the_gpu_libraries_already_imported(monkeypatch):
    import sys
    import types
    calls = []
    cuda = types.SimpleNamespace(is_initialized=lambda: True, synchronize=lambda: calls.append("sync"),
                                 empty_cache=lambda: calls.append("torch"))
    pool = types.SimpleNamespace(free_all_blocks=lambda: calls.append("pool"))
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(get_default_memory_pool=lambda: pool,
                                                                   get_default_pinned_memory_pool=lambda: pool))
    peers.release()
    assert calls == ["sync", "torch", "pool", "pool"]
    monkeypatch.delitem(sys.modules, "cupy")
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=types.SimpleNamespace(
        is_initialized=lambda: False)))
    calls.clear()
    peers.release()              # torch never touched the GPU, CuPy not imported: nothing to do
    assert calls == []


def _report(tmp_path, name, backends, argv):
    _install(monkeypatch := pytest.MonkeyPatch(), *backends)
    try:
        js = tmp_path / name
        assert cli.main(["bench", "--timeout", "0", *argv, "--peers", "none", "--json", str(js)]) == 0
        return js
    finally:
        monkeypatch.undo()


def test_twins_of_many_launches_show_the_launches_and_the_time_of_one(tmp_path, monkeypatch):
    """A variant whose call is a host loop of launches (kron's ``block_launches``): its row says how
    many intervals a call recorded and the twins table divides the time by them, so that the
    launch API's share can be read against the fixed cost of one launch."""
    def launches(n):
        def run(problem, out, **_):
            out[:] = specs.matvec(problem.inputs["m"], problem.inputs["v"])
            for _ in range(n):
                timing.record(lambda: KERNEL_S / 4, "fake launch")
            return out
        return run
    _install(monkeypatch, Backend("lna", variants=lambda: [Variant("matvec", "lna", "loop", launches(4)),
                                                           Variant("matvec", "lna", "one", _matvec_right)]),
             Backend("lnb", variants=lambda: [Variant("matvec", "lnb", "loop", launches(8)),
                                              Variant("matvec", "lnb", "one", _matvec_right)]))
    out, md = tmp_path / "l.json", tmp_path / "l.md"
    assert cli.main(["bench", "--timeout", "0", "--backend", "ln*", "--repeat", "2", "--peers", "none",
                     "--json", str(out), "--markdown", str(md)]) == 0
    rep = json.loads(out.read_text())
    rows = {r["variant"]: r for r in rep["rows"]}
    assert rows["matvec/lna/loop"]["launches"] == 4 and rows["matvec/lnb/loop"]["launches"] == 8
    assert "launches" not in rows["matvec/lna/one"]                # one launch: nothing to divide
    loop, one = rep["problems"][0]["twins"]
    assert loop["name"] == "loop" and loop["launches"] == {"lna": 4, "lnb": 8}
    assert loop["per_launch"] == {"lna": pytest.approx(KERNEL_S / 4), "lnb": pytest.approx(KERNEL_S / 4)}
    assert loop["ratio"] == pytest.approx(2.0) and "launches" not in one
    assert "| loop | 2 ms = 4 × 500 µs | 4 ms = 8 × 500 µs | 2× |" in md.read_text()


def test_bench_report_merges_split_runs_keeping_the_measured_row_and_recomputing_twins(tmp_path):
    def oom(problem, out, **_):
        raise MemoryError("out of device memory")
    a = _report(tmp_path, "a.json", [Backend("mga", variants=lambda: [Variant("matvec", "mga", "mv", oom)])],
                ["--backend", "mga", "--repeat", "2", "--baseline", "spec"])
    b = _report(tmp_path, "b.json", [Backend("mga", variants=lambda: [Variant("matvec", "mga", "mv", _matvec_right)]),
                                     Backend("mgb", variants=lambda: [Variant("matvec", "mgb", "mv", _matvec_right)])],
                ["--backend", "mg*", "--repeat", "2", "--baseline", "spec"])
    out, md = tmp_path / "all.json", tmp_path / "all.md"
    assert cli.main(["bench-report", str(a), str(b), "--json", str(out), "--markdown", str(md),
                     "--plots", str(tmp_path / "p")]) == 0
    rep = json.loads(out.read_text())
    rows = {r["variant"]: r for r in rep["rows"]}
    assert rows["matvec/mga/mv"]["status"] == "ok" and rows["matvec/mga/mv"]["run"] == 1   # the measured one
    assert rows["matvec/spec"]["run"] == 0                                                # first run's row kept
    spec_s = rows["matvec/spec"]["median_s"]
    assert rows["matvec/mgb/mv"]["speedup"] == pytest.approx(spec_s / KERNEL_S)   # against the merged baseline
    assert rep["problems"][0]["twins"] == [{"name": "mv", "times": {"mga": KERNEL_S, "mgb": KERNEL_S}, "ratio": 1.0}]
    assert [m["source"] for m in rep["merged_from"]] == ["a.json", "b.json"]
    assert "* run 1: b.json" in md.read_text() and "(run 1)" in md.read_text()
    for content, says in ((None, "does not exist"), ("{not json", "invalid JSON"), ("{}", "no 'problems' list")):
        bad = tmp_path / "bad.json"
        bad.unlink(missing_ok=True)
        if content is not None:
            bad.write_text(content)
        with pytest.raises((ValueError, FileNotFoundError), match=says):
            cmd_bench_report(ReportOptions(reports=[str(bad)]))
        assert cli.main(["bench-report", str(bad)]) == 2       # a usage error, named


def test_a_series_of_sizes_gets_a_time_against_size_plot():
    from refconv.bench import report as bench_report

    def res(name, t):
        return {"name": name, "rows": [Row.of_variant("kron/x/v", "ok", median_s=t),
                                       Row.of_variant("kron/x/bad", "error", median_s=None)]}
    rep = {"problems": [res("kron-200", 2.0), res("kron-100", 1.0), res("kron-300", 3.0), res("other", 9.0)]}
    assert bench_report.series(rep) == {"kron": {"kron/x/v": [(100, 1.0), (200, 2.0), (300, 3.0)]}}
    assert bench_report.series({"problems": rep["problems"][:2]}) == {}   # fewer than three sizes: no series


def test_the_report_gives_each_copy_source_the_fixed_cost_of_its_empty_kernel(tmp_path, monkeypatch):
    def empty():                    # the backend's empty kernel: 3 µs whatever it does
        return lambda: timing.record(lambda: 3e-6, "fake empty kernel")

    _install(monkeypatch, Backend("fixedmeta", variants=lambda: [Variant("matvec", "fixedmeta", "right", _matvec_right)],
                                  bench=BenchHooks(copy=_copy, launch=empty)),
             Backend("nofixed", variants=lambda: [Variant("matvec", "nofixed", "right", _matvec_right)],
                     bench=BenchHooks(copy=_copy)))
    out, md = tmp_path / "b.json", tmp_path / "b.md"
    assert cli.main(["bench", "--timeout", "0", "--backend", "*fixed*", "--repeat", "2", "--peers", "none",
                     "--copy-bytes", str(COPY_BYTES), "--json", str(out), "--markdown", str(md)]) == 0
    bws = {b["source"]: b for b in json.loads(out.read_text())["bandwidth"]}
    assert bws["fixedmeta device copy"]["fixed_s"] == pytest.approx(3e-6, rel=1e-12)
    assert bws["nofixed device copy"]["fixed_s"] is None          # no launch hook: no fixed cost, no guess
    text = md.read_text()
    gbs = f"{2 * COPY_BYTES / COPY_S / 1e9:.4g} GB/s"
    assert f"copy bandwidth (fixedmeta device copy): {gbs}; an empty kernel timed the same way: 3 µs" in text
    assert f"copy bandwidth (nofixed device copy): {gbs}\n" in text


def test_an_empty_kernel_hook_that_raises_leaves_the_bandwidth_and_says_why(tmp_path, monkeypatch):
    def broken():
        raise RuntimeError("no empty kernel on this device")

    _install(monkeypatch, Backend("brokenmeta", variants=lambda: [Variant("matvec", "brokenmeta", "right", _matvec_right)],
                                  bench=BenchHooks(copy=_copy, launch=broken)))
    out, md = tmp_path / "b.json", tmp_path / "b.md"
    assert cli.main(["bench", "--timeout", "0", "--backend", "brokenmeta", "--repeat", "2", "--peers", "none",
                     "--copy-bytes", str(COPY_BYTES), "--json", str(out), "--markdown", str(md)]) == 0
    (bw,) = [b for b in json.loads(out.read_text())["bandwidth"] if b["source"] == "brokenmeta device copy"]
    assert bw["bytes_per_s"] == pytest.approx(2 * COPY_BYTES / COPY_S) and bw["fixed_s"] is None
    assert "RuntimeError: no empty kernel on this device" in bw["fixed_error"]
    assert "its empty kernel could not be timed (RuntimeError: no empty kernel on this device)" in md.read_text()
