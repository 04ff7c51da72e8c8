"""The copy floor of ``refconv bench`` (issue 42.1): every problem gets a row ``op/copy``, a
device-to-device copy that moves exactly the problem's input plus output bytes, timed as a variant
is (the backend's copy hook inside the bench's timed runs, with the L2 flush); every device row's
time over it is the ``× copy`` column.  Without a GPU the row is skipped with the reason.  Fake
backends stand in for the GPU (their copy hook records a fixed interval), as in test_bench.py."""
import json

import numpy as np
import pytest

from refconv import Backend, Variant, cli, ops, registry, specs, timing
from refconv.bench import Row, problems
from refconv.bench.options import RowOptions
from refconv.bench.report import markdown, merge, set_copy_ratios
from refconv.bench.worker import Rows, RowTask
from refconv.timing import BenchHooks

KERNEL_S, COPY_S = 0.003, 0.0015


@pytest.fixture(autouse=True)
def _fresh_variant_cache():
    registry._variants_of.cache_clear()
    yield
    registry._variants_of.cache_clear()


def _install(monkeypatch, *backends):
    registry._variants_of.cache_clear()
    monkeypatch.setattr(registry, "backends", lambda: {b.name: b for b in backends})


class _Copies:
    """A fake ``BenchHooks.copy``: remembers each size asked for and, per run, its size and the
    flush it saw."""

    def __init__(self, seconds=COPY_S):
        self.sizes, self.flushes, self.seconds = [], [], seconds

    def __call__(self, nbytes):
        self.sizes.append(nbytes)

        def run():
            self.flushes.append((nbytes, timing.flush_bytes()))
            timing.record(lambda: self.seconds, "fake copy")
        return run


def _matvec_right(problem, out, **_):
    out[:] = specs.matvec(problem.inputs["m"], problem.inputs["v"])
    timing.record(lambda: KERNEL_S, "fake kernel")
    return out


def _sim_right(problem, out, **_):
    out[:] = specs.matvec(problem.inputs["m"], problem.inputs["v"])
    timing.record(lambda: -0.001, "simulated kernel", simulated=True)
    return out


def _spec_bytes(problem) -> int:
    """Input plus output bytes as the spec sees them: its array arguments and its result."""
    args, kwargs = problem.spec_args()
    arrays = [x for x in (*args, *kwargs.values()) if isinstance(x, np.ndarray)]
    return sum(a.nbytes for a in arrays) + problem.record.spec(*args, **kwargs).nbytes


