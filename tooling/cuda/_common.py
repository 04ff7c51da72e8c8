"""Small host-side helpers shared by the numba_cuda variants."""
from __future__ import annotations

import contextlib
import functools
import gc

import numpy as np

from . import _env


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def out_flat(out: np.ndarray) -> np.ndarray:
    """A flat C-order view of the checker's output buffer (a copy only if it is not contiguous)."""
    return out.reshape(-1) if out.flags.c_contiguous else np.ascontiguousarray(out).reshape(-1)


def finish(out: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """Write ``flat`` back into ``out`` when :func:`out_flat` had to copy."""
    if not np.shares_memory(out, flat):
        out[...] = flat.reshape(out.shape)
    return out


def to_device_poisoned(out: np.ndarray, pad_to: int = 1):
    """Copy the poisoned output buffer to the device (padded to a multiple of ``pad_to``
    elements so that it may be viewed as wider words); returns ``(device_array, n)``."""
    cuda = _env.cuda()
    flat = out_flat(out)
    n = flat.size
    m = cdiv(max(n, 1), pad_to) * pad_to
    if m != n:
        host = np.empty(m, flat.dtype)
        host[:n] = flat
        host[n:] = 0
    else:
        host = np.ascontiguousarray(flat)
    return cuda.to_device(host), n


def from_device(d_out, n: int, out: np.ndarray) -> np.ndarray:
    """Copy the first ``n`` elements of the flat device buffer ``d_out`` (from
    :func:`to_device_poisoned`) back into ``out``."""
    flat = out_flat(out)
    # straight into the caller's buffer: no host temporary of the output's size (kron's is GBs)
    (d_out if d_out.size == n else d_out[:n]).copy_to_host(flat)
    return finish(out, flat)


def device_out(out: np.ndarray):
    """A device array of ``out``'s shape and dtype holding ``out``'s contents -- the checker's
    poison -- so that every element the kernel does not write comes back poisoned."""
    return _env.cuda().to_device(np.ascontiguousarray(out))


def copy_back(d_out, out: np.ndarray) -> np.ndarray:
    """Copy a device array from :func:`device_out` back into ``out`` (any layout)."""
    if out.flags.c_contiguous and d_out.shape == out.shape:
        d_out.copy_to_host(out)            # straight into the caller's buffer
        return out
    host = d_out.copy_to_host()
    out[...] = host.reshape(out.shape)
    return out


def fits(problem, *, threads: int, grid=(1,), shared: int = 0, const: int = 0, device_bytes: int = 0):
    """Why one launch configuration does not fit the device the variant runs on, or None: a block
    of ``threads`` threads, a ``grid`` of blocks, ``shared`` bytes of static shared memory,
    ``const`` bytes of constant memory and ``device_bytes`` of device buffers, against
    :func:`_env.limits` (the GPU's own limits, or the simulator's stand-in for them)."""
    lim = _env.limits()
    if threads > lim["max_threads_per_block"]:
        return f"block of {threads} threads > {lim['max_threads_per_block']}"
    for axis, (g, gmax) in enumerate(zip(grid, lim["max_grid"])):
        if g > gmax:
            return f"gridDim.{'xyz'[axis]} = {g} > {gmax}"
    if shared > lim["max_shared_bytes"]:
        return f"{shared} bytes of shared memory > {lim['max_shared_bytes']}"
    if const > lim["max_const_bytes"]:
        return f"{const} bytes of constant memory > {lim['max_const_bytes']}"
    mem = lim.get("mem_bytes")
    if mem and device_bytes > 0.9 * mem:
        return f"{device_bytes / 2**30:.1f} GiB of device buffers > 90% of {mem / 2**30:.1f} GiB device memory"
    return None


def io_bytes(problem, out_elements: int, out_itemsize: int) -> int:
    """Bytes of the problem's inputs plus an output of ``out_elements`` elements."""
    return problem.input_nbytes() + out_elements * out_itemsize


_scratch: dict = {}

#: the value whose appearance as a flush's xor makes it write its one word (never, in practice:
#: the write only keeps the compiler from dropping the loads)
_FLUSH_SENTINEL = 0x9E3779B97F4A7C15


@functools.lru_cache(maxsize=None)
def _flush_kernel(mode: str):
    """``touch(buf, sink)``: reads every uint64 of ``buf`` (grid-stride; each thread xors its own
    words), writes ``sink[0]`` only if a thread's xor is the sentinel.  One per mode (GPU or
    simulator)."""
    cuda = _env.cuda()
    # defined in a namespace of its own: the simulator runs a kernel with ``cuda`` swapped in its
    # globals, which a closure variable would escape
    ns = {"cuda": cuda, "np": np, "SENTINEL": np.uint64(_FLUSH_SENTINEL)}
    exec(_TOUCH_SRC, ns)
    return cuda.jit(ns["touch"])


_TOUCH_SRC = """
def touch(buf, sink):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    acc = np.uint64(0)
    while i < buf.size:
        acc ^= buf[i]
        i += step
    if acc == SENTINEL:
        sink[0] = acc
"""


_flush_warm: set = set()


def _warm_flush() -> None:
    """Compile the flush kernel (running it once on one word) before the first stream hold that
    flushes: compiled inside a hold, the first timed run of a process outlasted the hold's patience
    (one interval with the hold's caveat on the first Numba row of each problem)."""
    mode = "sim" if _env.is_sim() else "gpu"
    if mode in _flush_warm:
        return
    cuda = _env.cuda()
    _flush_kernel(mode)[1, 1](cuda.to_device(np.zeros(1, np.uint64)), cuda.device_array(1, np.uint64))
    cuda.synchronize()
    _flush_warm.add(mode)


def flush(stream=0):
    """Read ``refconv.timing.flush_bytes()`` bytes of device memory on ``stream`` (a grid-stride
    xor of a scratch buffer, :func:`_flush_kernel`): the next launch finds a cold and *clean* L2
    (reads evict the lines earlier work left dirty, and their write-back happens here, not in the
    timed kernel; a write-based flush would leave the L2 full of its own dirty lines), and its
    start event is reached only after the read, by when the host has issued the launch.  4 KiB
    under the simulator (its times mean nothing; the path is exercised)."""
    from refconv import timing
    n = timing.flush_bytes()
    if n <= 0:
        return
    sim = _env.is_sim()
    if sim:
        n = min(n, 4096)
    bufs = _scratch.get(n)
    if bufs is None:
        cuda = _env.cuda()
        _scratch.clear()
        bufs = _scratch[n] = (cuda.to_device(np.zeros(max(n // 8, 1), np.uint64)),
                              cuda.device_array(1, np.uint64))
    blocks, threads = (1, 32) if sim else (min(cdiv(bufs[0].size, 256), 4096), 256)
    _flush_kernel("sim" if sim else "gpu")[blocks, threads, stream](*bufs)


class _Hold:
    """Holds a stream while the host issues the work to be timed, as nvbench's blocking kernel
    does: a one-thread kernel spins until the host writes its token to a mapped (host) word.
    Timed work is queued behind it (flush, start event, kernel, end event), then the host
    releases it, so the device runs them back to back and the interval between the events holds
    the kernel alone, not the host's launch overhead (numba-cuda's Python-side dispatch and
    argument marshalling take tens of microseconds, longer than many kernels).  Tokens grow, so
    a hold released late can never catch a later token.  The spin gives up after about
    ``LIMIT`` polls, each after a one-microsecond sleep (the interval stays correct, the run only slower), so a
    device that cannot see the host's write never hangs.  A hold that gives up writes its token
    into ``missed`` (a mapped ring of ``RING`` slots), so the interval behind it can say that it
    may hold host time (:meth:`gave_up`, reported by the bench as a caveat)."""

    LIMIT = 20000
    RING = 1 << 16

    def __init__(self):
        cuda = _env.cuda()
        from numba import int64
        load = _volatile_load()
        self.flag = cuda.mapped_array(1, dtype=np.int64)
        self.flag[0] = 0
        self.missed = cuda.mapped_array(self.RING, dtype=np.int64)
        self.missed[:] = 0
        self.token = 0
        ring = self.RING

        @cuda.jit("void(int64[::1], int64[::1], int64, int64)")
        def refconv_hold(flag, missed, token, limit):
            i = int64(0)
            while load(flag) < token and i < limit:
                cuda.nanosleep(1000)
                i += 1
            if i >= limit:
                missed[token % ring] = token
        self.kernel = refconv_hold

    def hold(self, stream=0) -> int:
        self.token += 1
        self.kernel[1, 1, stream](self.flag, self.missed, self.token, self.LIMIT)
        return self.token

    def release(self, token: int) -> None:
        self.flag[0] = token

    def gave_up(self, token: int) -> bool:
        """Whether the hold of ``token`` stopped waiting before the host released it (ask once the
        stream has passed it)."""
        return int(self.missed[token % self.RING]) == token


def _volatile_load():
    """A device function ``load(a) -> a[0]`` for an int64 array, compiled to
    ``ld.volatile.global.u64`` marked as having side effects: read from memory on every call
    (never hoisted out of a loop, never served by L1), so a kernel sees the host's writes to
    mapped memory."""
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def load(typingctx, array):
        if not (isinstance(array, types.Array) and array.dtype == types.int64):
            return None

        def codegen(context, builder, sig, args):
            data = context.make_array(sig.args[0])(context, builder, args[0]).data
            fnty = ir.FunctionType(ir.IntType(64), [data.type])
            asm = ir.InlineAsm(fnty, "ld.volatile.global.u64 $0, [$1];", "=l,l", side_effect=True)
            return builder.call(asm, [data])
        return types.int64(array), codegen
    return load


@functools.lru_cache(maxsize=None)
def _hold() -> _Hold:
    return _Hold()


@contextlib.contextmanager
def _interval(label: str, stream=0, flush_first: bool = True):
    """Record the device time of the work issued inside the block as one interval of
    ``refconv.timing``: on a GPU the stream is held (:class:`_Hold`) and, with ``flush_first``,
    flushed (:func:`flush`) before the start event, and released after the end event, so the
    interval is the work's own, from a cold L2, without the host's issue overhead."""
    from refconv import timing
    cuda = _env.cuda()
    sim = _env.is_sim()
    if flush_first and timing.flush_bytes() > 0:
        _warm_flush()                       # before the hold: a compile inside it outlasts it
    token = None if sim else _hold().hold(stream)
    # no garbage collection while the stream is held: a long collection (many live objects in a
    # run of thousands of launches) outlasted the hold's patience, and the host's time leaked
    # into the interval
    collecting = gc.isenabled()
    gc.disable()
    try:
        if flush_first:
            flush(stream)
        start, end = cuda.event(), cuda.event()
        start.record(stream=stream)
        yield
        end.record(stream=stream)
    finally:
        if token is not None:
            _hold().release(token)
        if collecting:
            gc.enable()

    def seconds():
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    def caveat():
        if token is not None and _hold().gave_up(token):
            return "the stream hold timed out before the launch was issued: the interval holds host time"
        return None
    timing.record(seconds, label, simulated=sim, caveat=caveat)


def launch(configured, *args, stream=0):
    """Launch ``configured(*args)`` (a kernel already given its grid and block, ``k[g, b]`` or
    ``k[g, b, stream]``: then pass the same ``stream=``); inside ``refconv.timing.collect`` the
    launch is bracketed by CUDA events recorded on that stream and their interval recorded (under
    the simulator too, flagged as simulated: its times mean nothing).  On a GPU the stream is
    first held (:class:`_Hold`) and flushed (:func:`flush`), so the interval is the kernel's own,
    from a cold L2, without the host's launch overhead."""
    from refconv import timing
    if not timing.active():
        return configured(*args)
    name = getattr(getattr(configured, "dispatcher", configured), "__name__", "kernel")
    with _interval(name, stream):
        configured(*args)


def bench_copy(nbytes: int):
    """``BenchHooks.copy`` for numba_cuda: one device-to-device copy of ``nbytes`` bytes, timed
    with CUDA events as a launch is (stream hold; the L2 flush when the bench asks for one: the
    per-problem copy floor, not the bandwidth copy); the buffers are allocated here, outside."""
    cuda = _env.cuda()
    src = cuda.to_device(np.ones(max(1, int(nbytes)), np.uint8))
    dst = cuda.device_array_like(src)

    def run():
        with _interval("device copy"):
            dst.copy_to_device(src)
    return run


_empty_kernel = None


def bench_launch():
    """``BenchHooks.launch`` for numba_cuda: an empty one-thread kernel launched by :func:`launch`,
    the variants' timed path (stream hold, flush, CUDA events)."""
    global _empty_kernel
    cuda = _env.cuda()
    if _empty_kernel is None:
        @cuda.jit
        def empty():
            pass
        _empty_kernel = empty

    def run():
        launch(_empty_kernel[1, 1])
        cuda.synchronize()
    return run


def bench_simulated() -> str | None:
    """``BenchHooks.simulated``: why numba_cuda times mean nothing here (None on a GPU)."""
    if _env.is_sim():
        return "numba_cuda runs on the CUDA simulator here: its kernel times mean nothing (needs a CUDA GPU)"
    return None


def sim_work(threads: int, blocks: int, steps: int = 0, barriers: int = 0) -> float:
    """The work units (:mod:`refconv.cost`) of one simulated launch of ``blocks`` blocks of
    ``threads`` threads doing ``steps`` loop steps and ``barriers`` barrier waits in all (summed
    over the threads).  Measured under the CUDA simulator (a unit is a few microseconds of
    CPU): starting a thread costs about 4 steps, and a barrier wait 4 · (1 + threads/128) steps,
    since the scheduler's cost of a barrier grows with the block (``block_per_row`` at 512 threads:
    15 s on a 40 x 40 matrix, 0.2 s at 32 threads)."""
    return 4.0 * blocks * threads + steps + 4.0 * (1 + threads / 128) * barriers
