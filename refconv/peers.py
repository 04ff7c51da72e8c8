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

Per op, on a GPU: cuDNN through ``torch.nn.functional.conv2d`` with TF32 on and off, CuPy
(``cupyx.scipy.ndimage.correlate``, ``cupyx.scipy.ndimage.sobel``, ``cupy.kron``), cuBLAS
(``torch.mv``), ``torch.kron``; on the CPU: ``cv2.filter2D``, ``cv2.Sobel``, SciPy
(``scipy.ndimage.correlate``, ``scipy.ndimage.sobel``), ``numpy.kron``, NumPy matvec, and
``torch.nn.functional.conv2d`` on the CPU.  :func:`default_baseline` picks the ratio column's peer
per op: the first available of :data:`BASELINE_ORDER`.
"""
from __future__ import annotations

import importlib
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import timing
from .problem import Problem


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


def _cpu(mod: str) -> Callable[[], str | None]:
    return lambda: _module(mod)[1]


# ----------------------------------------------------------------------------- timing helpers

_scratch: dict = {}


def _flush(events_from: str) -> None:
    """The peers' side of :func:`refconv.timing.flush_bytes`: zero that many bytes of GPU memory
    on the current stream before the start event (cold L2, GPU busy while the call is issued)."""
    n = timing.flush_bytes()
    if n <= 0:
        return
    key = (events_from, n)
    if key not in _scratch:
        _scratch.clear()
        if events_from == "torch":
            import torch
            _scratch[key] = torch.empty(n, dtype=torch.uint8, device="cuda")
        else:
            import cupy as cp
            _scratch[key] = cp.empty(n, dtype=cp.uint8)
    buf = _scratch[key]
    if events_from == "torch":
        buf.zero_()
    else:
        buf.fill(0)


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
    end, not when the host began, as the variants' hold does (numba_cuda, OpenCL).  The hold held
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


def gray(image: np.ndarray) -> np.ndarray:
    """float32 gray image the Sobel peers start from: ``(0.299R + 0.587G) + 0.114B`` for 3/4 channels."""
    if image.ndim == 2:
        return image.astype(np.float32)
    f = image.astype(np.float32)
    return (np.float32(0.299) * f[..., 0] + np.float32(0.587) * f[..., 1]) + np.float32(0.114) * f[..., 2]


def _planes(problem: Problem):
    """filter2d image as a list of 2-D planes (planar channels)."""
    img = problem.inputs["image"]
    return [img] if img.ndim == 2 else list(img)


# ----------------------------------------------------------------------------- prepare functions

def _cuda_tensor(a, dtype=None):
    """A CUDA tensor holding a copy of the (read-only) input array ``a``."""
    import torch
    return torch.from_numpy(np.array(a, dtype=dtype)).to("cuda")


def _cudnn(tf32: bool, op: str):
    def prepare(problem: Problem):
        import torch
        import torch.nn.functional as F
        if op == "filter2d":
            img = problem.inputs["image"]
            x = _cuda_tensor(np.asarray(img, np.float32).reshape((1, -1) + img.shape[-2:]))
            w = _cuda_tensor(problem.inputs["weights"], np.float32)
            w = w.reshape(1, 1, *w.shape).repeat(x.shape[1], 1, 1, 1)
            kw = {"groups": x.shape[1]}
        else:
            x = _cuda_tensor(problem.inputs["x"])
            w = _cuda_tensor(problem.inputs["w"])
            kw = {k: problem.option(k) for k in ("stride", "padding", "dilation")}
            kw["groups"] = problem.dims["groups"]
            if "bias" in problem.inputs:
                kw["bias"] = _cuda_tensor(problem.inputs["bias"])

        def call():
            saved = torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark
            torch.backends.cudnn.allow_tf32 = tf32
            torch.backends.cudnn.benchmark = True      # autotuned: the bench's warm-up call picks the algorithm
            try:
                F.conv2d(x, w, **kw)
            finally:
                torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark = saved
        return _gpu_timed("torch", call)
    return prepare


def _cupy_correlate(problem):
    import cupy as cp
    import cupyx.scipy.ndimage as nd
    planes = [cp.asarray(p) for p in _planes(problem)]
    w = cp.asarray(problem.inputs["weights"])
    return _gpu_timed("cupy", lambda: [nd.correlate(p, w, mode="constant") for p in planes])


def _cupy_sobel(problem):
    import cupy as cp
    import cupyx.scipy.ndimage as nd
    g = cp.asarray(gray(problem.inputs["image"]))
    return _gpu_timed("cupy", lambda: cp.abs(nd.sobel(g, axis=1)) + cp.abs(nd.sobel(g, axis=0)))


def _cublas_mv(problem):
    import torch
    m, v = _cuda_tensor(problem.inputs["m"]), _cuda_tensor(problem.inputs["v"])
    return _gpu_timed("torch", lambda: torch.mv(m, v))


def _out_fits_gpu(nbytes: int, free: int | None = None) -> None:
    """Raise ``MemoryError`` when a result of ``nbytes`` does not fit the GPU's free memory."""
    if free is None:
        import torch
        free, _ = torch.cuda.mem_get_info()
    if nbytes > free:
        raise MemoryError(f"output of {nbytes / 1e9:.1f} GB > {free / 1e9:.1f} GB free on the GPU")


