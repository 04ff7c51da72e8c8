"""Peers: the library calls a user would pick instead of a hand-written kernel, timed in the same
``refconv bench`` run.

Each :class:`Peer` is one library call for one op.  ``prepare(problem)`` moves the inputs where the
library wants them (device memory, gray image, float copy: not timed) and returns ``run()``, which
makes the call once and records its interval with :func:`refconv.timing.record`.  On a GPU the
method is the variants' (docs/performance.md): the stream is held busy by a spin kernel while the
host issues the call (:func:`_spin`; an interval whose hold ended too early carries a caveat),
``--flush-bytes`` of device memory are overwritten (cold L2), and CUDA events of torch or CuPy
bracket the call; the torch peers also name the kernels the call launched (``kernels``: the
algorithm cuDNN or cuBLAS picked).  On the CPU, the host clock.  Libraries run at their best:
cuDNN autotunes (``torch.backends.cudnn.benchmark = True``; the bench's untimed warm-up call
picks the algorithm), and TF32 rows are labelled and never the float32 baseline.  ``available()`` says why a peer
cannot run here (library not installed, no CUDA device), and the bench lists it as skipped with
that note.

Peers are timed, not checked against the spec: their semantics are the nearest library call, not
the spec's exact rules (``cv2.filter2D`` rounds and saturates and pads the border; cuDNN computes
in float32 or TF32; the Sobel peers start from a gray image the bench computes for them).

Each op's peers are declared in its record (``OpRecord.peers``: :class:`refconv.specs.peer.PeerCall`,
next to its spec in ``specs/<op>.py``), with the order in which :func:`default_baseline` picks the
ratio column's peer (``OpRecord.baseline``: the first available one).  This module is the generic
machinery: it turns each declaration into a timed :class:`Peer` (:func:`all_peers`), says whether
it can run here, and times it.
"""
from __future__ import annotations

import importlib
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import ops, timing
from .problem import Problem
from .specs.peer import PeerCall


@dataclass(frozen=True)
class Peer:
    name: str
    op: str
    library: str
    device: str                                   # "gpu" or "cpu"
    prepare: Callable[[Problem], Callable[[], None]]
    available: Callable[[], str | None]


# ----------------------------------------------------------------------------- availability

def _module(name: str):
    try:
        return importlib.import_module(name), None
    except Exception as e:  # not installed, or broken (no driver ...)
        return None, f"{name} not importable ({type(e).__name__}: {e})"


def _torch_cuda() -> str | None:
    torch, why = _module("torch")
    if torch is None:
        return why
    if not torch.cuda.is_available():
        return f"torch {torch.__version__} sees no CUDA device"
    return None


def _cupy() -> str | None:
    cp, why = _module("cupy")
    if cp is None:
        return why
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            return "CuPy sees no CUDA device"
    except Exception as e:
        return f"CuPy sees no CUDA device ({type(e).__name__}: {e})"
    return None


# ----------------------------------------------------------------------------- timing helpers

_scratch: dict = {}


