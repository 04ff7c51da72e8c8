"""Kernel time from device events: refconv.timing collects the intervals a backend records around
its launches; numba_cuda records CUDA events per launch (exercised under the simulator, where the
times mean nothing and are flagged), OpenCL its profiling events (PoCL); the bench's measure()
sums a run's intervals."""
import json
import os
import subprocess
import time
import sys

import numpy as np
import pytest

from refconv import Problem, timing
from refconv.bench.rows import measure, summary
from refconv.checking import acceptance_for, scratch_output


def test_record_outside_a_collection_is_ignored_and_inside_goes_to_the_innermost():
    timing.record(lambda: 1.0)  # nothing open: no error, nowhere to go
    assert not timing.active()
    with timing.collect() as outer:
        timing.record(lambda: 0.5, "a")
        with timing.collect() as inner:
            assert timing.active()
            timing.record(lambda: 0.25, "b", simulated=True)
        timing.record(lambda: 0.125, "c")
    assert outer.seconds() == [0.5, 0.125] and outer.labels() == ["a", "c"] and not outer.simulated
    assert inner.seconds() == [0.25] and inner.simulated
    assert outer.total() == 0.625
    with timing.collect() as none:
        pass
    assert none.total() is None


def test_flush_bytes_is_what_the_innermost_collection_asks_for():
    assert timing.flush_bytes() == 0
    with timing.collect(1 << 20):
        assert timing.flush_bytes() == 1 << 20
        with timing.collect():
            assert timing.flush_bytes() == 0
    assert timing.flush_bytes() == 0


def test_intervals_are_resolved_after_the_run_not_when_recorded():
    done = []
    with timing.collect() as iv:
        timing.record(lambda: done[0])  # the device's answer is only there after the work
        done.append(0.003)
    assert iv.seconds() == [0.003]


def test_measure_takes_the_kernel_time_as_the_sum_of_a_runs_intervals():
    def run():
        timing.record(lambda: 0.002)
        timing.record(lambda: 0.001)
    m = measure(run, 4)
    assert m["kernel_s"]["median"] == pytest.approx(0.003, abs=0) and m["kernel_s"]["n"] == 4
    assert m["e2e_s"]["n"] == 4 and m["e2e_s"]["median"] > 0 and not m["simulated"]
    assert measure(lambda: None, 2)["kernel_s"] is None  # nothing recorded: end-to-end only


def test_end_to_end_times_come_from_plain_runs_when_the_timed_runs_flushed():
    seen = []

    def run():
        seen.append(timing.flush_bytes())
        timing.record(lambda: 0.001)
    m = measure(run, 3, flush_bytes=1 << 20)
    assert seen == [1 << 20] * 3 + [0] * 3  # 3 flushed, event-timed runs, then 3 plain ones
    assert m["kernel_s"]["n"] == 3 and m["e2e_s"]["n"] == 3
    seen.clear()
    measure(run, 3)  # no flush: the timed runs' host clock is the end-to-end time
    assert seen == [0] * 3


def test_summary_reports_the_median_and_the_interquartile_range():
    s = summary([5.0, 1.0, 100.0, 2.0, 3.0])
    assert (s["median"], s["q1"], s["q3"], s["min"], s["max"], s["n"]) == (3.0, 2.0, 5.0, 1.0, 100.0, 5)
    assert summary([]) is None


def test_host_copy_records_one_host_interval():
    run = timing.host_copy(1 << 16)
    with timing.collect() as iv:
        run()
    assert len(iv) == 1 and iv.seconds()[0] > 0 and not iv.simulated


# ----------------------------------------------------------------------------- OpenCL (PoCL)

@pytest.fixture(scope="module")
def pocl(pocl):
    """conftest's PoCL target; the value is the OpenCL bench module whose state the tests inspect."""
    from refconv.tooling.opencl import _bench
    return _bench


def _call(v, p):
    """Run ``v`` (plugin API 2) into a fresh zero-filled buffer, or a discarding sink."""
    out = scratch_output(p, v.writes, v.output)
    got = v.run(p, out, **v.default_params())
    return out if got is None else got


def _prepared(v, desc):
    p = Problem.parse(desc)
    return p, acceptance_for(p)