def _torch_kron(problem):
    import torch
    a, b = problem.inputs["a"], problem.inputs["b"]
    _out_fits_gpu(a.size * b.size * a.itemsize)
    ta, tb = _cuda_tensor(a), _cuda_tensor(b)
    return _gpu_timed("torch", lambda: torch.kron(ta, tb))


def _cupy_kron(problem):
    import cupy as cp
    a, b = problem.inputs["a"], problem.inputs["b"]
    _out_fits_gpu(a.size * b.size * a.itemsize, cp.cuda.runtime.memGetInfo()[0])
    ca, cb = cp.asarray(a), cp.asarray(b)
    return _gpu_timed("cupy", lambda: cp.kron(ca, cb))


def _cv2_filter2d(problem):
    import cv2
    planes = [np.ascontiguousarray(p) for p in _planes(problem)]
    w = np.asarray(problem.inputs["weights"], np.float32)
    return _cpu_timed(lambda: [cv2.filter2D(p, -1, w, borderType=cv2.BORDER_CONSTANT) for p in planes])


def _scipy_correlate(problem):
    import scipy.ndimage as nd
    planes = _planes(problem)
    w = np.asarray(problem.inputs["weights"])
    return _cpu_timed(lambda: [nd.correlate(p, w, mode="constant") for p in planes])


def _cv2_sobel(problem):
    import cv2
    g = np.clip(gray(problem.inputs["image"]), 0, 255).astype(np.uint8)

    def call():
        gx = cv2.convertScaleAbs(cv2.Sobel(g, cv2.CV_16S, 1, 0))
        gy = cv2.convertScaleAbs(cv2.Sobel(g, cv2.CV_16S, 0, 1))
        return cv2.add(gx, gy)
    return _cpu_timed(call)


def _scipy_sobel(problem):
    import scipy.ndimage as nd
    g = gray(problem.inputs["image"])
    return _cpu_timed(lambda: np.abs(nd.sobel(g, axis=1)) + np.abs(nd.sobel(g, axis=0)))


def _numpy_matvec(problem):
    m, v = problem.inputs["m"], problem.inputs["v"]
    return _cpu_timed(lambda: m @ v)


def _numpy_kron(problem):
    a, b = problem.inputs["a"], problem.inputs["b"]
    return _cpu_timed(lambda: np.kron(a, b))


def _torch_cpu_conv2d(problem):
    import torch
    import torch.nn.functional as F
    x, w = torch.from_numpy(np.array(problem.inputs["x"])), torch.from_numpy(np.array(problem.inputs["w"]))
    kw = {k: problem.option(k) for k in ("stride", "padding", "dilation")}
    kw["groups"] = problem.dims["groups"]
    if "bias" in problem.inputs:
        kw["bias"] = torch.from_numpy(np.array(problem.inputs["bias"]))
    return _cpu_timed(lambda: F.conv2d(x, w, **kw))