@pytest.mark.parametrize("op", [r.name for r in ops.records() if "small" in r.bench])
def test_the_copy_row_of_each_ops_problem_moves_the_specs_input_plus_output_bytes(op, monkeypatch):
    copies = _Copies()
    _install(monkeypatch, Backend("gpumeta", variants=lambda: [], bench=BenchHooks(copy=copies)))
    problem = problems.bench_problem(op, "small")
    rows = Rows(RowOptions(repeat=3, flush_bytes=4096, copy_bytes=1000), ["gpumeta"], peers="none")
    row = rows(RowTask("copy", f"{op}-small", problem.descriptor()))
    want = _spec_bytes(problem)
    assert row.kind == "copy" and row.id == f"{op}/copy" and row.bytes == want
    # one copy of ceil(bytes / 2): it reads and writes that many, so it moves the problem's bytes
    assert copies.sizes[0] == -(-want // 2) and 2 * copies.sizes[0] - want in (0, 1)
    assert row.status == "ok" and row.timer == "device events" and row.median_s == COPY_S
    assert row.kernel_s["n"] == 3 and row.library == "gpumeta device copy"
    assert row.sources == {"gpumeta device copy": COPY_S}


def test_the_copy_is_timed_as_a_variant_is_flushed_before_each_run_and_the_fastest_path_is_the_floor(monkeypatch):
    slow, fast = _Copies(0.004), _Copies(0.002)
    _install(monkeypatch, Backend("ametagpu", variants=lambda: [], bench=BenchHooks(copy=slow)),
             Backend("bmetagpu", variants=lambda: [], bench=BenchHooks(copy=fast)))
    problem = problems.bench_problem("matvec", "small")
    rows = Rows(RowOptions(repeat=5, flush_bytes=4096, copy_bytes=1000), ["ametagpu", "bmetagpu"], peers="none")
    row = rows(RowTask("copy", "matvec-small", problem.descriptor()))
    # the warm-up run is outside any collection (no flush); every timed run flushes as a launch
    # does; then as many plain runs give the end-to-end time, as for a variant (the bandwidth copy,
    # of --copy-bytes, is measured without a flush)
    n = -(-_spec_bytes(problem) // 2)
    for copies in (slow, fast):
        assert [f for b, f in copies.flushes if b == n] == [0] + [4096] * 5 + [0] * 5
        assert {f for b, f in copies.flushes if b == 1000} == {0}
    assert row.median_s == 0.002 and row.library == "bmetagpu device copy"
    assert row.sources == {"ametagpu device copy": 0.004, "bmetagpu device copy": 0.002}


def test_without_a_gpu_the_copy_row_is_skipped_naming_why(tmp_path, monkeypatch):
    cpu = Backend("cpumeta", variants=lambda: [Variant("matvec", "cpumeta", "right", _matvec_right)])
    sim = Backend("simmeta", variants=lambda: [Variant("matvec", "simmeta", "k", _sim_right)],
                  bench=BenchHooks(copy=_Copies(), simulated=lambda: "simmeta runs on a simulator here"))
    _install(monkeypatch, cpu, sim)
    out = tmp_path / "c.json"
    assert cli.main(["bench", "--timeout", "0", "--backend", "*meta", "--repeat", "2", "--peers", "none",
                     "--json", str(out)]) == 0
    row = {r["variant"]: r for r in json.loads(out.read_text())["rows"]}["matvec/copy"]
    assert row["kind"] == "copy" and row["median_s"] is None and row.get("copy_ratio") is None
    assert row["status"] == ("skipped: no GPU device copy here: cpumeta has no device copy (Backend.bench.copy); "
                             "simmeta runs on a simulator here")


def test_a_copy_path_that_fails_is_named_and_the_row_skipped_when_none_could_run(monkeypatch):
    def oom(nbytes):
        raise MemoryError(f"cannot allocate {nbytes} bytes on the device")
    _install(monkeypatch, Backend("oommeta", variants=lambda: [], bench=BenchHooks(copy=oom)))
    problem = problems.bench_problem("matvec", "small")
    row = Rows(RowOptions(repeat=2, copy_bytes=1000), ["oommeta"], peers="none")(
        RowTask("copy", "matvec-small", problem.descriptor()))
    half = -(-_spec_bytes(problem) // 2)
    assert row.median_s is None and row.status == (
        f"skipped: no device copy could be timed: oommeta device copy: MemoryError: cannot allocate {half} "
        f"bytes on the device")


def test_a_copy_larger_than_the_free_host_memory_is_skipped_with_both_numbers(monkeypatch):
    copies = _Copies()
    _install(monkeypatch, Backend("gpumeta", variants=lambda: [], bench=BenchHooks(copy=copies)))
    monkeypatch.setattr(problems, "available_host_bytes", lambda: 1000)
    problem = problems.bench_problem("matvec", "small")
    row = Rows(RowOptions(repeat=2, copy_bytes=1000), ["gpumeta"], peers="none")(
        RowTask("copy", "matvec-small", problem.descriptor()))
    half = -(-_spec_bytes(problem) // 2)
    assert row.median_s is None and copies.sizes == [] and row.status == (
        f"skipped: the copy's source of {half / 1e9:.3g} GB may be filled from the host, "
        f"{1000 / 1e9:.3g} GB of host memory available")


def test_the_report_gives_each_device_row_its_ratio_to_the_copy(tmp_path, monkeypatch, capsys):
    from refconv.console import console
    monkeypatch.setattr(console, "width", 300)
    _install(monkeypatch, Backend("gpumeta", variants=lambda: [Variant("matvec", "gpumeta", "right", _matvec_right)],
                                  bench=BenchHooks(copy=_Copies())))
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    assert cli.main(["bench", "--timeout", "0", "--backend", "gpumeta", "--repeat", "3", "--peers", "none",
                     "--baseline", "spec", "--copy-bytes", "1000", "--json", str(out), "--markdown", str(md)]) == 0
    rep = json.loads(out.read_text())
    rows = {r["variant"]: r for r in rep["rows"]}
    copy, v, spec = rows["matvec/copy"], rows["matvec/gpumeta/right"], rows["matvec/spec"]
    assert copy["bytes"] == rep["problems"][0]["work"]["bytes"] and copy["median_s"] == COPY_S
    assert v["copy_ratio"] == pytest.approx(KERNEL_S / COPY_S, rel=1e-12) and copy["copy_ratio"] == 1.0
    assert "copy_ratio" not in spec                  # host clock: the copy is a device floor
    text = md.read_text()
    assert "| row | kernel | end-to-end | timer | % roofline | × copy | speed-up | status |" in text
    assert f"| {KERNEL_S / COPY_S:.3g}× |" in text and f"| {copy['bytes'] / 1e6:.4g} MB moved |" in text
    term = capsys.readouterr().out
    assert "× copy" in term and "matvec/copy" in term and f"{KERNEL_S / COPY_S:.3g}×" in term
    # a merged report keeps each row's ratio from its own run, and the copy row whole
    merged = merge([rep])
    got = {r.id: r for r in merged["problems"][0]["rows"]}
    assert got["matvec/gpumeta/right"].copy_ratio == v["copy_ratio"] and got["matvec/copy"].bytes == copy["bytes"]
    assert f"| {KERNEL_S / COPY_S:.3g}× |" in markdown(merged)


def test_copy_ratios_are_for_device_rows_of_a_problem_whose_copy_was_timed():
    copy = Row("copy", "kron", "ok", median_s=2e-6, timer="device events", bytes=10)
    dev = Row.of_variant("kron/gpu/k", "ok", median_s=5e-6, timer="device events")
    host = Row.of_variant("kron/cpu/k", "ok", median_s=5e-3, timer="host clock")
    set_copy_ratios([copy, dev, host])
    assert copy.copy_ratio == 1.0 and dev.copy_ratio == pytest.approx(2.5, rel=1e-12) and host.copy_ratio is None
    skipped = Row("copy", "kron", "skipped: no GPU device copy here: x")
    set_copy_ratios([skipped, dev])
    assert dev.copy_ratio is None
    d = Row.from_json(copy.to_json(), "kron").to_json()
    assert d == copy.to_json() and d["variant"] == "kron/copy" and d["bytes"] == 10


def test_a_copy_task_that_hangs_or_crashes_is_a_copy_row_naming_why():
    problem = problems.bench_problem("matvec", "small")
    row = RowTask("copy", "matvec-small", problem.descriptor()).failed("crash: worker died (signal 11 SIGSEGV)")
    assert row.id == "matvec/copy" and row.status == "crash: worker died (signal 11 SIGSEGV)"