def test_opencl_records_one_profiling_interval_per_launch(pocl):
    from refconv.backends.opencl import backend
    vs = {v.id: v for v in backend.variants()}
    v = vs["kron/opencl/block_launches"]  # one launch per element of A
    p, acc = _prepared(v, "kron:dtype=float64,m=3,n=2,p=5,q=4::a=random.1,b=random.2")
    with timing.collect() as iv:
        got = _call(v, p)
    assert np.array_equal(got, acc.expected)
    assert len(iv) == 3 * 2 and all(s > 0 for s in iv.seconds()) and not iv.simulated
    v = vs["matvec/opencl/block_per_row"]
    p, _ = _prepared(v, "matvec:dtype=float32,rows=37,cols=19::m=random.1,v=random.2")
    with timing.collect() as iv:
        _call(v, p)
    assert len(iv) == 1
    _call(v, p)  # outside a collection: runs, records nothing
    with timing.collect(flush_bytes=1 << 20) as iv:
        _call(v, p)
    assert len(iv) == 1 and pocl._scratch == {}  # the L2 flush is for the GPU target only


def test_opencl_flush_path_reads_on_the_queue_and_leaves_results_right(pocl, monkeypatch):
    from refconv.backends.opencl import backend
    monkeypatch.setattr(pocl, "_flushes", lambda: True)  # run the GPU target's flush on PoCL's buffers
    monkeypatch.setattr(pocl, "FIRST_USE", "touch")
    v = {v.id: v for v in backend.variants()}["filter2d/opencl/GM_CF4"]
    p, acc = _prepared(v, "filter2d:dtype=uint8,c=0,h=9,w=23,kh=3,kw=3:boundary=valid,flip=0,accumulator=int,"
                          "shift=4,rounding=trunc,cast=wrap:image=random.3,weights=exact.4")
    touches, orig = [], pocl._kernel
    monkeypatch.setattr(pocl, "_kernel", lambda e, src, name, *a: (
        touches.append(src.count("__global const uchar")) if name == "touch_args" else None, orig(e, src, name, *a))[1])
    with timing.collect(flush_bytes=1 << 16) as iv:
        got = _call(v, p)
    assert len(iv) == 1 and [k[1] for k in pocl._scratch] == [1 << 16]
    assert np.array_equal(got[1:-1, 1:-1], acc.expected)
    # before the flush, the timed launch's buffers (image, weights, output) were first used by the touch kernel, once
    assert len(touches) == 1 and touches[0] >= 3
    pocl._scratch.clear()


_F2D = ("filter2d:dtype=uint8,c=0,h=9,w=23,kh=3,kw=3:boundary=valid,flip=0,accumulator=int,"
        "shift=4,rounding=trunc,cast=wrap:image=random.{},weights=exact.{}")


def test_opencl_timed_runs_reuse_allocations_rewritten_with_each_runs_data(pocl, monkeypatch):
    """On the nvidia target a timed run's inputs and output are the allocations the previous timed
    run used (NVIDIA's OpenCL charges a fresh buffer's first use to the kernel), rewritten from the
    host: each run still computes from its own inputs into its own poisoned output; two same-sized
    inputs get two buffers; an untimed run gets fresh ones; and an allocation the next timed run
    does not take is dropped."""
    from refconv.backends.opencl import backend
    monkeypatch.setattr(pocl, "_flushes", lambda: True)
    monkeypatch.setattr(pocl, "_reuse", {"run": None, "used": {}, "prev": {}, "n": {}})
    v = {v.id: v for v in backend.variants()}["filter2d/opencl/GM_CF4"]
    taken = []
    e = pocl._platform.env()
    import pyopencl as cl
    for seed in (3, 5, 7):   # the same shapes, other data each run
        for key, buf in pocl._reuse["used"].items():   # what a run leaves in its output: not poison
            if key[1] == "out":
                cl.enqueue_copy(e.queue, buf, np.full(buf.size, 0x5A, np.uint8)).wait()
        p, acc = _prepared(v, _F2D.format(seed, seed + 1))
        with timing.collect(flush_bytes=1 << 12):
            got = _call(v, p)
        assert np.array_equal(got[1:-1, 1:-1], acc.expected), seed
        taken.append({k: b.int_ptr for k, b in pocl._reuse["used"].items()})
    # image, weights, the scalars' __constant buffer and the output: kept allocations
    assert sorted(k[1] for k in taken[0]) == ["in", "in", "in", "out"] and taken[0] == taken[1] == taken[2]
    # the output is re-poisoned each run: elements the kernel does not write (the border) come back as poison
    poison = scratch_output(p, v.writes, v.output)
    assert np.array_equal(got[0], poison[0]) and np.array_equal(got[-1], poison[-1])
    # two inputs of one size in one run: two allocations, the k-th taking the previous run's k-th
    a, b = np.arange(8, dtype=np.float32), np.arange(8, 16, dtype=np.float32)
    with timing.collect():
        b1 = pocl.input_buffer(e, a)
        assert pocl._reuse["prev"] == {}             # another row: filter2d's allocations already freed
        b2 = pocl.input_buffer(e, b)
    with timing.collect():
        c1, c2 = pocl.input_buffer(e, b), pocl.input_buffer(e, a)
    assert b1.int_ptr != b2.int_ptr and (c1.int_ptr, c2.int_ptr) == (b1.int_ptr, b2.int_ptr)
    with timing.collect():                           # scratch: kept too, by size and order
        s1, s2 = pocl.scratch_buffer(e, 32), pocl.scratch_buffer(e, 32)
    with timing.collect():
        t1, t2 = pocl.scratch_buffer(e, 32), pocl.scratch_buffer(e, 32)
        c1, c2 = pocl.input_buffer(e, b), pocl.input_buffer(e, a)
    assert s1.int_ptr != s2.int_ptr and (t1.int_ptr, t2.int_ptr) == (s1.int_ptr, s2.int_ptr)
    assert (c1.int_ptr, c2.int_ptr) != (b1.int_ptr, b2.int_ptr)   # the run before took no input: new ones
    back = np.empty(8, np.float32)
    cl.enqueue_copy(e.queue, back, c1).wait()
    assert np.array_equal(back, b)                   # rewritten with this run's data
    assert all(k[2] == 32 for k in pocl._reuse["used"])   # filter2d's allocations were dropped
    fresh = pocl.input_buffer(e, a)                  # outside a timed run: a fresh buffer
    assert fresh.int_ptr not in (c1.int_ptr, c2.int_ptr) and len(pocl._reuse["used"]) == 4
    monkeypatch.setattr(pocl, "_flushes", lambda: False)
    with timing.collect():                           # PoCL / Oclgrind: always fresh
        d = pocl.input_buffer(e, a)
    assert d.int_ptr not in (c1.int_ptr, c2.int_ptr)


