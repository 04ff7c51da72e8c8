"""Small host-side helpers shared by the numba_cuda variants."""
from __future__ import annotations

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
    flat[...] = d_out.copy_to_host()[:n]
    return finish(out, flat)


def device_out(out: np.ndarray):
    """A device array of ``out``'s shape and dtype holding ``out``'s contents -- the checker's
    poison -- so that every element the kernel does not write comes back poisoned."""
    return _env.cuda().to_device(np.ascontiguousarray(out))


def copy_back(d_out, out: np.ndarray) -> np.ndarray:
    """Copy a device array from :func:`device_out` back into ``out`` (any layout)."""
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


def flush(stream=0):
    """Overwrite ``refconv.timing.flush_bytes()`` bytes of device memory on ``stream`` (a
    device-to-device copy between two scratch buffers): the next launch finds a cold L2, and its
    start event is reached only after the copy, by when the host has issued the launch.  4 KiB
    under the simulator (its times mean nothing; the path is exercised)."""
    from refconv import timing
    n = timing.flush_bytes()
    if n <= 0:
        return
    if _env.is_sim():
        n = min(n, 4096)
    bufs = _scratch.get(n)
    if bufs is None:
        cuda = _env.cuda()
        _scratch.clear()
        bufs = _scratch[n] = (cuda.device_array(n, np.uint8), cuda.device_array(n, np.uint8))
    bufs[1].copy_to_device(bufs[0], stream=stream)


def launch(configured, *args, stream=0):
    """Launch ``configured(*args)`` (a kernel already given its grid and block, ``k[g, b]`` or
    ``k[g, b, stream]``: then pass the same ``stream=``); inside ``refconv.timing.collect`` the
    launch is preceded by :func:`flush` and bracketed by CUDA events recorded on that stream, and
    their interval recorded (under the simulator too, flagged as simulated: its times mean nothing)."""
    from refconv import timing
    if not timing.active():
        return configured(*args)
    cuda = _env.cuda()
    flush(stream)
    start, end = cuda.event(), cuda.event()
    start.record(stream=stream)
    configured(*args)
    end.record(stream=stream)

    def seconds():
        end.synchronize()
        return start.elapsed_time(end) / 1e3
    name = getattr(getattr(configured, "dispatcher", configured), "__name__", "kernel")
    timing.record(seconds, name, simulated=_env.is_sim())


def bench_copy(nbytes: int):
    """``BenchHooks.copy`` for numba_cuda: one device-to-device copy of ``nbytes`` bytes, timed
    with CUDA events (the buffers are allocated here, outside the timed copy)."""
    from refconv import timing
    cuda = _env.cuda()
    src = cuda.to_device(np.ones(max(1, int(nbytes)), np.uint8))
    dst = cuda.device_array_like(src)

    def run():
        start, end = cuda.event(), cuda.event()
        start.record()
        dst.copy_to_device(src)
        end.record()

        def seconds():
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        timing.record(seconds, "device copy", simulated=_env.is_sim())
    return run


def bench_simulated() -> str | None:
    """``BenchHooks.simulated``: why numba_cuda times mean nothing here (None on a GPU)."""
    if _env.is_sim():
        return "numba_cuda runs on the CUDA simulator here: its kernel times mean nothing (needs a CUDA GPU)"
    return None