PEERS: tuple[Peer, ...] = (
    Peer("cupy_correlate", "filter2d", "cupyx.scipy.ndimage.correlate", "gpu", _cupy_correlate, _cupy),
    Peer("cudnn_fp32", "filter2d", "torch.nn.functional.conv2d (cuDNN autotuned, TF32 off), float32 image", "gpu",
         _cudnn(False, "filter2d"), _torch_cuda),
    Peer("cudnn_tf32", "filter2d", "torch.nn.functional.conv2d (cuDNN autotuned, TF32 on), float32 image", "gpu",
         _cudnn(True, "filter2d"), _torch_cuda),
    Peer("cv2_filter2D", "filter2d", "cv2.filter2D", "cpu", _cv2_filter2d, _cpu("cv2")),
    Peer("scipy_correlate", "filter2d", "scipy.ndimage.correlate", "cpu", _scipy_correlate, _cpu("scipy.ndimage")),
    Peer("cupy_sobel", "sobel", "cupyx.scipy.ndimage.sobel (x and y, |gx|+|gy|, of the gray image)", "gpu",
         _cupy_sobel, _cupy),
    Peer("cv2_Sobel", "sobel", "cv2.Sobel (x and y, |gx|+|gy|, of the gray image)", "cpu", _cv2_sobel, _cpu("cv2")),
    Peer("scipy_sobel", "sobel", "scipy.ndimage.sobel (x and y, |gx|+|gy|, of the gray image)", "cpu", _scipy_sobel,
         _cpu("scipy.ndimage")),
    Peer("cublas_mv", "matvec", "torch.mv (cuBLAS)", "gpu", _cublas_mv, _torch_cuda),
    Peer("numpy_matvec", "matvec", "numpy m @ v", "cpu", _numpy_matvec, lambda: None),
    Peer("torch_kron", "kron", "torch.kron", "gpu", _torch_kron, _torch_cuda),
    Peer("cupy_kron", "kron", "cupy.kron", "gpu", _cupy_kron, _cupy),
    Peer("numpy_kron", "kron", "numpy.kron", "cpu", _numpy_kron, lambda: None),
    Peer("cudnn_fp32", "conv2d", "torch.nn.functional.conv2d (cuDNN autotuned, TF32 off)", "gpu", _cudnn(False, "conv2d"),
         _torch_cuda),
    Peer("cudnn_tf32", "conv2d", "torch.nn.functional.conv2d (cuDNN autotuned, TF32 on)", "gpu", _cudnn(True, "conv2d"),
         _torch_cuda),
    Peer("torch_cpu_conv2d", "conv2d", "torch.nn.functional.conv2d on the CPU", "cpu", _torch_cpu_conv2d,
         _cpu("torch")),
)

#: the ratio column's default peer per op: the first available one
BASELINE_ORDER = {
    "filter2d": ("cupy_correlate", "cv2_filter2D", "scipy_correlate"),
    "sobel": ("cupy_sobel", "cv2_Sobel", "scipy_sobel"),
    "matvec": ("cublas_mv", "numpy_matvec"),
    "kron": ("torch_kron", "cupy_kron", "numpy_kron"),
    "conv2d": ("cudnn_fp32", "torch_cpu_conv2d"),
}


def names() -> list[str]:
    return sorted({p.name for p in PEERS})


def for_op(op: str, which: str = "auto") -> list[tuple[Peer, str | None]]:
    """The peers of ``op`` to list, each with None or the reason it is skipped.  ``which``:
    ``auto`` (the GPU peers; the CPU peers too when no GPU peer of the op can run), ``all``,
    ``none``, or a comma-separated list of peer names."""
    mine = [p for p in PEERS if p.op == op]
    if which == "none":
        return []
    if which not in ("auto", "all"):
        wanted = [w.strip() for w in which.split(",") if w.strip()]
        unknown = [w for w in wanted if w not in names()]
        if unknown:
            from .errors import UsageError
            raise UsageError(f"--peers {which!r}: unknown peer(s) {unknown}; accepted: auto, all, none or "
                             f"names from {', '.join(names())}")
        mine = [p for p in mine if p.name in wanted]
    out = [(p, p.available()) for p in mine]
    if which == "auto" and any(p.device == "gpu" and why is None for p, why in out):
        out = [(p, why) if p.device == "gpu" else (p, "a GPU peer runs instead (--peers all to add it)")
               for p, why in out]
    return out


def default_baseline(op: str, listed: list[tuple[Peer, str | None]]) -> str:
    """The first available peer of :data:`BASELINE_ORDER` among ``listed``, else ``spec``."""
    ok = {p.name for p, why in listed if why is None}
    for name in BASELINE_ORDER.get(op, ()):
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


def gpu_copy(nbytes: int) -> Callable[[], None] | None:
    """A device-to-device copy on the peers' GPU (torch), for their roofline; None without one."""
    if _torch_cuda() is not None:
        return None
    import torch
    src = torch.ones(max(1, int(nbytes)), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    return _gpu_timed("torch", lambda: dst.copy_(src))