@pytest.mark.parametrize("first_use", ["touch", "warm", None])
def test_opencl_first_use_of_the_buffers_is_outside_the_interval_and_leaves_results_right(pocl, monkeypatch, first_use):
    """NVIDIA's OpenCL charges a buffer's first use by a kernel to that kernel's interval: a timed
    launch first touches its buffers (a one-work-item kernel reading a byte of each) or runs the
    kernel once untimed (seen on a kernel that adds 1 to its output); either way the timed kernel's
    results stay right and one interval is kept."""
    from refconv.backends.opencl import backend
    monkeypatch.setattr(pocl, "_flushes", lambda: True)
    monkeypatch.setattr(pocl, "FIRST_USE", first_use)
    launches = []
    orig = pocl._kernel
    monkeypatch.setattr(pocl, "_kernel", lambda e, src, name, *a: (launches.append(name), orig(e, src, name, *a))[1])
    v = {v.id: v for v in backend.variants()}["filter2d/opencl/GM_CF4"]
    p, acc = _prepared(v, "filter2d:dtype=uint8,c=0,h=9,w=23,kh=3,kw=3:boundary=valid,flip=0,accumulator=int,"
                          "shift=4,rounding=trunc,cast=wrap:image=random.3,weights=exact.4")
    with timing.collect(flush_bytes=1 << 16) as iv:
        got = _call(v, p)
    assert len(iv) == 1 and np.array_equal(got[1:-1, 1:-1], acc.expected)
    assert launches.count("touch_args") == (first_use == "touch")
    # the warm mode runs the timed kernel once before it: a kernel that adds 1 to its output shows it
    e = pocl._platform.env()
    bump = pocl._kernel(e, "__kernel void bump(__global float *o) { o[0] += 1.0f; }", "bump", (), "<bump>")
    out = np.zeros(1, np.float32)
    with timing.collect(flush_bytes=1 << 16) as iv:
        from refconv import opencl as oc
        oc.launch(bump, (1,), (1,), oc.OUT, out=out)
    assert len(iv) == 1 and out[0] == (2 if first_use == "warm" else 1)
    pocl._scratch.clear()


def _sentinel() -> np.uint64:
    from refconv.tooling.cuda._common import _FLUSH_SENTINEL
    return np.uint64(_FLUSH_SENTINEL)


def _sentinel_words(n: int, at: int) -> np.ndarray:
    """``n`` uint64 words, all zero but word ``at``, the flush kernels' sentinel."""
    w = np.zeros(n, np.uint64)
    w[at] = _sentinel()
    return w