def _flush(events_from: str) -> None:
    """The peers' side of :func:`refconv.timing.flush_bytes`: read that many bytes of GPU memory
    (a sum over a scratch buffer) on the current stream before the start event: a cold and clean
    L2, as the variants' backends leave it (a write would leave the L2 full of dirty lines whose
    write-back the timed call would pay), and the GPU busy while the call is issued."""
    n = timing.flush_bytes()
    if n <= 0:
        return
    key = (events_from, n)
    if key not in _scratch:
        _scratch.clear()
        if events_from == "torch":
            import torch
            _scratch[key] = torch.zeros(n // 4, dtype=torch.int32, device="cuda")
        else:
            import cupy as cp
            _scratch[key] = cp.zeros(n // 4, dtype=cp.int32)
    _scratch[key].sum()


#: cycles of the spin kernel a GPU peer's timed call waits behind (about 2-3 ms at 1.4-2 GHz): far
#: longer than any library takes to issue its launches
HOLD_CYCLES = 4_000_000

_SPIN_SRC = r"""
extern "C" __global__ void refconv_spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}
"""


def _spin(events_from: str):
    """Enqueue a one-thread kernel that spins for :data:`HOLD_CYCLES` on the current stream and
    return an event recorded right after it.  This is the peers' stream hold: the device is busy
    while the host issues the timed call, so the start event fires when the spin (and the flush)
    end, not when the host began, as the variants' hold does (the backends' bench hooks).  The hold held
    if the event had not fired yet when the host finished issuing (:func:`_gpu_timed` asks)."""
    if events_from == "torch":
        import torch
        torch.cuda._sleep(HOLD_CYCLES)
        ev = torch.cuda.Event()
        ev.record()
        return ev
    import cupy as cp
    if "spin" not in _scratch:
        _scratch["spin"] = cp.RawKernel(_SPIN_SRC, "refconv_spin")
    _scratch["spin"]((1,), (1,), (np.int64(HOLD_CYCLES),))
    ev = cp.cuda.Event(disable_timing=True)
    ev.record()
    return ev


def _torch_kernels(call: Callable[[], object]) -> list[str]:
    """The names of the CUDA kernels one ``call()`` launches (torch's profiler): what algorithm the
    library picked, e.g. cuDNN's ``implicit_convolve_sgemm`` or a Winograd kernel."""
    import warnings

    import torch
    from torch.profiler import ProfilerActivity, profile
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # the profiler's notes about its cycles
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize()
    cuda = getattr(torch.autograd, "DeviceType", None)
    names = []
    for e in prof.events():
        if cuda is not None and getattr(e, "device_type", None) == cuda.CUDA and e.name not in names:
            names.append(e.name)
    return names


class _GpuRun:
    """A GPU peer's ``run()``: the stream hold (:func:`_spin`), the L2 flush (:func:`_flush`), then
    ``call`` between two device events of torch or CuPy: the method of the variants' intervals.
    ``kernels()`` names what the call launched (torch peers; None where the library says nothing)."""

    def __init__(self, events_from: str, call: Callable[[], object]):
        self.events_from, self.call = events_from, call
        self._kernels: list | None = None

    def __call__(self) -> None:
        if not timing.active():     # a plain call (the bench's end-to-end runs): no hold, no flush, no events
            self.call()
            if self.events_from == "torch":
                import torch
                torch.cuda.synchronize()
            else:
                import cupy as cp
                cp.cuda.get_current_stream().synchronize()
            return
        if self.events_from == "torch":
            import torch
            held = _spin("torch")
            _flush("torch")
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            self.call()
            end.record()
            gave_up = held.query()          # the spin had ended before the host finished issuing
            end.synchronize()
            ms = start.elapsed_time(end)
        else:
            import cupy as cp
            held = _spin("cupy")
            _flush("cupy")
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            self.call()
            end.record()
            gave_up = held.done
            end.synchronize()
            ms = cp.cuda.get_elapsed_time(start, end)
        why = ("the stream hold ended before the call was issued: the interval may hold host time"
               if gave_up else None)
        timing.record(lambda: ms / 1e3, "peer", caveat=lambda: why)

    def kernels(self) -> list[str] | None:
        if self._kernels is None and self.events_from == "torch":
            try:
                self._kernels = _torch_kernels(self.call)
            except Exception as e:  # the profiler is optional: say why instead
                self._kernels = [f"(kernel names unavailable: {type(e).__name__}: {e})"]
        return self._kernels


def _gpu_timed(events_from: str, call: Callable[[], object]) -> Callable[[], None]:
    """``run()`` that holds the stream, flushes L2 and brackets ``call`` with CUDA events of torch
    or CuPy (:class:`_GpuRun`)."""
    return _GpuRun(events_from, call)


def _cpu_timed(call: Callable[[], object]) -> Callable[[], None]:
    def run():
        t0 = time.perf_counter()
        call()
        dt = time.perf_counter() - t0
        timing.record(lambda: dt, "peer")
    return run


# ----------------------------------------------------------------------------- the peers of the records

def _available(call: PeerCall) -> Callable[[], str | None]:
    """Why ``call`` cannot run here (None: it can): a GPU peer needs its runtime to see a CUDA
    device; a CPU peer needs its modules importable."""
    if call.device == "gpu":
        return _torch_cuda if call.runtime == "torch" else _cupy
    return lambda: next((why for why in (_module(m)[1] for m in call.modules) if why), None)


def _timed(call: PeerCall) -> Callable[[Problem], Callable[[], None]]:
    """``prepare(problem)`` of the core's :class:`Peer`: the declaration's untimed preparation,
    its call then timed by device events (GPU) or the host clock (CPU)."""
    if call.device == "gpu":
        return lambda problem: _gpu_timed(call.runtime, call.prepare(problem))
    return lambda problem: _cpu_timed(call.prepare(problem))


def peer_of(op: str, call: PeerCall) -> Peer:
    """The timed :class:`Peer` of op ``op`` that the declaration ``call`` describes."""
    return Peer(call.name, op, call.library, call.device, _timed(call), _available(call))


def all_peers() -> tuple[Peer, ...]:
    """Every registered op's peers (its record's ``peers``), ops in listing order."""
    return tuple(peer_of(rec.name, c) for rec in ops.records() for c in rec.peers)


def names() -> list[str]:
    return sorted({p.name for p in all_peers()})


def named(op: str, which: str = "auto") -> list[Peer]:
    """The peers of ``op`` that ``which`` (``--peers``) selects, without asking whether they can run
    here: every one for ``auto`` and ``all``, none for ``none``, else those named in the
    comma-separated list; an unknown name raises ``UsageError`` naming the accepted ones."""
    mine = [p for p in all_peers() if p.op == op]
    if which == "none":
        return []
    if which not in ("auto", "all"):
        wanted = [w.strip() for w in which.split(",") if w.strip()]
        unknown = [w for w in wanted if w not in names()]
        if unknown or not wanted:
            from .errors import UsageError
            raise UsageError(f"--peers {which!r}: unknown peer(s) {unknown}; accepted: auto, all, none or "
                             f"names from {', '.join(names())}")
        mine = [p for p in mine if p.name in wanted]
    return mine


def for_op(op: str, which: str = "auto") -> list[tuple[Peer, str | None]]:
    """The peers of ``op`` to list, each with None or the reason it is skipped.  ``which``:
    ``auto`` (the GPU peers; the CPU peers too when no GPU peer of the op can run), ``all``,
    ``none``, or a comma-separated list of peer names."""
    out = [(p, p.available()) for p in named(op, which)]
    if which == "auto" and any(p.device == "gpu" and why is None for p, why in out):
        out = [(p, why) if p.device == "gpu" else (p, "a GPU peer runs instead (--peers all to add it)")
               for p, why in out]
    return out


def default_baseline(op: str, listed: list[tuple[Peer, str | None]]) -> str:
    """The first available peer of the op record's ``baseline`` among ``listed``, else ``spec``."""
    ok = {p.name for p, why in listed if why is None}
    for name in (ops.get(op).baseline if ops.has(op) else ()):
        if name in ok:
            return name
    return "spec"


def release() -> None:
    """Hand the GPU memory that the peers' libraries keep cached back to the driver (torch's
    caching allocator, CuPy's memory pool), so that the next problem's variants can allocate it:
    after kron-240's peers the two pools held 53 GB of an 80 GB H100 and kron-260's single
    launches ran out of memory.  Touches only libraries already imported."""
    import sys
    torch, cp = sys.modules.get("torch"), sys.modules.get("cupy")
    try:
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        if cp is not None:
            cp.get_default_memory_pool().free_all_blocks()
            cp.get_default_pinned_memory_pool().free_all_blocks()
    except Exception:  # a broken driver must not stop the bench; the next allocation will say so
        pass


def gpu_empty() -> Callable[[], None]:
    """The peers' nearest to an empty kernel (torch: zeroing one element), timed as their calls are."""
    import torch
    t = torch.ones(1, dtype=torch.uint8, device="cuda")
    return _gpu_timed("torch", t.zero_)


def gpu_copy(nbytes: int) -> Callable[[], None] | None:
    """A device-to-device copy on the peers' GPU (torch), for their roofline; None without one."""
    if _torch_cuda() is not None:
        return None
    import torch
    src = torch.ones(max(1, int(nbytes)), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    return _gpu_timed("torch", lambda: dst.copy_(src))
