"""Kernel times for ``refconv bench`` on OpenCL: profiling events of each launch, an L2 flush
before a timed launch on the GPU target, the buffers a timed run reuses there
(:data:`REUSE_BUFFERS`), and the backend's ``BenchHooks``."""
from __future__ import annotations

import numpy as np

from . import _platform
from ._buffers import in_buf, out_buf, scratch, upload
from ._build import kernel as _kernel


def _profiled(ev) -> float:
    """Seconds between an event's start and end (the queue has PROFILING_ENABLE)."""
    ev.wait()
    return (ev.profile.end - ev.profile.start) * 1e-9


_scratch: dict = {}


def _flushes() -> bool:
    """Whether the target has an L2 worth flushing before a timed launch: the GPU target only."""
    return _platform.target() == "nvidia"


#: reads every ulong of the buffer (grid-stride; each work-item xors its own words) and writes the
#: one sink word only if a work-item's xor is the sentinel (never, in practice: the write keeps the
#: compiler from dropping the loads)
_TOUCH = """
__kernel void touch(__global const ulong *buf, const ulong n, __global ulong *sink)
{
    ulong acc = 0;
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
        acc ^= buf[i];
    if (acc == 0x9E3779B97F4A7C15UL)
        sink[0] = acc;
}
"""


def flush(queue) -> None:
    """On the nvidia target, read ``refconv.timing.flush_bytes()`` bytes of device memory (a
    grid-stride xor over a scratch buffer on the in-order ``queue``) so that the next kernel finds
    a cold and clean L2: reads evict the lines earlier work left dirty (their write-back happens
    here, not in the timed kernel), where a write-based flush would leave the L2 full of its own
    dirty lines.  CPU targets (PoCL) and Oclgrind are not flushed.  Profiling events time the
    kernel itself, so the host's launch overhead is never in them."""
    import pyopencl as cl
    from refconv import timing
    n = timing.flush_bytes()
    if n <= 0 or not _flushes():
        return
    e = _platform.env()
    key = (id(e.ctx), n)
    if key not in _scratch:
        _scratch.clear()
        buf = scratch(e, n)
        cl.enqueue_fill_buffer(queue, buf, np.uint8(0), 0, n)
        _scratch[key] = (buf, scratch(e, 8))
    buf, sink = _scratch[key]
    words = n // 8
    k = _kernel(e, _TOUCH, "touch", (), "<refconv L2 flush>")
    k(queue, (min(-(-words // 256), 4096) * 256,), (256,), buf, np.uint64(words), sink)


#: what a timed launch does about NVIDIA's OpenCL charging a buffer's first use by a kernel to that
#: kernel's profiling interval: ``"touch"`` launches a one-work-item kernel that reads a byte of
#: every buffer argument (before the flush); ``"warm"`` launches the timed kernel itself once,
#: untimed; None does neither.  The nvidia target only.  None since the inputs of timed runs are
#: reused allocations (:data:`REUSE_BUFFERS`): on those, both steps made the timed kernel slower, not
#: faster (measured by lab/probes/gpu_opencl_buffer_probe.py; numbers in lab/runs/).  The cost the
#: touch was for, a fresh buffer's first use charged to the kernel, is what :data:`REUSE_BUFFERS`
#: now avoids.
FIRST_USE = None

#: whether a timed run on the nvidia target gets its input buffers (``to_device``), its output
#: buffer (``OUT`` / ``output``) and its scratch buffers as the allocations the previous timed run
#: used, inputs and output rewritten from the host (a blocking copy, outside the interval), instead
#: of fresh buffers.
#: NVIDIA's OpenCL charges a fresh buffer's first use to the kernel that makes it (on an H200 the
#: 1x1 cuconv presets ran about 15-25 % slower on fresh buffers than on rewritten or kept ones; the
#: same source built as CUDA ran as fast as the Numba twin); an application keeps its buffers, so
#: reused ones give the kernel's steady-state time.  Checking and untimed calls always get fresh
#: buffers.  (On an H100 the buffers' state moved those rows by less than their scatter: there the
#: launch's scalar arguments were the charge, see ``refconv.backends.opencl.conv2d_best._scalars``.)
REUSE_BUFFERS = True

#: the reused allocations: of the current timed run (``used``), and of the previous one (``prev``:
#: what the current run may take; all of it is dropped once the run asks for an allocation the
#: previous run did not have, so that a bench worker moving to another row holds one row's buffers)
_reuse: dict = {"run": None, "used": {}, "prev": {}, "n": {}}


def _reusing() -> bool:
    from refconv import timing
    return REUSE_BUFFERS and timing.current() is not None and _flushes()


def _allocation(e, role: str, nbytes: int, flags):
    """The timed run's next ``role`` allocation of ``nbytes``: the one the previous timed run used
    in that place (its ``k``-th of that role and size), else a new one."""
    from refconv import timing
    run, st = timing.current(), _reuse
    if st["run"] is not run:
        st.update(run=run, prev=st["used"], used={}, n={})
    kind = (id(e.ctx), role, nbytes)
    i = st["n"].get(kind, 0)
    st["n"][kind] = i + 1
    key = kind + (i,)
    buf = st["prev"].pop(key, None)
    if buf is None:   # this run differs from the previous one (another row): free the rest before allocating
        import pyopencl as cl
        st["prev"].clear()
        buf = cl.Buffer(e.ctx, flags, size=nbytes)
    st["used"][key] = buf
    return buf


def input_buffer(e, a):
    """A read-only device buffer holding a copy of host array ``a`` (``refconv.opencl.to_device``):
    inside a timed run on the nvidia target (:data:`REUSE_BUFFERS`), the allocation the previous
    timed run used for its same-sized ``k``-th input, rewritten; otherwise a fresh buffer."""
    if not _reusing():
        return in_buf(e, a)
    import pyopencl as cl
    a = np.ascontiguousarray(a)
    if a.nbytes == 0:
        a = np.zeros(1, a.dtype)
    buf = _allocation(e, "in", a.nbytes, cl.mem_flags.READ_ONLY)
    upload(e, buf, a)
    return buf


def scratch_buffer(e, nbytes: int):
    """An uninitialised read-write device buffer of ``nbytes`` bytes (``refconv.opencl.scratch``):
    in a timed run on the nvidia target, the allocation the previous timed run used in that place
    (:data:`REUSE_BUFFERS`; its contents are whatever that run left, as uninitialised memory may
    hold); otherwise a fresh one."""
    if not _reusing():
        return scratch(e, nbytes)
    import pyopencl as cl
    return _allocation(e, "scratch", max(4, int(nbytes)), cl.mem_flags.READ_WRITE)


def output_buffer(e, out):
    """``with output_buffer(e, out) as buf:`` the checker's poisoned ``out`` on the device, read
    back at the end (``refconv.opencl.output``): in a timed run on the nvidia target, in the
    allocation the previous timed run's output used (:data:`REUSE_BUFFERS`)."""
    if not _reusing():
        return out_buf(e, out)
    import pyopencl as cl
    return out_buf(e, out, reuse=lambda n: _allocation(e, "out", n, cl.mem_flags.READ_WRITE))


def _touch_source(n: int) -> str:
    params = ", ".join(f"__global const uchar *b{i}" for i in range(n))
    acc = " ^ ".join(f"b{i}[0]" for i in range(n))
    return (f"__kernel void touch_args({params}, __global uchar *sink)\n"
            f"{{ if (get_global_id(0) == 0) sink[0] = {acc}; }}\n")


def first_use(queue, kernel, args, kwargs) -> None:
    """Have the device make its first use of ``args``' buffers outside the timed interval, as
    :data:`FIRST_USE` says (nvidia target; waited for)."""
    if not (FIRST_USE and _flushes()):
        return
    import pyopencl as cl
    if FIRST_USE == "warm":
        kernel(queue, *args, **kwargs).wait()
        return
    # a kernel may not read a WRITE_ONLY buffer (OpenCL 1.2 §5.2.1): those are left untouched
    mems = [a for a in args if isinstance(a, cl.Buffer) and not a.flags & cl.mem_flags.WRITE_ONLY]
    if not mems:
        return
    e = _platform.env()
    sink = _sinks.get(id(e.ctx))
    if sink is None:
        sink = _sinks[id(e.ctx)] = scratch(e, 8)
    k = _kernel(e, _touch_source(len(mems)), "touch_args", (), "<refconv first use>")
    k(queue, (1,), (1,), *mems, sink).wait()


_sinks: dict = {}


def timed(kernel):
    """``timed(k)(queue, global, local, *args)`` launches ``k`` like ``k(queue, ...)``; inside
    ``refconv.timing.collect`` the launch follows its buffers' :func:`first_use` and a
    :func:`flush`, and its profiling interval is recorded (flagged as simulated on Oclgrind, whose times mean nothing)."""
    from refconv import timing
    if not timing.active():
        return kernel

    def launch(queue, *args, **kwargs):
        first_use(queue, kernel, args, kwargs)
        flush(queue)
        ev = kernel(queue, *args, **kwargs)
        timing.record(lambda: _profiled(ev), getattr(kernel, "function_name", "kernel"),
                      simulated=_platform.target() == "oclgrind")
        return ev
    return launch


def bench_copy(nbytes: int):
    """``BenchHooks.copy`` for OpenCL: one buffer-to-buffer copy of ``nbytes`` bytes on the
    device, timed by its profiling event, after the L2 flush when the bench asks for one (the
    per-problem copy floor, as a launch is); buffers allocated here, outside the timed copy."""
    import pyopencl as cl
    from refconv import timing
    e = _platform.env()
    src = in_buf(e, np.ones(max(1, int(nbytes)), np.uint8))
    dst = scratch(e, max(1, int(nbytes)))

    def run():
        flush(e.queue)
        ev = cl.enqueue_copy(e.queue, dst, src, byte_count=max(1, int(nbytes)))
        timing.record(lambda: _profiled(ev), "device copy", simulated=e.target == "oclgrind")
    return run


def bench_simulated() -> str | None:
    """``BenchHooks.simulated``: why OpenCL times mean nothing here (None on a real device).
    PoCL runs on the host CPU: its times are real CPU times, not a GPU's."""
    try:
        t = _platform.target()
    except _platform.OpenCLUnavailable:
        return None
    if t == "oclgrind":
        return "opencl runs on Oclgrind here, a simulator: its kernel times mean nothing"
    return None