def test_opencl_flush_kernel_reads_every_word(pocl):
    """The L2 flush is a read (a clean L2): each work-item xors its grid-stride words and writes the
    one sink word only if that xor is the sentinel, so a sentinel placed in any one word (first,
    last, past the first stride) is seen; words without it leave the sink alone."""
    import pyopencl as cl
    e = pocl._platform.env()
    k = pocl._kernel(e, pocl._TOUCH, "touch", (), "<refconv L2 flush>")
    n = 3000
    cases = [(_sentinel_words(n, at), True) for at in (0, 1, 255, 256, 1791, n - 1)]
    for words, hit in cases + [(np.arange(n, dtype=np.uint64), False)]:
        buf = cl.Buffer(e.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=words)
        sink = np.zeros(1, np.uint64)
        sb = cl.Buffer(e.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=sink)
        k(e.queue, (256,), (64,), buf, np.uint64(n), sb)      # fewer work-items than words: grid stride
        cl.enqueue_copy(e.queue, sink, sb)
        e.queue.finish()
        assert (sink[0] == _sentinel()) == hit, np.flatnonzero(words)[:1]


def test_numba_cuda_flush_kernel_reads_every_word(sim):
    from refconv import cuda as rc
    from refconv.tooling.cuda import _common
    cuda = rc.cuda()
    k = _common._flush_kernel("sim")
    n = 200
    for words, hit in [(_sentinel_words(n, at), True) for at in (0, 31, 32, 150, n - 1)] + \
            [(np.arange(n, dtype=np.uint64), False)]:
        sink = cuda.to_device(np.zeros(1, np.uint64))
        k[1, 32](cuda.to_device(words), sink)                 # 32 threads over 200 words: grid stride
        assert (sink.copy_to_host()[0] == _sentinel()) == hit


def test_opencl_copy_hook_times_a_device_copy(pocl):
    from refconv.backends.opencl import backend
    run = backend.bench.copy(1 << 20)
    with timing.collect() as iv:
        run()
    assert len(iv) == 1 and iv.seconds()[0] > 0
    assert backend.bench.simulated() is None  # PoCL is a real (CPU) device


# ----------------------------------------------------------------------------- numba_cuda (simulator)

_SIM_SCRIPT = r"""
import json, numpy as np
from refconv import Problem, timing
from refconv.backends.numba_cuda import backend
from refconv.tooling.cuda import _env
from refconv.checking import acceptance_for, scratch_output
_env.configure({"cuda": "sim"})

def _call(v, p):
    out = scratch_output(p, v.writes, v.output)
    got = v.run(p, out, **v.default_params())
    return out if got is None else got
vs = {v.id: v for v in backend.variants()}
out = {}
for vid, desc in [
    ("filter2d/numba_cuda/GM_CF4", "filter2d:dtype=uint8,c=0,h=9,w=23,kh=3,kw=3:boundary=valid,flip=0,accumulator=int,shift=4,rounding=trunc,cast=wrap:image=random.3,weights=exact.4"),
    ("conv2d/numba_cuda/cuconv_split", "conv2d:dtype=float32,n=2,c=3,h=5,w=4,m=2,r=3,s=2,groups=1,bias=0:stride=1,padding=1,dilation=1:x=exact.1,w=exact.2"),
    ("kron/numba_cuda/streamed", "kron:dtype=float64,m=3,n=2,p=5,q=4::a=random.1,b=random.2"),
]:
    v = vs[vid]
    p = Problem.parse(desc)
    with timing.collect() as iv:
        _call(v, p)
    out[vid] = {"n": len(iv), "simulated": iv.simulated, "resolved": len(iv.seconds())}
from refconv.tooling.cuda import _common
v = vs["filter2d/numba_cuda/GM"]
p = Problem.parse("filter2d:dtype=uint8,c=0,h=9,w=23,kh=3,kw=3:boundary=valid,flip=0,accumulator=int,shift=4,rounding=trunc,cast=wrap:image=random.3,weights=exact.4")
acc = acceptance_for(p)
with timing.collect() as iv:
    _call(v, p)
out["scratch_without_flush"] = sorted(_common._scratch)
with timing.collect(flush_bytes=1 << 20) as iv:
    got = _call(v, p)
out["scratch_with_flush"] = sorted(_common._scratch)
out["flushed_result_ok"] = bool(np.array_equal(got[1:-1, 1:-1], acc.expected))
run = backend.bench.copy(4096)
with timing.collect() as iv:
    run()
out["copy"] = {"n": len(iv), "simulated": iv.simulated}
out["reason"] = backend.bench.simulated()
import gc
with timing.collect():
    with _common._interval("probe"):
        out["gc_inside_interval"] = gc.isenabled()
out["gc_after_interval"] = gc.isenabled()
print(json.dumps(out))
"""


def test_numba_cuda_records_a_cuda_event_interval_per_launch_flagged_simulated():
    pytest.importorskip("numba_cuda")
    env = {k: v for k, v in os.environ.items() if k not in ("REFCONV_CUDA", "NUMBA_ENABLE_CUDASIM")}
    p = subprocess.run([sys.executable, "-c", _SIM_SCRIPT], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["filter2d/numba_cuda/GM_CF4"] == {"n": 1, "simulated": True, "resolved": 1}
    # split cuconv: scalar_prods + sum_kernel per image, 2 images
    assert got["conv2d/numba_cuda/cuconv_split"] == {"n": 4, "simulated": True, "resolved": 4}
    # streamed kron: one launch per block of 4 result rows (m*p = 15 rows), on its own stream
    # 15 rows of C in blocks of the default rows_per_block (1024): one launch
    assert got["kron/numba_cuda/streamed"] == {"n": 1, "simulated": True, "resolved": 1}
    assert got["copy"] == {"n": 1, "simulated": True}
    # the L2 flush before a timed launch: only when asked for, 4 KiB under the simulator
    assert got["scratch_without_flush"] == [] and got["scratch_with_flush"] == [4096]
    assert got["flushed_result_ok"]
    assert "simulator" in got["reason"]
    # no garbage collection while a launch is held (a long one outlasted the hold on an H100)
    assert got["gc_inside_interval"] is False and got["gc_after_interval"] is True


def test_a_budget_stops_a_rows_timed_runs_once_spent_but_runs_at_least_one():
    calls = []

    def run():
        calls.append(1)
        time.sleep(0.02)
        timing.record(lambda: 0.001)
    m = measure(run, 10, budget_s=0.05)
    # each run takes at least 20 ms: the 50 ms are spent after the third at the latest (the
    # second, when the host is slow)
    assert 2 <= len(calls) <= 3 and m["kernel_s"]["n"] == len(calls) == m["e2e_s"]["n"]
    calls.clear()
    m = measure(run, 10, budget_s=1e-6)
    assert len(calls) == 1 and m["kernel_s"]["n"] == 1   # one run even when the budget is tiny
    calls.clear()
    m = measure(run, 4, flush_bytes=1 << 20, budget_s=0.03)
    # the plain end-to-end runs repeat as many times as the timed runs that the budget allowed
    assert m["kernel_s"]["n"] == m["e2e_s"]["n"] == len(calls) // 2 < 4


def test_a_backends_caveat_about_an_interval_reaches_the_measurement():
    def run(flag):
        timing.record(lambda: 0.001, caveat=lambda: "the hold timed out" if flag else None)
        timing.record(lambda: 0.002)
    with timing.collect() as iv:
        run(True)
        run(False)
    assert iv.caveats() == {"the hold timed out": 1} and iv.total() == pytest.approx(0.006)
    m = measure(lambda: run(True), 3)
    assert m["caveats"] == {"the hold timed out": 3}
    assert "caveats" not in measure(lambda: run(False), 2)   # nothing to say: no key


def test_opencl_first_use_reads_no_write_only_buffer(pocl, monkeypatch):
    """The touch kernel reads a byte of each buffer argument, which OpenCL forbids on a WRITE_ONLY
    buffer: such a buffer (a plugin may make one) is left out of the touch."""
    import pyopencl as cl
    from refconv.tooling.opencl import _platform
    monkeypatch.setattr(pocl, "_flushes", lambda: True)
    monkeypatch.setattr(pocl, "FIRST_USE", "touch")
    touched = []
    orig = pocl._kernel
    monkeypatch.setattr(pocl, "_kernel", lambda e, src, name, *a: (touched.append(src.count("__global const uchar")),
                                                                   orig(e, src, name, *a))[1])
    e = _platform.env()
    rw = cl.Buffer(e.ctx, cl.mem_flags.READ_WRITE, 16)
    wo = cl.Buffer(e.ctx, cl.mem_flags.WRITE_ONLY, 16)
    pocl.first_use(e.queue, None, (rw, wo, np.int32(3)), {})
    assert touched == [1]                      # one touch kernel, reading the READ_WRITE buffer alone
    pocl.first_use(e.queue, None, (wo,), {})
    assert touched == [1]                      # nothing to touch: no kernel
